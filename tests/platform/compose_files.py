"""Reading the deployment's compose files as `docker compose` would, for the tests.

Validation against the Compose Specification's schema is check-jsonschema's (the schema it ships,
run by `validate`). Variable interpolation is compose's own small language, read here only as
far as the files use it: `${NAME}`, `${NAME:-default}`, `${NAME:?message}` (refused when unset
or empty) and `$$` for a literal `$`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
MAIN_FILE = ROOT / "docker-compose.yml"
WORKER_HOST_FILE = ROOT / "platform" / "compose" / "worker-host.yml"
APP_SERVICES = ("web", "worker", "beat")

_REFERENCE = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:-|:\?)(?P<arg>[^}]*))?\}")


@dataclass(frozen=True)
class Reference:
    name: str
    op: str  # "" (plain), ":-" (default) or ":?" (required)
    arg: str


class MissingVariable(Exception):
    """A `${NAME:?message}` whose variable is unset: compose refuses to start, printing the message."""


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())  # YAML merge keys (`<<`) resolved, as compose does
    assert isinstance(data, dict)
    return data


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    """The Compose Specification's JSON schema, as check-jsonschema ships it, against the file."""
    argv = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def references(value: str) -> Iterator[Reference]:
    for match in _REFERENCE.finditer(value):
        if match.group("name"):
            yield Reference(match.group("name"), match.group("op") or "", match.group("arg") or "")


def strings(node: Any) -> Iterator[str]:
    """Every string of a loaded file, keys and values (where interpolation may happen)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from strings(key)
            yield from strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from strings(item)


def interpolate(value: str, variables: Mapping[str, str]) -> str:
    def substitute(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name, op, arg = match.group("name"), match.group("op"), match.group("arg")
        given = variables.get(name, "")
        if op == ":?" and not given:
            raise MissingVariable(f"{name}: {arg}")
        if op == ":-" and not given:
            return str(arg)
        return given

    return _REFERENCE.sub(substitute, value)


def service_environment(service: Mapping[str, Any], variables: Mapping[str, str]) -> dict[str, str]:
    environment = service.get("environment") or {}
    assert isinstance(environment, dict), "environment as a mapping, so services can share it"
    return {key: interpolate(str(value), variables) for key, value in environment.items()}

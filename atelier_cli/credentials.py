"""Where the server's address and the personal access token are kept.

`atelier login` writes them to $XDG_CONFIG_HOME/atelier/config.json (~/.config by
default), readable by the owner only: the token acts as its owner. ATELIER_URL and
ATELIER_TOKEN override the file, each on its own, so a CI job needs no file at all.

The token travels in every request's Authorization header, so an address without a
scheme means https, and login takes plain http only to this machine (loopback) unless
told --insecure.
"""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from atelier_cli.errors import CliError, InsecureAddress, NotLoggedIn
from atelier_cli.exit_status import ExitStatus

DEFAULT_URL = "http://localhost:8000"
API_PREFIX = "/api/v1"


@dataclass(frozen=True)
class Credentials:
    url: str
    token: str


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "atelier" / "config.json"


def normalize_url(text: str) -> str:
    """The server's base address as people type it: a missing scheme means https, and a
    pasted API address (…/api/v1) or trailing slash is trimmed."""
    url = text.strip()
    if "://" not in url:
        url = "https://" + url
    url = url.rstrip("/")
    if url.endswith(API_PREFIX):
        url = url[: -len(API_PREFIX)]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CliError(f"{text!r} is not a server address; give one like {DEFAULT_URL}.", exit_status=ExitStatus.USAGE)
    return url


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine: localhost (RFC 6761), 127.0.0.0/8 or ::1.
    Decided here rather than by `ipaddress`'s is_loopback, whose answer for
    ::ffff:127.0.0.1 differs between Python versions."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.IPv4Network("127.0.0.0/8")
    return address == ipaddress.IPv6Address("::1")


def refuse_plain_http(url: str, *, insecure: bool) -> None:
    """Refuses plain http to another machine, where the token would cross the network
    readable, unless the person said --insecure."""
    parts = urlsplit(url)
    if parts.scheme == "http" and not insecure and not is_loopback(parts.hostname or ""):
        raise InsecureAddress(url, urlunsplit(parts._replace(scheme="https")))


def _saved() -> dict[str, str]:
    path = config_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        message = f"Could not read {path} ({error}); run `atelier login` again."
        raise CliError(message, exit_status=ExitStatus.LOCAL_FILES) from error
    return {key: value for key, value in data.items() if isinstance(value, str)} if isinstance(data, dict) else {}


def saved_url() -> str | None:
    return os.environ.get("ATELIER_URL") or _saved().get("url")


def credentials_load() -> Credentials:
    saved = _saved()
    url = os.environ.get("ATELIER_URL") or saved.get("url")
    token = os.environ.get("ATELIER_TOKEN") or saved.get("token")
    if not url or not token:
        raise NotLoggedIn()
    return Credentials(url=normalize_url(url), token=token.strip())


def credentials_save(credentials: Credentials) -> Path:
    path = config_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Created 0600, and narrowed if an older file was wider, before the token is written.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump({"url": credentials.url, "token": credentials.token}, handle, indent=2)
        handle.write("\n")
    return path

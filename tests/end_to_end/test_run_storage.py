"""The same run, end to end (daphne, a Celery worker and beat, a gVisor sandbox, the scripted
model), on local storage and on S3 (a real S3-compatible server, SeaweedFS): a person sees the
same files, with previews, downloads the same bytes through the artifact origin and through the
API (the `atelier` command, sha256 verified), and on S3 every file is an object in the bucket."""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from atelier_cli.api_client import ApiClient
from atelier_cli.credentials import Credentials
from atelier_cli.downloads import ArtifactDownloader
from creations.artifacts.origin import grant_sign
from creations.models import Artifact, RunSnapshot, RunStatus
from creations.runs.services import creation_delete, run_refine
from devstack.s3 import S3Server, storage_env
from devstack.scripted_model import ScriptedModel, bash, call, reply
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.support.api import token_for
from tests.support.fixtures.accounts import Team
from tests.support.fixtures.s3 import use_s3_storage
from tests.support.runs import scripted_endpoint, submit, wait_for_final

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

STOPS = b"name,lat,lon\nTsukiji,35.66,139.77\n"
PAGE = b'<!doctype html><html><body><div id=map></div><script>L.map("map")</script></body></html>'
NOTES = "# Tokyo\n\n- Tsukiji\n- Ginza\n"
TONE = (
    "import wave; w = wave.open('/testbed/output/tone.wav', 'wb'); w.setnchannels(1); w.setsampwidth(2); "
    "w.setframerate(8000); w.writeframes(bytes(range(256)) * 64); w.close()"
)
MAKE_FILES = (
    "mkdir -p /testbed/output && cp /testbed/input/stops.csv /testbed/output/ && "
    "python3 -c \"from PIL import Image; Image.new('RGB', (8, 8), 'red').save('/testbed/output/red.png')\" && "
    f'python3 -c "{TONE}" && '
    f"printf '%s' '{PAGE.decode()}' > /testbed/output/map.html"
)
# What a person sees, whichever the storage: each file's kind, and which have a preview or a rendering.
EXPECTED = {
    "map.html": ("map", "preview"),
    "notes.md": ("markdown", "rendered"),
    "red.png": ("image", "preview"),
    "stops.csv": ("text", "rendered"),
    "tone.wav": ("audio", "preview"),
}
REDIRECTED = {"red.png", "tone.wav"}  # media: from the store itself when on S3


@pytest.fixture(params=["local", "s3"])
def storage(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def stack(
    storage: str,
    atelier_server: AtelierServer,
    start_stack: Callable[..., AbstractContextManager[AtelierServer]],
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    settings: Any,
) -> Iterator[AtelierServer]:
    """The session's stack (local storage), or one of the same on S3, under a location of its own;
    this process then reads and writes the same storage."""
    if storage == "local":
        yield request.getfixturevalue("run_stack")
        return
    s3: S3Server = request.getfixturevalue("s3_server")
    location = f"stack-{time.monotonic_ns()}"
    use_s3_storage(settings, s3, location)
    # Both stacks share the test database: the session's worker, woken by its own reaper,
    # could take this stack's queued run and store its files locally. It rests meanwhile.
    atelier_server.worker.stop()
    try:
        with start_stack(tmp_path_factory.mktemp("s3-stack"), env_overrides=storage_env(s3, location)) as server:
            yield server
    finally:
        atelier_server.ensure_worker()


def stored_in(storage: str, artifact: Artifact, stack: AtelierServer, s3: S3Server | None) -> set[str]:
    """Where each of the artifact's files is, listed by the storage itself."""
    names = {str(f.name) for f in (artifact.file, artifact.preview, artifact.rendered) if f}
    if storage == "s3":
        assert s3 is not None
        return names & s3.names()
    return {name for name in names if (stack.media_root / name).is_file()}


def test_a_run_looks_and_downloads_the_same_on_local_and_s3_storage(
    storage: str,
    stack: AtelierServer,
    sandbox_image: str,
    team: Team,
    scripted_model: ScriptedModel,
    settings: Any,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    notes = call("str_replace_editor", {"command": "create", "path": "/testbed/output/notes.md", "file_text": NOTES})
    endpoint = scripted_endpoint(
        team, scripted_model, [bash(MAKE_FILES, "Making the files."), reply("", [notes]), submit_reply("Made.")]
    )
    run = submit(team, endpoint, brief="a 3-day Tokyo food map", files={"stops.csv": STOPS})
    run = wait_for_final(run, logs=stack.logs, timeout=180)
    assert run.status == RunStatus.SUCCEEDED, run.reason

    artifacts = {a.path: a for a in Artifact.objects.filter(run=run)}
    seen = {
        path: (a.kind, "preview" if a.preview else "rendered" if a.rendered else "") for path, a in artifacts.items()
    }
    assert seen == EXPECTED

    # Where the files are: in the bucket on S3 (the input too), in the media folder otherwise.
    s3: S3Server | None = request.getfixturevalue("s3_server") if storage == "s3" else None
    for artifact in artifacts.values():
        assert len(stored_in(storage, artifact, stack, s3)) == 2, artifact.path
    given = str(run.creation.inputs.get().file.name)
    assert given in s3.names() if s3 is not None else (stack.media_root / given).is_file()

    # The artifact origin, as the page links to it (the redirect followed, as a browser does).
    token = grant_sign(run_id=run.pk, user=team.viewer)
    for path, artifact in artifacts.items():
        response = httpx.get(f"{stack.base_url}/r/{token}/{path}", follow_redirects=True)
        assert response.status_code == 200, path
        assert hashlib.sha256(response.content).hexdigest() == artifact.sha256, path
        from_store = bool(response.history)
        assert from_store is (storage == "s3" and path in REDIRECTED), path
        if artifact.preview:
            preview = httpx.get(f"{stack.base_url}/r/{token}/{path}?v=preview", follow_redirects=True)
            assert preview.content.startswith(b"\x89PNG\r\n\x1a\n"), path
    with Image.open(io.BytesIO(httpx.get(f"{stack.base_url}/r/{token}/red.png", follow_redirects=True).content)) as red:
        assert (red.size, red.getpixel((4, 4))) == ((8, 8), (255, 0, 0))

    # The API, with the `atelier` command's downloader: every file whole, sha256 verified.
    credentials = Credentials(url=f"http://localhost:{stack.port}", token=token_for(team.member))
    out = io.StringIO()
    with ApiClient(credentials) as client:
        ArtifactDownloader(client, tmp_path / "made", out=out, progress_stream=io.StringIO()).download_run(run.pk)
    downloaded = {p.relative_to(tmp_path / "made").as_posix(): p.read_bytes() for p in (tmp_path / "made").rglob("*")}
    assert {path: hashlib.sha256(data).hexdigest() for path, data in downloaded.items()} == {
        path: a.sha256 for path, a in artifacts.items()
    }
    assert out.getvalue().count("sha256 verified") == len(EXPECTED)
    assert downloaded["stops.csv"] == STOPS
    assert downloaded["notes.md"].decode() == NOTES
    assert downloaded["map.html"] == PAGE

    # The version's whole /testbed is kept in the same storage, the next version starts from it
    # there, and deleting the creation removes every snapshot with the rest.
    def kept(name: str) -> bool:
        return name in s3.names() if s3 is not None else (stack.media_root / name).is_file()

    v2 = wait_for_final(run_refine(run=run, user=team.member, instruction="again"), logs=stack.logs, timeout=180)
    assert v2.status == RunStatus.SUCCEEDED, v2.reason
    assert set(Artifact.objects.filter(run=v2).values_list("path", flat=True)) == set(EXPECTED)  # v1's, restored
    snapshots = [str(s.file.name) for s in RunSnapshot.objects.filter(run__creation=run.creation)]
    assert len(snapshots) == 2
    assert all(kept(name) for name in snapshots)
    creation_delete(creation=run.creation, user=team.member)
    assert not any(kept(name) for name in snapshots)

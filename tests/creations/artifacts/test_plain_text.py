"""Plain text is shown as a document without a preview sandbox, looking exactly as the sandbox's
highlighter would have made it; anything a highlighter claims still goes to the sandbox."""

from __future__ import annotations

import re
import signal
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from creations.artifacts import previews, sandbox_previewer
from creations.artifacts.display import artifact_displays
from creations.artifacts.plain_text import is_plain_text, plain_text_document
from creations.models import Artifact
from tests.support.artifacts import Output, add_artifact, finished_run
from tests.support.fixtures.accounts import Team

ROOT = Path(__file__).resolve().parents[3]
TRICKY_TEXTS = [
    b"a <b> & \"c\" 'd'\r\n\n  indented\rold mac\ttab",
    b"",
    b"no last newline",
    b"\xef\xbb\xbfwith a byte order mark\n",
    b"a NUL \x00 inside",
    b"not utf-8: \xff\xfe \xc3",
    "unicode: é 😀 \u2028 \u202e".encode(),
    b"</code></pre><script>alert(1)</script>",
]


@pytest.mark.parametrize("name", ["notes.txt", "run.log", "data.csv", "README", "LICENSE", "report.TXT", "a/b/c.tsv"])
def test_names_no_highlighter_claims_are_plain(name: str) -> None:
    assert is_plain_text(name)


@pytest.mark.parametrize("name", ["hello.py", "CMakeLists.txt", "Makefile", "notes.md", "data.json", "app/main.js"])
def test_names_a_highlighter_claims_are_not(name: str) -> None:
    assert not is_plain_text(name)


@pytest.mark.parametrize("data", TRICKY_TEXTS)
def test_the_document_is_the_one_the_sandbox_program_writes(data: bytes, tmp_path: Path) -> None:
    """The preview sandbox's own program (run here on a file of ours) against the function."""
    (tmp_path / "source").write_bytes(data)
    (tmp_path / "out").mkdir()
    program = vars(sandbox_previewer)
    kept = {key: program[key] for key in ("SOURCE", "OUT", "NAME")}
    program.update(SOURCE=str(tmp_path / "source"), OUT=str(tmp_path / "out"), NAME="notes.txt")
    try:
        sandbox_previewer.code_document()
    finally:
        signal.alarm(0)  # the program's own time limit for the highlighter, meant for its child process
        program.update(kept)
    assert plain_text_document(data) == (tmp_path / "out" / "document.html").read_text(encoding="utf-8")


def test_the_platform_decides_with_the_sandboxs_own_highlighter() -> None:
    pinned = re.search(r"^pygments==(\S+)$", (ROOT / "platform/sandbox/requirements.txt").read_text(), re.M | re.I)
    assert pinned is not None
    assert version("Pygments") == pinned.group(1)


@pytest.mark.django_db
def test_a_run_of_plain_text_starts_no_preview_sandbox_and_shows_its_text(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_sandbox(run_id: int) -> Any:
        raise AssertionError("a preview sandbox was started for plain text")

    monkeypatch.setattr(previews, "_start_sandbox", no_sandbox)
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=[])
    notes = add_artifact(run, Output("notes.txt", b"Title: <b>big</b> & bold\r\nsecond line"))
    previews.make_previews([notes], run_id=run.pk)

    notes.refresh_from_db()
    assert notes.derived_bytes == notes.rendered.size > 0  # counted in the workspace's storage
    (display,) = artifact_displays([notes], user=team.owner, render_documents=True)
    html = str(display.rendered)
    assert "Title: &lt;b&gt;big&lt;/b&gt; &amp; bold\nsecond line" in html
    assert "<b>" not in html


@pytest.mark.django_db
def test_code_beside_plain_text_still_goes_to_the_sandbox_alone(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[list[str]] = []

    def batch_seen(sandbox: Any, batch: list[Artifact], deadline: float) -> previews.BatchOutcome:
        sent.append([artifact.path for artifact in batch])
        return previews.BatchOutcome()

    monkeypatch.setattr(previews, "_start_sandbox", lambda run_id: _NoSandbox())
    monkeypatch.setattr(previews, "_preview_batch", batch_seen)
    run = finished_run(workspace=team.workspace, author=team.owner, outputs=[])
    artifacts = [
        add_artifact(run, Output("notes.txt", b"plain")),
        add_artifact(run, Output("greet.py", b"print('hi')\n")),
        add_artifact(run, Output("CMakeLists.txt", b"project(x)\n")),
    ]
    previews.make_previews(artifacts, run_id=run.pk)

    assert sent == [["greet.py", "CMakeLists.txt"]]
    assert Artifact.objects.get(pk=artifacts[0].pk).rendered


class _NoSandbox:
    def stop(self) -> None:
        pass

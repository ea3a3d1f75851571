"""Rendered documents keep nothing active: the sanitizer applied at ingestion, and the run-file links of a page view.

The HTML here is made by Python-Markdown in the test process, as the preview
sandbox makes it (test_previews.py runs the real thing end to end).
"""

import markdown

from creations.artifacts.renderers import (
    decode_text,
    link_run_files,
    plain_text_document,
    resolve_relative,
    sanitize_document,
)
from tests.support.media_samples import hostile_markdown


def rendered(text: str, *, path: str = "reports/q1.md") -> str:
    stored = sanitize_document(markdown.markdown(text, extensions=["extra"]), document_path=path)
    return str(link_run_files(stored, url_for=lambda target: f"https://artifacts.test/r/T/{target}"))


def test_markdown_keeps_its_formatting() -> None:
    html = rendered("# Title\n\n**bold** and a [link](https://example.com)\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert "<h1" in html
    assert "<strong>bold</strong>" in html
    assert "<table>" in html
    assert 'href="https://example.com"' in html
    assert 'rel="noopener noreferrer nofollow ugc"' in html


def test_markdown_loses_scripts_event_handlers_and_javascript_links() -> None:
    html = rendered(hostile_markdown("http://localhost:8000").decode())
    lowered = html.lower()
    assert "<script" not in lowered
    assert "__pwned" not in lowered
    assert "onerror" not in lowered
    assert "javascript:" not in lowered
    assert "Click for details" in html  # the link text stays, its target does not


def test_markdown_images_may_only_show_files_of_the_same_run() -> None:
    html = rendered(
        "![chart](chart.png) ![up](../../etc/passwd) ![tracker](https://evil.example/p.gif) ![abs](/media/x.png)"
    )
    assert 'src="https://artifacts.test/r/T/reports/chart.png"' in html
    assert "evil.example" not in html
    assert "passwd" not in html
    assert "/media/x.png" not in html


def test_relative_links_point_at_the_runs_artifacts_not_the_platform() -> None:
    html = rendered("[appendix](appendix.md) [home](/accounts/logout/)")
    assert 'href="https://artifacts.test/r/T/reports/appendix.md"' in html
    assert "/accounts/logout/" not in html


def test_a_document_cannot_forge_a_run_file_reference_out_of_its_run() -> None:
    html = rendered('<a href="atelier-run-file:../../secrets">x</a> <img src="atelier-run-file:/etc/passwd">')
    assert "secrets" not in html
    assert "passwd" not in html


def test_link_paths_are_escaped_into_the_page() -> None:
    html = rendered('[odd](a%22b&c.md) ![q](<we"ird.png>)', path="q1.md")
    assert "<a" in html
    assert 'we"ird' not in html


def test_markdown_cannot_restyle_the_page() -> None:
    html = rendered('<div class="topbar" style="position:fixed;inset:0">x</div>')
    assert "style=" not in html
    assert "topbar" not in html


def test_documents_with_no_rendering_are_shown_as_escaped_text() -> None:
    html = str(plain_text_document(b"<b>not bold</b>"))
    assert "<b>" not in html
    assert "&lt;b&gt;" in html


def test_resolving_never_leaves_the_output_folder() -> None:
    assert resolve_relative("../x.png", document_path="a.md") is None
    assert resolve_relative("img/x.png", document_path="reports/a.md") == "reports/img/x.png"


def test_undecodable_bytes_do_not_break_rendering() -> None:
    assert decode_text(b"ok \xff\xfe \x00 done") == "ok \ufffd\ufffd \ufffd done"

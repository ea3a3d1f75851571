"""Markdown and code artifacts are rendered into platform pages without anything active left in them."""

from creations.artifacts.renderers import decode_text, render_code, render_markdown, resolve_relative
from tests.support.media_samples import hostile_markdown


def resolve_to_artifacts(reference: str) -> str | None:
    target = resolve_relative(reference, document_path="reports/q1.md")
    return f"https://artifacts.test/r/T/{target}" if target else None


def test_markdown_keeps_its_formatting() -> None:
    html = render_markdown("# Title\n\n**bold** and a [link](https://example.com)\n\n| a | b |\n|---|---|\n| 1 | 2 |",
                           resolve=resolve_to_artifacts)  # fmt: skip
    assert "<h1" in html
    assert "<strong>bold</strong>" in html
    assert "<table>" in html
    assert 'href="https://example.com"' in html
    assert 'rel="noopener noreferrer nofollow ugc"' in html


def test_markdown_loses_scripts_event_handlers_and_javascript_links() -> None:
    html = render_markdown(hostile_markdown("http://localhost:8000").decode(), resolve=resolve_to_artifacts)
    lowered = html.lower()
    assert "<script" not in lowered
    assert "__pwned" not in lowered
    assert "onerror" not in lowered
    assert "javascript:" not in lowered
    assert "Click for details" in html  # the link text stays, its target does not


def test_markdown_images_may_only_show_files_of_the_same_run() -> None:
    html = render_markdown(
        "![chart](chart.png) ![up](../../etc/passwd) ![tracker](https://evil.example/p.gif) ![abs](/media/x.png)",
        resolve=resolve_to_artifacts,
    )
    assert 'src="https://artifacts.test/r/T/reports/chart.png"' in html
    assert "evil.example" not in html
    assert "passwd" not in html
    assert "/media/x.png" not in html


def test_relative_links_point_at_the_runs_artifacts_not_the_platform() -> None:
    html = render_markdown("[appendix](appendix.md) [home](/accounts/logout/)", resolve=resolve_to_artifacts)
    assert 'href="https://artifacts.test/r/T/reports/appendix.md"' in html
    assert "/accounts/logout/" not in html


def test_markdown_cannot_restyle_the_page() -> None:
    html = render_markdown('<div class="topbar" style="position:fixed;inset:0">x</div>', resolve=resolve_to_artifacts)
    assert "style=" not in html
    assert "topbar" not in html


def test_code_is_highlighted_and_escaped() -> None:
    html = render_code('print("<script>alert(1)</script>")\n', filename="hello.py")
    assert 'class="highlight"' in html
    assert "<script>" not in html
    assert "&lt;script&gt;" in html


def test_unknown_text_is_escaped_plain_text() -> None:
    html = render_code("<b>not bold</b>", filename="notes.unknownext")
    assert "<b>" not in html
    assert "&lt;b&gt;" in html


def test_undecodable_bytes_do_not_break_rendering() -> None:
    assert decode_text(b"ok \xff\xfe \x00 done") == "ok \ufffd\ufffd \ufffd done"

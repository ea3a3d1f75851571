"""The image builds' cache when two builds run at once in one checkout (the sandbox image for
`make run` while a test builds the production images): a part both need is made once, and neither
reads it half made."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from sandboxes import image


def test_two_builds_asking_for_the_same_wheels_at_once_download_them_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    downloads: list[list[str]] = []

    def slow_pip(argv: list[str], log: image.Log, step: str) -> None:
        downloads.append(argv)
        time.sleep(0.3)  # long enough for the other build to arrive while the wheels are being written
        folder = Path(argv[argv.index("-w") + 1])
        (folder / "django-5.2-py3-none-any.whl").write_bytes(b"wheel")

    monkeypatch.setattr(image, "_run", slow_pip)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("django==5.2\n")
    cache = tmp_path / "cache"
    found: list[list[str]] = []

    def build() -> None:
        wheels = image.ensure_wheels(cache, requirements, log=lambda _line: None)
        found.append(sorted(path.name for path in wheels.iterdir()))

    builds = [threading.Thread(target=build) for _ in range(2)]
    for thread in builds:
        thread.start()
    for thread in builds:
        thread.join(timeout=10)

    assert len(downloads) == 1
    assert found == [[".complete", "django-5.2-py3-none-any.whl"]] * 2


def test_a_build_waits_for_the_part_another_holds_and_goes_on_once_it_is_released(tmp_path: Path) -> None:
    order: list[str] = []
    held = threading.Event()

    def first() -> None:
        with image.cache_lock(tmp_path, "base"):
            held.set()
            time.sleep(0.3)
            order.append("first done")

    def second() -> None:
        held.wait(timeout=5)
        with image.cache_lock(tmp_path, "base"):
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert order == ["first done", "second in"]
    with image.cache_lock(tmp_path, "installer"), image.cache_lock(tmp_path, "base"):
        pass  # parts are locked apart, and a released part is free again

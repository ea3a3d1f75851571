"""Two finished runs of one creation with real files, for the comparison tests and bench."""

import io
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from PIL import Image, ImageDraw

from creations.models import Run, RunStatus
from tests.support.artifacts import Output, add_artifact, finished_run, make_previews_of
from tests.support.factories import RunFactory
from workspaces.models import Workspace


def two_versions(
    *, workspace: Workspace, author: User, older: list[Output], newer: list[Output], previews: bool = False
) -> tuple[Run, Run]:
    """A creation whose first run left `older` and whose second left `newer`."""
    run_a = finished_run(workspace=workspace, author=author, outputs=older, previews=previews)
    run_b = RunFactory.create(creation=run_a.creation, finished=True, status=RunStatus.SUCCEEDED)
    make_previews_of(run_b, [add_artifact(run_b, output) for output in newer], previews)
    return run_a, run_b


def poster_png(width: int = 400, height: int = 300, *, patch: tuple[int, int, int, int] | None = None) -> bytes:
    """A flat picture with a few shapes; `patch` paints one rectangle (left, top, right, bottom inclusive) white."""
    image = Image.new("RGB", (width, height), "#3d5afe")
    draw = ImageDraw.Draw(image)
    draw.ellipse((width // 4, height // 4, 3 * width // 4, 3 * height // 4), fill="#ffca28")
    if patch:
        draw.rectangle(patch, fill="#ffffff")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def text_lines(count: int, *, changed: dict[int, str] | None = None) -> bytes:
    changed = changed or {}
    return "".join(f"{changed.get(i, f'line {i} of the report')}\n" for i in range(count)).encode()


@pytest.fixture
def _comparisons_forgotten() -> Iterator[None]:
    """Each test's comparisons are made anew: the process cache would otherwise remember details (and
    overlay names) kept in an earlier test's media folder."""
    cache.clear()
    yield
    cache.clear()

"""The API role matrix's rows for workspaces, their models and usage, staged inputs, and runs with
their events, artifacts and versions."""

from __future__ import annotations

from api.models import StagedInput
from creations.models import Creation, Run
from tests.api.role_matrix.rows import (
    FORBIDDEN,
    GET,
    NOT_FOUND,
    POST,
    UNAUTHORIZED,
    Answer,
    Row,
    creators_only,
    members_only,
    run_page,
    with_the_workspaces_model,
)
from tests.support.role_world import ANONYMOUS, CREATORS, MANAGERS, MEMBERS, TITLE, World, sees


def listing_for_members(who: str, visibility: str) -> Answer:
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200, listed=who in MEMBERS)


def usage_listing(who: str, visibility: str) -> Answer:
    """Viewers see the totals only: no creation is named to them; the others see the costliest
    creations, each named only to those who may see it."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if who not in MEMBERS:
        return NOT_FOUND
    return Answer(200, listed=who in CREATORS and sees(who, visibility))


def run_listing(who: str, visibility: str) -> Answer:
    """Runs of one's own workspaces that one may see; a public run elsewhere is not listed."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200, listed=who in MEMBERS and sees(who, visibility))


def artifact_preview(who: str, visibility: str) -> Answer:
    """The world's artifact has no preview made: those who see it are told so (404) as well."""
    return UNAUTHORIZED if who == ANONYMOUS else NOT_FOUND


def start_from_run(who: str, visibility: str) -> Answer:
    """Run again or fork: for those who see the run and may start runs in its workspace."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(201, changed=True) if who in CREATORS else FORBIDDEN


def cancel_run(who: str, visibility: str) -> Answer:
    """Owners and admins may cancel any run of their workspace, a private creation's too (this one has
    ended: they are told so, 409); members only the runs they started (this one is the author's)."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if who in MANAGERS:
        return Answer(409)
    return FORBIDDEN if sees(who, visibility) else NOT_FOUND


def start_with_the_artifact(who: str, visibility: str) -> Answer:
    """A run in the world's workspace with its artifact as input: for those who may start runs
    there and see the artifact; to the others who may, the artifact is as good as missing (422)."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if who not in MEMBERS:
        return NOT_FOUND
    if who not in CREATORS:
        return FORBIDDEN
    return Answer(201, changed=True) if sees(who, visibility) else Answer(422)


def talk_to_run(who: str, visibility: str) -> Answer:
    """Those who see the run and may start runs in its workspace may talk to its agent; this run
    has ended, so they are told so (409). Viewers watch only."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(409) if who in CREATORS else FORBIDDEN


def restore_version(who: str, visibility: str) -> Answer:
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(200, changed=True) if who in CREATORS else FORBIDDEN


def rename_creation(who: str, visibility: str) -> Answer:
    """A new title: for those who see the creation and may work on it; viewers are refused."""
    if who == ANONYMOUS:
        return UNAUTHORIZED
    if not sees(who, visibility):
        return NOT_FOUND
    return Answer(200, changed=True) if who in CREATORS else FORBIDDEN


def _more_runs(world: World) -> bool:
    return Run.objects.exclude(pk__in=[c.run_id for c in world.comparison.contestants.all()]).exists()


def _refined(world: World) -> bool:
    return Run.objects.filter(parent=world.run, version=2).exists()


def _nothing_shown(world: World) -> None:
    Creation.objects.filter(pk=world.creation.pk).update(shown_run=None)


def _shown(world: World) -> bool:
    return Creation.objects.filter(pk=world.creation.pk, shown_run=world.run).exists()


def _renamed(world: World) -> bool:
    return Creation.objects.filter(pk=world.creation.pk, title="The renamed poster").exists()


def _staged(world: World) -> bool:
    return StagedInput.objects.exists()


ROWS = [
    Row(GET, "/api/v1/workspaces", listing_for_members),
    Row(GET, "/api/v1/workspaces/{slug}", members_only(Answer(200))),
    Row(GET, "/api/v1/workspaces/{slug}/models", members_only(Answer(200))),
    Row(GET, "/api/v1/workspaces/{slug}/usage", usage_listing, per_creation=True, mark=lambda world: TITLE),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/inputs",
        creators_only(Answer(201, changed=True)),
        body={"files": "stops.csv"},
        multipart=True,
        writes=True,
        changed=_staged,
    ),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/runs",
        creators_only(Answer(201, changed=True)),
        body={"brief": "a poster"},
        writes=True,
        changed=_more_runs,
    ),
    Row(
        POST,
        "/api/v1/workspaces/{slug}/runs",
        start_with_the_artifact,
        body=lambda world: {"brief": "the poster, in blue", "artifact_ids": [world.artifact.pk]},
        writes=True,
        changed=_more_runs,
        per_creation=True,
        label="with an artifact",
    ),
    Row(GET, "/api/v1/runs", run_listing, per_creation=True, mark=lambda world: TITLE),
    Row(GET, "/api/v1/runs/{run_id}", run_page, per_creation=True),
    Row(GET, "/api/v1/runs/{run_id}/events", run_page, per_creation=True),
    Row(GET, "/api/v1/runs/{run_id}/events/stream", run_page, per_creation=True, needs_commits=True),
    Row(GET, "/api/v1/runs/{run_id}/artifacts", run_page, per_creation=True),
    Row(GET, "/api/v1/runs/{run_id}/artifacts/zip", run_page, per_creation=True),
    Row(GET, "/api/v1/runs/{run_id}/compare/{other_run_id}", run_page, per_creation=True),
    Row(GET, "/api/v1/artifacts/{artifact_id}/download", run_page, per_creation=True),
    Row(GET, "/api/v1/artifacts/{artifact_id}/preview", artifact_preview, per_creation=True),
    Row(POST, "/api/v1/runs/{run_id}/cancel", cancel_run, writes=True, per_creation=True),
    Row(POST, "/api/v1/runs/{run_id}/rerun", start_from_run, writes=True, per_creation=True, changed=_more_runs),
    Row(
        POST,
        "/api/v1/runs/{run_id}/fork",
        start_from_run,
        body={"brief": "the same, in blue"},
        writes=True,
        per_creation=True,
        changed=_more_runs,
    ),
    Row(
        POST,
        "/api/v1/runs/{run_id}/refine",
        start_from_run,
        body={"instruction": "make the title bigger"},
        writes=True,
        per_creation=True,
        changed=_refined,
        prepare=with_the_workspaces_model,
    ),
    Row(GET, "/api/v1/runs/{run_id}/versions", run_page, per_creation=True),
    Row(
        POST,
        "/api/v1/runs/{run_id}/restore",
        restore_version,
        writes=True,
        per_creation=True,
        changed=_shown,
        prepare=_nothing_shown,
    ),
    Row(
        POST,
        "/api/v1/runs/{run_id}/rename",
        rename_creation,
        body={"title": "The renamed poster"},
        writes=True,
        per_creation=True,
        changed=_renamed,
    ),
    Row(POST, "/api/v1/runs/{run_id}/messages", talk_to_run, body={"text": "sign it"}, writes=True, per_creation=True),
]

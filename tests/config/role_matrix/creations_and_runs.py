"""The browser's role matrix's rows for creations and their runs: the galleries and usage pages,
a creation's page and what may be done to it, a run's pages, comparisons, and artifacts."""

from __future__ import annotations

from creations.arena.models import Vote
from creations.models import Creation, Run, RunMessage
from sandboxes.agent import demo_follow_ups
from tests.config.role_matrix.rows import GET, POST, POST_ONLY, Row
from tests.support.role_outcomes import (
    FORBIDDEN,
    LOGIN,
    NOT_FOUND,
    OK,
    Outcome,
    Rule,
    cancel,
    creation_page,
    delete_creation,
    done,
    members,
    public_list,
    redirect,
    refine,
    refused,
    rename_creation,
    restore_version,
    start_from_creation,
    talk_to_run,
    usage_export,
    usage_list,
    workspace_list,
)
from tests.support.role_world import ANONYMOUS, CREATORS, MANAGERS, MEMBERS, WORKSPACE, sees


def _comparison(for_creators: Outcome, for_viewers: Outcome) -> Rule:
    """The world's comparison: for the workspace's members who see its contestants (a public creation
    does not open it to outsiders); those who may start runs vote, viewers watch."""

    def rule(who: str, visibility: str) -> Outcome:
        if who == ANONYMOUS:
            return LOGIN
        if who not in MEMBERS or not sees(who, visibility):
            return NOT_FOUND
        return for_creators if who in CREATORS else for_viewers

    return rule


def _cancel_comparison(who: str, visibility: str) -> Outcome:
    if who == ANONYMOUS:
        return LOGIN
    if who not in MEMBERS or not sees(who, visibility):
        return NOT_FOUND
    return redirect("comparison_detail") if who in MANAGERS else refused(403)


def _use_artifact(who: str, visibility: str) -> Outcome:
    """To a new-creation form with the artifact attached, for whoever sees it: the creators to
    its own workspace's, the others to their personal workspace's."""
    if who == ANONYMOUS:
        return LOGIN
    return redirect("creation_new") if sees(who, visibility) else NOT_FOUND


ROWS = [
    Row("workspace_dashboard", {GET: workspace_list}, per_creation=True),
    Row(
        "creation_new",
        {GET: members(CREATORS, OK, FORBIDDEN), POST: members(CREATORS, done(to="run_detail"), refused(403))},
        data={"brief": "A calm piano piece", "visibility": WORKSPACE, "model": ""},
        changed=lambda w, actor: Creation.objects.filter(brief="A calm piano piece").exists(),
    ),
    Row("workspace_gallery", {GET: workspace_list}, per_creation=True),
    Row("workspace_usage", {GET: usage_list}, per_creation=True),
    Row("workspace_usage_csv", {GET: usage_export}, per_creation=True),
    Row("public_gallery", {GET: public_list}, per_creation=True),
    Row("creation_detail", {GET: creation_page}, per_creation=True),
    Row(
        "creation_rerun",
        {GET: POST_ONLY, POST: start_from_creation},
        changed=lambda w, actor: w.creation.runs.count() > 1,
        per_creation=True,
    ),
    Row(
        "creation_fork",
        {GET: POST_ONLY, POST: start_from_creation},
        data={"brief": "The same poster, in blue"},
        changed=lambda w, actor: Creation.objects.filter(forked_from=w.creation).exists(),
        per_creation=True,
    ),
    Row(
        "creation_rename",
        {GET: POST_ONLY, POST: rename_creation},
        data={"title": "The renamed poster"},
        changed=lambda w, actor: Creation.objects.filter(pk=w.creation.pk, title="The renamed poster").exists(),
        per_creation=True,
    ),
    Row(
        "creation_delete",
        {GET: POST_ONLY, POST: delete_creation},
        data={"confirm": "delete"},
        changed=lambda w, actor: not Creation.objects.filter(pk=w.creation.pk).exists(),
        per_creation=True,
    ),
    Row("run_detail", {GET: creation_page}, per_creation=True),
    Row("run_steps", {GET: creation_page}, per_creation=True),
    Row("run_artifacts", {GET: creation_page}, per_creation=True),
    Row("run_cancel", {GET: POST_ONLY, POST: cancel}, per_creation=True),
    Row(
        "run_refine",
        {GET: POST_ONLY, POST: refine},
        # The creation uses the demo model, which takes its recorded follow-ups only.
        data={"instruction": demo_follow_ups("a calm piano piece")[0]},
        changed=lambda w, actor: Run.objects.filter(parent=w.run).exists(),
        per_creation=True,
    ),
    Row(
        "run_message",
        {GET: POST_ONLY, POST: talk_to_run},
        data={"text": "Make it slower."},
        changed=lambda w, actor: RunMessage.objects.filter(run=w.run).exists(),
        per_creation=True,
    ),
    Row("creation_restore", {GET: POST_ONLY, POST: restore_version}, per_creation=True),
    Row("run_event_overflow", {GET: creation_page}, per_creation=True),
    Row("run_download_zip", {GET: creation_page}, per_creation=True),
    Row("run_trajectory_json", {GET: creation_page}, per_creation=True),
    Row("creation_compare", {GET: creation_page}, per_creation=True),
    Row("comparison_detail", {GET: _comparison(OK, OK)}, per_creation=True),
    Row(
        "comparison_vote",
        {GET: POST_ONLY, POST: _comparison(done(to="comparison_detail"), refused(403))},
        data={"winner": "A"},
        changed=lambda w, actor: Vote.objects.filter(comparison=w.comparison, voter=actor).exists(),
        per_creation=True,
    ),
    # Every contestant of the world's comparison has ended: owners and admins (who may cancel any)
    # are sent back to it, told there was nothing to cancel; its author is nobody of the roles.
    Row(
        "comparison_cancel",
        {GET: POST_ONLY, POST: _cancel_comparison},
        per_creation=True,
    ),
    Row("workspace_leaderboard", {GET: members(MEMBERS, OK)}),
    Row("artifact_detail", {GET: creation_page}, per_creation=True),
    Row("artifact_use", {GET: _use_artifact}, per_creation=True),
    # On the artifact origin, with the link the platform's pages gave this person.
    Row("artifact_serve", {GET: creation_page}, per_creation=True),
    Row("artifact_derived_serve", {GET: creation_page}, per_creation=True),  # a comparison's overlay
]

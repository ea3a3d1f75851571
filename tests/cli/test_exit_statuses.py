"""Every exit status of the table (atelier_cli/exit_status.py) is what its path returns, as a
sentence on stderr, or with --json as a JSON object naming it: against the platform's real API
where it can say so (a refused token, a viewer's write, a run that has ended, a used-up
budget), against an API answered in memory where only a fake can (a malformed reply, a
dropped network, a run failing while followed, Ctrl-C)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from api.models import TokenScope
from atelier_cli.exit_status import ExitStatus
from atelier_cli.main import main
from creations.models import Run
from tests.cli.fake_api import FakeApi, followed_run, run_answer
from tests.cli.recorded import RUN_EVENTS
from tests.cli.running import Atelier, AtelierOn, Outcome
from tests.support.api import token_for
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team

pytestmark = pytest.mark.django_db

FAILED = "The model stopped answering."
FAILED_RUN = run_answer(5, status="failed", reason=FAILED, is_final=True)
FAILING = [*RUN_EVENTS[:4], ("status", {"status": "failed", "reason": FAILED, "final": True})]


@dataclass
class World:
    team: Team
    platform: Atelier
    on: AtelierOn
    tmp_path: Path

    @property
    def member(self) -> str:
        return token_for(self.team.member)

    def finished_run(self) -> Run:
        return finished_run(workspace=self.team.workspace, author=self.team.member, outputs=[Output("a.txt", b"a")])


@dataclass(frozen=True)
class Scenario:
    run: Callable[[World, tuple[str, ...]], Outcome]
    says: str  # what the sentence on stderr holds
    http_status: int | None = None


def _ok(world: World, extra: tuple[str, ...]) -> Outcome:
    return world.platform("runs", *extra, token=world.member)


def _run_failed(world: World, extra: tuple[str, ...]) -> Outcome:
    return world.on(followed_run(5, FAILING, FAILED_RUN).transport())("follow", "5", *extra)


def _usage(world: World, extra: tuple[str, ...]) -> Outcome:
    return world.platform("cancel", "the-last-one", *extra, token=world.member)


def _not_authenticated(world: World, extra: tuple[str, ...]) -> Outcome:
    return world.platform("runs", *extra, token="atl_nope_" + "0" * 64)


def _forbidden(world: World, extra: tuple[str, ...]) -> Outcome:
    run = world.finished_run()
    return world.platform("refine", str(run.pk), "make it blue", *extra, token=token_for(world.team.viewer))


def _not_found(world: World, extra: tuple[str, ...]) -> Outcome:
    return world.platform("cancel", "999999", *extra, token=world.member)


def _conflict(world: World, extra: tuple[str, ...]) -> Outcome:
    return world.platform("cancel", str(world.finished_run().pk), *extra, token=world.member)


def _refused(world: World, extra: tuple[str, ...]) -> Outcome:
    workspace = world.team.workspace
    workspace.quota_month_tokens = 0
    workspace.save(update_fields=["quota_month_tokens"])
    return world.platform("create", "a poster", "--workspace", workspace.slug, *extra, token=world.member)


def _server_error(world: World, extra: tuple[str, ...]) -> Outcome:
    page = {"results": [run_answer(7, id="seven")], "next": None}
    api = FakeApi({("GET", "/runs"): lambda request: httpx.Response(200, json=page)})
    return world.on(api.transport())("runs", *extra)


def _unreachable(world: World, extra: tuple[str, ...]) -> Outcome:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused")

    return world.on(FakeApi({("GET", "/runs"): refuse}).transport())("runs", *extra)


def _local_files(world: World, extra: tuple[str, ...]) -> Outcome:
    taken = world.tmp_path / "taken"
    taken.write_text("a file where the folder would go")
    succeeded = run_answer(5, status="succeeded", is_final=True)
    api = followed_run(5, RUN_EVENTS, succeeded, artifacts={"map.html": b"<p>map</p>"})
    return world.on(api.transport())("follow", "5", "--output", str(taken), *extra)


def _insecure(world: World, extra: tuple[str, ...]) -> Outcome:
    return world.platform("login", "--url", "http://atelier.example.net", *extra, stdin=world.member + "\n")


def _interrupted(world: World, extra: tuple[str, ...]) -> Outcome:
    def interrupt(request: httpx.Request) -> httpx.Response:
        raise KeyboardInterrupt

    api = FakeApi(
        {
            ("GET", "/runs/5"): lambda request: httpx.Response(200, json=run_answer(5, status="running")),
            ("GET", "/runs/5/events/stream"): interrupt,
        }
    )
    # A person at the terminal answers the question with Enter: the run goes on.
    return world.on(api.transport())("follow", "5", *extra, stdin="\n")


SCENARIOS = {
    ExitStatus.OK: Scenario(_ok, says=""),
    ExitStatus.RUN_FAILED: Scenario(_run_failed, says=f"Run 5 ended failed: {FAILED}"),
    ExitStatus.USAGE: Scenario(_usage, says="'the-last-one' is not a whole number"),
    ExitStatus.NOT_AUTHENTICATED: Scenario(_not_authenticated, says="Run `atelier login`", http_status=401),
    ExitStatus.FORBIDDEN: Scenario(_forbidden, says="Only owners, admins and members", http_status=403),
    ExitStatus.NOT_FOUND: Scenario(_not_found, says="No such run.", http_status=404),
    ExitStatus.CONFLICT: Scenario(_conflict, says="has already ended (succeeded)", http_status=409),
    ExitStatus.REFUSED: Scenario(_refused, says="This workspace has used its", http_status=422),
    ExitStatus.SERVER_ERROR: Scenario(_server_error, says="results.0.id: Input should be a valid integer"),
    ExitStatus.UNREACHABLE: Scenario(_unreachable, says="Could not reach http://atelier.test"),
    ExitStatus.LOCAL_FILES: Scenario(_local_files, says="could not write"),
    ExitStatus.INSECURE: Scenario(_insecure, says="is plain http to another machine"),
    ExitStatus.INTERRUPTED: Scenario(_interrupted, says="Follow it again with: atelier follow 5"),
}


@pytest.fixture
def world(team: Team, atelier_on_platform: Atelier, atelier_on: AtelierOn, tmp_path: Path) -> World:
    return World(team, atelier_on_platform, atelier_on, tmp_path)


def test_every_status_of_the_table_has_its_path_here() -> None:
    assert set(SCENARIOS) == set(ExitStatus)


@pytest.mark.parametrize("status", list(ExitStatus), ids=lambda status: status.label)
def test_each_path_ends_with_its_status_and_a_sentence(world: World, status: ExitStatus) -> None:
    scenario = SCENARIOS[status]
    outcome = scenario.run(world, ())
    assert outcome.status == status, outcome.err
    if status is ExitStatus.OK:
        assert outcome.err == ""
        return
    assert scenario.says in outcome.err
    assert outcome.err.strip(), "an error says what went wrong"


@pytest.mark.parametrize("status", list(ExitStatus), ids=lambda status: status.label)
def test_with_json_each_error_is_one_json_object_on_stderr_naming_its_status(world: World, status: ExitStatus) -> None:
    scenario = SCENARIOS[status]
    outcome = scenario.run(world, ("--json",))
    assert outcome.status == status, outcome.err
    if status is ExitStatus.OK:
        assert outcome.err == ""
        assert isinstance(outcome.document(), list)
        return
    error = outcome.error()
    assert error == {
        "error": status.label,
        "exit_status": int(status),
        "message": error["message"],
        "http_status": scenario.http_status,
    }
    assert scenario.says in error["message"]
    assert "Cancel the run?" not in outcome.err  # a script is not asked questions
    outcome.records()  # what it printed before failing is JSON too, if anything


def test_a_read_only_token_may_not_write(world: World) -> None:
    run = world.finished_run()
    reader = token_for(world.team.member, scope=TokenScope.READ)
    outcome = world.platform("cancel", str(run.pk), token=reader)
    assert outcome.status == ExitStatus.FORBIDDEN
    assert outcome.err.startswith("Error: This token can only read.")


def test_without_a_login_it_is_not_authenticated(world: World) -> None:
    outcome = world.platform("runs", "--json", token=None)
    assert outcome.status == ExitStatus.NOT_AUTHENTICATED
    assert outcome.error()["message"].startswith("Not logged in: run `atelier login`")


def test_a_command_line_error_looks_as_argparse_shows_it(world: World) -> None:
    outcome = world.platform("runs", "--colour", token=world.member)
    assert outcome.status == ExitStatus.USAGE
    assert outcome.err == "usage: atelier [-h] COMMAND ...\natelier: error: unrecognized arguments: --colour\n"


def test_a_missing_input_file_is_a_usage_error_before_anything_is_sent(world: World) -> None:
    outcome = world.platform("create", "a map", "--input", str(world.tmp_path / "stops.csv"), "--json")
    assert outcome.status == ExitStatus.USAGE
    assert outcome.error()["message"] == f"{world.tmp_path / 'stops.csv'}: no such file."
    assert not Run.objects.exists()


def test_another_servers_not_found_page_is_a_server_error_not_a_missing_run(atelier_on: AtelierOn) -> None:
    api = FakeApi({})
    api.routes["GET", "/runs/5/versions"] = lambda request: httpx.Response(404, text="<h1>Not Found</h1>")
    outcome = atelier_on(api.transport())("versions", "5", "--json")
    assert outcome.status == ExitStatus.SERVER_ERROR
    assert "unlike the Atelier API: is this the right address?" in outcome.error()["message"]


def test_help_shows_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert "exit statuses:" in shown
    for status in ExitStatus:
        assert re.search(rf"^ +{status.value} +{status.label} +{re.escape(status.meaning[:20])}", shown, re.M)


def test_the_readme_documents_the_table() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for status in ExitStatus:
        assert f"| {status.value} | `{status.label}` | {status.meaning} |" in readme

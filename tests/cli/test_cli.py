"""The `atelier` command, as installed, against the running platform (daphne, a Celery
worker, gVisor sandboxes, the scripted model): a run made from the terminal, followed
live, its files downloaded; listed; cancelled with Ctrl-C or `atelier cancel`."""

from __future__ import annotations

import json
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from atelier_cli.exit_status import ExitStatus
from creations.models import ACTIVE_STATUSES, Artifact, Run, RunEvent, RunStatus
from devstack.scripted_model import ScriptedModel, bash, call, reply
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.cli.terminal_safety import CONTROL
from tests.cli.terminal_safety import STORED_ESCAPES as ESCAPES
from tests.cli.terminal_session import AtelierSession, atelier, atelier_env
from tests.support.api import token_for
from tests.support.artifacts import Output, finished_run
from tests.support.fixtures.accounts import Team
from tests.support.runs import held_until, scripted_endpoint, wait_for_final

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

STOPS = b"name,lat,lon\nTsukiji,35.66,139.77\n"
MAKE_FILES = (
    "mkdir -p /testbed/output && cp /testbed/input/stops.csv /testbed/output/ && "
    "python3 -c \"from PIL import Image; Image.new('RGB', (8, 8), 'red').save('/testbed/output/red.png')\" && "
    "for i in 1 2 3; do echo line $i; done"
)
NOTES = "# Tokyo\n\n- Tsukiji\n"
MODEL_WROTE = [
    ("step_started", {"step": 1, "remaining": 9}),
    ("assistant_message", {"step": 1, "content": f"{ESCAPES}Done: see notes.txt", "reasoning": None}),
    (
        "tool_call",
        {"step": 1, "call_id": "c1", "name": "execute_bash", "arguments": {"command": f"{ESCAPES}cat notes.txt"}},
    ),
    (
        "tool_result",
        {
            "step": 1,
            "call_id": "c1",
            "name": "execute_bash",
            "output": f"{ESCAPES}notes\n",
            "is_error": False,
            "exit_code": 0,
            "duration": 0.1,
        },
    ),
    ("status", {"status": "failed", "reason": f"{ESCAPES}The model stopped answering.", "final": True}),
]


@pytest.fixture
def env(run_stack: AtelierServer, team: Team, tmp_path: Path) -> dict[str, str]:
    """What a CI job sets: the server and a token of the team's member, no saved login."""
    # The platform answers at localhost; 127.0.0.1 is the same daphne as the artifact origin.
    server = f"http://localhost:{run_stack.port}"
    return atelier_env(url=server, token=token_for(team.member), config_home=tmp_path / "config")


@pytest.fixture
def sessions() -> Iterator[list[AtelierSession]]:
    started: list[AtelierSession] = []
    yield started
    for session in started:
        session.close()


def created_run(session: AtelierSession) -> Run:
    session.wait_for(" created in ")
    match = re.search(r"^Run (\d+) created in \S+: http\S+$", session.out, re.MULTILINE)
    assert match, session.out
    return Run.objects.get(pk=int(match.group(1)))


@pytest.mark.docker
def test_a_run_made_from_the_terminal_is_followed_live_and_its_files_downloaded(
    run_stack: AtelierServer,
    sandbox_image: str,
    team: Team,
    scripted_model: ScriptedModel,
    env: dict[str, str],
    sessions: list[AtelierSession],
    tmp_path: Path,
) -> None:
    next_step = threading.Event()
    notes = call("str_replace_editor", {"command": "create", "path": "/testbed/output/notes.md", "file_text": NOTES})
    endpoint = scripted_endpoint(
        team,
        scripted_model,
        [bash(MAKE_FILES, "Making the files."), held_until(next_step, reply("", [notes])), submit_reply("All made.")],
    )
    (tmp_path / "stops.csv").write_bytes(STOPS)
    output = tmp_path / "made"
    args = ["create", "a 3-day Tokyo food map", "--workspace", team.workspace.slug, "--model", str(endpoint.pk)]
    session = AtelierSession([*args, "--input", str(tmp_path / "stops.csv"), "--output", str(output)], env)
    sessions.append(session)
    try:
        run = created_run(session)
        # While the model has yet to answer its second step, the first is on the terminal.
        session.wait_for("  │ line 3\n")
        assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING
        assert "Making the files.\n$ mkdir -p /testbed/output && cp /testbed/input/stops.csv" in session.out
        assert "  │ line 1\n  │ line 2\n  │ line 3\n" in session.out
    finally:
        next_step.set()
    assert session.finish() == 0, session.err
    run = wait_for_final(run, logs=run_stack.logs)
    assert run.status == RunStatus.SUCCEEDED

    assert "✎ create /testbed/output/notes.md (3 lines)" in session.out
    assert "→ submit" in session.out
    assert "● succeeded — All made." in session.out
    artifacts = {a.path: a for a in Artifact.objects.filter(run=run)}
    assert set(artifacts) == {"stops.csv", "red.png", "notes.md"}
    downloaded = {path.relative_to(output).as_posix(): path.read_bytes() for path in output.rglob("*")}
    stored = {}
    for path, artifact in artifacts.items():
        with artifact.file.open("rb") as handle:
            stored[path] = handle.read()
    assert downloaded == stored
    assert downloaded["stops.csv"] == STOPS
    assert downloaded["notes.md"].decode() == NOTES
    assert re.search(rf"^Downloading 3 files \(.+\) into {re.escape(str(output))}/$", session.out, re.MULTILINE)
    assert session.out.count("sha256 verified") == 3

    listed = atelier(["runs", "--workspace", team.workspace.slug], env)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["ID", "STATUS", "WORKSPACE", "CREATED", "BY", "MODEL", "TITLE"]
    assert [row.split()[:3] for row in rows] == [[str(run.pk), "succeeded", team.workspace.slug]]
    assert run.started_by is not None
    assert rows[0].split()[5] == run.started_by.get_username()


@pytest.mark.docker
def test_ctrl_c_answered_yes_cancels_the_run(
    run_stack: AtelierServer,
    sandbox_image: str,
    team: Team,
    scripted_model: ScriptedModel,
    env: dict[str, str],
    sessions: list[AtelierSession],
) -> None:
    # A line is shown once the next begins: the shell holds back a line's end until it knows it
    # is not the end of the command.
    endpoint = scripted_endpoint(team, scripted_model, [bash("echo started; echo waiting; sleep 120")])
    args = ["create", "wait a while", "--workspace", team.workspace.slug, "--model", str(endpoint.pk), "--wait"]
    session = AtelierSession(args, env)
    sessions.append(session)
    run = created_run(session)
    session.wait_for("  │ started\n")
    session.interrupt()
    session.wait_for("Cancel the run? [y/N] ", on="err")
    session.answer("y\n")
    assert session.finish() == 1
    assert wait_for_final(run, logs=run_stack.logs).status == RunStatus.CANCELLED
    assert f"Cancelling run {run.pk}…" in session.err
    assert f"Run {run.pk} ended cancelled" in session.err
    assert "● cancelled" in session.out
    assert "Traceback" not in session.err


@pytest.mark.docker
def test_ctrl_c_answered_no_leaves_the_run_going_to_follow_again_and_cancel(
    run_stack: AtelierServer,
    sandbox_image: str,
    team: Team,
    scripted_model: ScriptedModel,
    env: dict[str, str],
    sessions: list[AtelierSession],
) -> None:
    endpoint = scripted_endpoint(team, scripted_model, [bash("echo started; echo waiting; sleep 120")])
    args = ["create", "wait a while", "--workspace", team.workspace.slug, "--model", str(endpoint.pk), "--wait"]
    session = AtelierSession(args, env)
    sessions.append(session)
    run = created_run(session)
    session.wait_for("  │ started\n")
    session.interrupt()
    session.wait_for("Cancel the run? [y/N] ", on="err")
    session.answer("\n")
    assert session.finish() == 130
    assert f"Follow it again with: atelier follow {run.pk}" in session.err
    assert Run.objects.get(pk=run.pk).status in ACTIVE_STATUSES

    again = AtelierSession(["follow", str(run.pk)], env)
    sessions.append(again)
    again.wait_for("  │ started\n")  # from the run's first event
    cancelled = atelier(["cancel", str(run.pk)], env)
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.startswith(f"Run {run.pk} is being cancelled")
    assert again.finish() == 1
    assert f"Run {run.pk} ended cancelled" in again.err
    assert wait_for_final(run, logs=run_stack.logs).status == RunStatus.CANCELLED

    refused = atelier(["cancel", str(run.pk)], env)
    assert refused.returncode == ExitStatus.CONFLICT
    assert refused.stderr.startswith("Error: ")
    assert "Traceback" not in refused.stderr


def test_login_checks_the_address_and_token_and_keeps_them_for_the_owner_only(
    run_stack: AtelierServer, team: Team, tmp_path: Path
) -> None:
    server = f"http://localhost:{run_stack.port}"
    no_env = atelier_env(url=None, token=None, config_home=tmp_path)
    token = token_for(team.member) + "\n"
    # The artifact origin is the same daphne under another name: it serves no API.
    wrong_address = atelier(["login", "--url", run_stack.base_url], no_env, stdin=token)
    assert wrong_address.returncode == ExitStatus.SERVER_ERROR
    assert wrong_address.stderr == (
        f"Error: {run_stack.base_url} answered 404 Not Found for /api/v1/workspaces, unlike the Atelier API: "
        "is this the right address? Nothing was saved.\n"
    )
    refused = atelier(["login", "--url", server], no_env, stdin="atl_nope_" + "0" * 64 + "\n")
    assert refused.returncode == ExitStatus.NOT_AUTHENTICATED
    assert refused.stderr == (
        "Error: The token is not valid. Create one on your Access tokens page. Nothing was saved.\n"
    )
    assert not (tmp_path / "atelier/config.json").exists()

    logged_in = atelier(["login", "--url", server + "/"], no_env, stdin=token)
    assert logged_in.returncode == 0, logged_in.stderr
    assert f"Logged in to {server}. Your workspaces: " in logged_in.stdout
    assert team.workspace.slug in logged_in.stdout
    config = tmp_path / "atelier/config.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600

    listed = atelier(["runs"], no_env)
    assert (listed.returncode, listed.stdout) == (0, "No runs yet.\n")


def test_login_takes_https_unless_told_and_plain_http_only_to_this_machine(
    run_stack: AtelierServer, team: Team, tmp_path: Path
) -> None:
    no_env = atelier_env(url=None, token=None, config_home=tmp_path)
    token = token_for(team.member) + "\n"

    # A bare address is tried over https, which the plain-http server does not speak.
    bare = atelier(["login", "--url", f"localhost:{run_stack.port}"], no_env, stdin=token)
    assert bare.returncode == ExitStatus.UNREACHABLE, bare.stderr
    assert bare.stderr.startswith(f"Error: Could not reach https://localhost:{run_stack.port}: ")

    elsewhere = atelier(["login", "--url", "http://atelier.example.net"], no_env, stdin=token)
    assert elsewhere.returncode == ExitStatus.INSECURE
    assert elsewhere.stderr.startswith(
        "Error: http://atelier.example.net is plain http to another machine: your token would cross the network"
    )
    assert "Use https://atelier.example.net, or add --insecure" in elsewhere.stderr
    assert not (tmp_path / "atelier/config.json").exists()


def test_what_a_model_wrote_reaches_the_terminal_without_escape_sequences(
    run_stack: AtelierServer, team: Team, env: dict[str, str], tmp_path: Path
) -> None:
    run = finished_run(
        workspace=team.workspace,
        author=team.member,
        # A file name as a model may choose it (one with a backslash would not be downloaded at all).
        outputs=[Output("\x1b]0;pwned\x07\x9b31mnotes\x1b[0m.txt", b"notes")],
        brief=f"{ESCAPES}a poster",
        status=RunStatus.FAILED,
    )
    Run.objects.filter(pk=run.pk).update(reason=f"{ESCAPES}The model stopped answering.")
    run.events.all().delete()
    for seq, (kind, payload) in enumerate(MODEL_WROTE, 1):
        RunEvent.objects.create(run=run, seq=seq, kind=kind, payload=payload)

    listed = atelier(["runs", "--workspace", team.workspace.slug], env)
    followed = atelier(["follow", str(run.pk), "--output", str(tmp_path / "made")], env)

    assert listed.returncode == 0, listed.stderr
    assert followed.returncode == ExitStatus.RUN_FAILED, followed.stderr
    for written in (listed.stdout, listed.stderr, followed.stdout, followed.stderr):
        assert not CONTROL.search(written), repr(written)
    assert "clicka poster" in listed.stdout
    assert "clickDone: see notes.txt" in followed.stdout
    assert "$ clickcat notes.txt" in followed.stdout
    assert "  │ notes\n" in followed.stdout  # what followed the carriage return, as a terminal would show it
    assert "notes.txt  ✓ 5 B, sha256 verified" in followed.stdout
    assert f"Run {run.pk} ended failed: clickThe model stopped answering." in followed.stderr


def test_a_script_gets_json_and_the_exit_status_of_what_went_wrong(
    run_stack: AtelierServer, team: Team, env: dict[str, str]
) -> None:
    listed = atelier(["runs", "--json"], env)
    assert (listed.returncode, json.loads(listed.stdout), listed.stderr) == (ExitStatus.OK, [], "")

    missing = atelier(["cancel", "999999", "--json"], env)
    assert missing.returncode == ExitStatus.NOT_FOUND
    assert missing.stdout == ""
    error = json.loads(missing.stderr)
    assert (error["error"], error["exit_status"], error["http_status"]) == ("not_found", 5, 404)

    revoked = atelier(["runs", "--json"], {**env, "ATELIER_TOKEN": "atl_nope_" + "0" * 64})
    assert revoked.returncode == ExitStatus.NOT_AUTHENTICATED
    assert json.loads(revoked.stderr)["error"] == "not_authenticated"

"""Versions from the terminal, against the running platform (daphne, a Celery worker, gVisor
sandboxes, the scripted model): a version made through the API, refined with `atelier refine
--wait` into a second that continues from its files, told something on the way with
`atelier say`, and listed with `atelier versions`."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from atelier_cli.exit_status import ExitStatus
from creations.models import Artifact, Creation, Run, RunEvent, RunStatus
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.cli.terminal_session import AtelierSession, atelier, atelier_env
from tests.support.api import token_for
from tests.support.fixtures.accounts import Team
from tests.support.runs import held_until, per_task, scripted_endpoint, wait_for_final, wait_until

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BRIEF = "a poster for the summer fair"
MAKE_POSTER = (
    "mkdir -p /testbed/work /testbed/output && cat > /testbed/work/make_poster.py <<'PY'\n"
    "SIZE = 40\n"
    "open('/testbed/output/poster.svg', 'w').write(\n"
    '    f\'<svg xmlns="http://www.w3.org/2000/svg"><text font-size="{SIZE}">Summer fair</text></svg>\')\n'
    "PY\n"
    "python3 /testbed/work/make_poster.py"
)
BIGGER = "make the title bigger"
# It only works on v1's files: the helper script is in the sandbox because the refine continues from them.
MAKE_IT_BIGGER = "sed -i 's/^SIZE = 40/SIZE = 80/' /testbed/work/make_poster.py && python3 /testbed/work/make_poster.py"
SAID = "Sign it with our team name, please."


def requests_of(model: ScriptedModel, text: str) -> list[str]:
    return [json.dumps(r.body.get("messages", [])) for r in model.chat_requests() if text in json.dumps(r.body)]


@pytest.fixture
def sessions() -> Iterator[list[AtelierSession]]:
    started: list[AtelierSession] = []
    yield started
    for session in started:
        session.close()


def test_a_version_refined_from_the_terminal_continues_from_the_last_and_hears_what_it_is_told(
    run_stack: AtelierServer,
    sandbox_image: str,
    team: Team,
    scripted_model: ScriptedModel,
    sessions: list[AtelierSession],
    tmp_path: Path,
) -> None:
    server = f"http://localhost:{run_stack.port}"
    token = token_for(team.member)
    env = atelier_env(url=server, token=token, config_home=tmp_path / "config")
    gate = threading.Event()
    endpoint = scripted_endpoint(team, scripted_model, [])
    scripted_model.exhausted = per_task(
        {
            BIGGER: [held_until(gate, bash(MAKE_IT_BIGGER)), submit_reply("The title at 80 px, signed.")],
            BRIEF: [bash(MAKE_POSTER), submit_reply("A poster with its title at 40 px.")],
        }
    )
    made = httpx.post(
        f"{server}/api/v1/workspaces/{team.workspace.slug}/runs",
        json={"brief": BRIEF, "model_endpoint_id": endpoint.pk},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert made.status_code == 201, made.text
    v1 = wait_for_final(Run.objects.get(pk=made.json()["id"]), logs=run_stack.logs)
    assert v1.status == RunStatus.SUCCEEDED, v1.reason

    session = AtelierSession(["refine", str(v1.pk), BIGGER, "--wait"], env)
    sessions.append(session)
    try:
        session.wait_for(" created as ")
        match = re.search(rf"^Run (\d+) created as v2, refining run {v1.pk}: http\S+/runs/\1/$", session.out, re.M)
        assert match, session.out
        v2 = Run.objects.get(pk=int(match.group(1)))
        wait_until(lambda: len(requests_of(scripted_model, BIGGER)) == 1, timeout=90, what="v2's first model request")
        said = atelier(["say", str(v2.pk), SAID], env)
        assert said.returncode == 0, said.stderr
        assert said.stdout.startswith(f"Sent to run {v2.pk}: ")
    finally:
        gate.set()
    assert session.finish() == 0, session.err
    v2 = wait_for_final(v2, logs=run_stack.logs)
    assert (v2.status, v2.version, v2.parent_id, v2.instruction) == (RunStatus.SUCCEEDED, 2, v1.pk, BIGGER)
    assert f"✉ {team.member.username}: {SAID}" in session.out
    assert "● succeeded" in session.out
    first, second = requests_of(scripted_model, BIGGER)
    assert SAID not in first
    assert SAID in second
    assert RunEvent.objects.filter(run=v2, kind="person_message", payload__text=SAID).exists()
    with Artifact.objects.get(run=v2, path="poster.svg").file.open("rb") as poster:
        assert b'font-size="80"' in poster.read()

    listed = atelier(["versions", str(v1.pk)], env)
    assert listed.returncode == 0, listed.stderr
    heading, header, *rows = listed.stdout.splitlines()
    assert heading == f"Creation {v1.creation_id}: {Creation.objects.get(pk=v1.creation_id)}"
    assert header.split()[:3] == ["VERSION", "RUN", "STATUS"]
    assert [row.split()[:5] for row in rows] == [
        ["*v2", str(v2.pk), "succeeded", "v1", team.member.username],
        ["v1", str(v1.pk), "succeeded", "brief", team.member.username],
    ]

    too_late = atelier(["say", str(v1.pk), "and in blue"], env)
    assert too_late.returncode == ExitStatus.CONFLICT
    assert too_late.stderr == (
        "Error: v1 has ended, so nobody would read this. Refine it to ask for a change. "
        f'For a new version: atelier refine {v1.pk} "…"\n'
    )

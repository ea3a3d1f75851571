"""An evaluation on the real stack (Celery worker, gVisor sandboxes, daphne) against two scripted
model servers over HTTP with known behaviour, started and followed with `atelier eval --wait`:

- "calculator" answers 8 of 10 tasks right, and only when it can run a command: in a sandbox it
  computes the answer with the shell and writes it to /testbed/output/answer.txt (two of its
  commands are wrong on purpose); asked plainly, it says it cannot compute without a computer;
- "steady" answers tasks 1-5 right and 6-10 wrong in both modes, in a sandbox as its final message.

The exact accuracies and the sandbox minus plain difference must come out in the CLI's table,
the results CSV and the API, and per task."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.test import Client

from creations.evaluations.models import Evaluation, EvaluationItem, EvaluationStatus
from creations.models import Artifact, Run, RunSnapshot, RunStatus
from devstack.scripted_model import ScriptedModel, bash, reply
from devstack.scripted_model import submit as submit_reply
from devstack.stack import AtelierServer
from tests.cli.running import Atelier
from tests.support.api import token_for
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.django_db(transaction=True)]

TASKS = 10
WRONG_ON_PURPOSE = {9, 10}  # the calculator's commands for these compute the wrong thing
_TASK = re.compile(r"Task (\d+): what is (\d+) times (\d+)\?")


def _task(body: dict[str, Any]) -> tuple[int, int]:
    """(task number, the right answer) of the conversation the request continues."""
    found = _TASK.search(json.dumps(body.get("messages", [])[:2]))
    assert found, "a request for no task of the suite"
    return int(found[1]), int(found[2]) * int(found[3])


def calculator(body: dict[str, Any]) -> Any:
    number, _ = _task(body)
    if not body.get("tools"):
        return reply("I would need to run a program to compute that exactly.")
    if any(message.get("role") == "tool" for message in body["messages"]):
        return submit_reply("The answer is in answer.txt.")
    factors = _TASK.search(json.dumps(body["messages"][:2]))
    assert factors is not None
    operator = "+" if number in WRONG_ON_PURPOSE else "*"
    return bash(f"echo $(( {factors[2]} {operator} {factors[3]} )) > /testbed/output/answer.txt")


def steady(body: dict[str, Any]) -> Any:
    number, right = _task(body)
    answer = str(right if number <= 5 else right + 1)
    return submit_reply(answer) if body.get("tools") else reply(answer)


def _suite(path: Path) -> Path:
    lines = [
        {"id": f"t{n:02d}", "prompt": f"Task {n}: what is {100 + n} times {37 + n}?", "rule": "number",
         "expected": str((100 + n) * (37 + n))}
        for n in range(1, TASKS + 1)
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path


def test_sandbox_versus_plain_with_two_scripted_models(
    run_stack: AtelierServer,
    sandbox_image: str,
    team: Team,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    team.workspace.quota_concurrent_runs = 10  # the worker has 12 threads: the sandboxes start side by side
    team.workspace.save(update_fields=["quota_concurrent_runs"])
    monkeypatch.setattr("atelier_cli.commands.evaluate.POLL_SECONDS", 0.5)
    token = token_for(team.member)
    with ScriptedModel(model="calc-1") as calc, ScriptedModel(model="steady-1") as even:
        calc.exhausted, even.exhausted = calculator, steady
        for name, server in (("calculator", calc), ("steady", even)):
            ModelEndpoint.objects.create(
                workspace=team.workspace, name=name, base_url=server.base_url, model=server.model
            )
        atelier = Atelier(
            monkeypatch, capsys, tmp_path / "config", httpx.HTTPTransport(), url=f"http://localhost:{run_stack.port}"
        )
        done = atelier(
            "eval", str(_suite(tmp_path / "products.jsonl")), "--model", "calculator", "--model", "steady",
            "--mode", "both", "--workspace", team.workspace.slug, "--wait", token=token,
        )  # fmt: skip
        assert done.status == 0, done.err
        plain_requests = [r for r in calc.chat_requests() + even.chat_requests() if not r.body.get("tools")]

    evaluation = Evaluation.objects.get()
    assert evaluation.status == EvaluationStatus.FINISHED
    # The table `atelier eval --wait` printed (times and tokens vary: the columns that do not are checked).
    table = [line.split() for line in done.out.splitlines()[1:]]
    assert [(row[0], row[1], row[2], " ".join(row[3:6]), row[6], row[-2] if row[-1] == "pts" else row[-1])
            for row in table[1:]] == [
        ("calculator", "sandbox", "80.0%", "49.0% to 94.3%", "8/10", "+80.0"),
        ("calculator", "plain", "0.0%", "0.0% to 27.8%", "0/10", "+80.0"),
        ("steady", "sandbox", "50.0%", "23.7% to 76.3%", "5/10", "0.0"),
        ("steady", "plain", "50.0%", "23.7% to 76.3%", "5/10", "0.0"),
    ]  # fmt: skip

    # The API's results, per model and per task.
    address, bearer = f"http://localhost:{run_stack.port}", {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=address, headers=bearer) as api:
        results = api.get(f"/api/v1/evaluations/{evaluation.pk}/results").json()
    accuracies = {
        (model["model"], mode["mode"]): (mode["correct"], mode["tasks_counted"], mode["accuracy"])
        for model in results["models"]
        for mode in model["modes"]
    }
    assert accuracies == {
        ("calculator", "sandbox"): (8, 10, 0.8),
        ("calculator", "plain"): (0, 10, 0.0),
        ("steady", "sandbox"): (5, 10, 0.5),
        ("steady", "plain"): (5, 10, 0.5),
    }
    assert {m["model"]: m["sandbox_minus_plain"] for m in results["models"]} == pytest.approx(
        {"calculator": 0.8, "steady": 0.0}
    )
    right = {(t["model"], t["mode"], t["task_id"]) for t in results["tasks"] if t["correct"]}
    assert right == {("calculator", "sandbox", f"t{n:02d}") for n in range(1, 9)} | {
        (model, mode, f"t{n:02d}") for model in ("steady",) for mode in ("sandbox", "plain") for n in range(1, 6)
    }
    sources = {(t["model"], t["mode"]): t["answer_from"] for t in results["tasks"]}
    assert sources == {
        ("calculator", "sandbox"): "answer.txt",
        ("calculator", "plain"): "reply",
        ("steady", "sandbox"): "final message",
        ("steady", "plain"): "reply",
    }

    # The results CSV.
    client = Client()
    client.force_login(team.viewer)
    rows = list(csv.reader(io.StringIO(b"".join(client.get(f"/evaluations/{evaluation.pk}/results.csv")).decode())))
    assert [row[:7] + row[9:10] for row in rows[1:]] == [
        ["calculator", "sandbox", "10", "8", "80.0", "49.0", "94.3", "+80.0"],
        ["calculator", "plain", "10", "0", "0.0", "0.0", "27.8", "+80.0"],
        ["steady", "sandbox", "10", "5", "50.0", "23.7", "76.3", "0.0"],
        ["steady", "plain", "10", "5", "50.0", "23.7", "76.3", "0.0"],
    ]

    # Sandbox tasks were ordinary runs that succeeded; plain ones a single request without tools.
    runs = Run.objects.filter(evaluation_item__evaluation=evaluation)
    assert runs.count() == 20
    assert set(runs.values_list("status", flat=True)) == {RunStatus.SUCCEEDED}
    assert len(plain_requests) == 20
    assert all(item.tokens > 0 for item in EvaluationItem.objects.filter(evaluation=evaluation))

    # Scored, not refined or shown: their outputs are stored, but no run kept its /testbed and no
    # preview sandbox drew their files; each page shows its files all the same.
    assert not RunSnapshot.objects.filter(run__in=runs).exists()
    answers = Artifact.objects.filter(run__in=runs)
    assert sorted(answers.values_list("path", flat=True)) == ["answer.txt"] * 10
    assert not answers.exclude(preview="", rendered="").exists()
    answered = answers.first()
    assert answered is not None
    page = client.get(answered.run.get_absolute_url())
    assert page.status_code == 200
    assert "answer.txt" in page.content.decode()

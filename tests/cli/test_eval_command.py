"""`atelier eval` against the platform's real API in this process: the suite uploaded, the models
found by name, the evaluation started; the demo model refused with the platform's sentence; and
the results table as --wait prints it."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.schemas.evaluations import EvaluationOut, ModelResultOut, ModeResultOut, ResultsOut, SuiteOut
from atelier_cli.answers import EVALUATION_RESULTS, Evaluation, EvaluationResults, ModelResult, ModeResult, Suite
from atelier_cli.commands.evaluate import results_table
from atelier_cli.exit_status import ExitStatus
from creations.evaluations.models import EvaluationItem
from creations.evaluations.services import DEMO_REFUSED
from tests.cli.running import Atelier
from tests.support.api import token_for
from tests.support.fixtures.accounts import Team
from workspaces.models import ModelEndpoint

pytestmark = pytest.mark.django_db

SUITE = (
    b'{"id": "a", "prompt": "2+2?", "rule": "number", "expected": "4"}\n'
    b'{"id": "b", "prompt": "3+3?", "rule": "number", "expected": "6"}\n'
)


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("celery.current_app.send_task", lambda *args, **kwargs: None)


def test_the_client_checks_only_fields_the_api_sends() -> None:
    assert set(Suite.model_fields) <= set(SuiteOut.model_fields)
    assert set(Evaluation.model_fields) <= set(EvaluationOut.model_fields)
    assert set(ModeResult.model_fields) <= set(ModeResultOut.model_fields)
    assert set(ModelResult.model_fields) <= set(ModelResultOut.model_fields)
    assert set(EvaluationResults.model_fields) <= set(ResultsOut.model_fields)


def test_eval_uploads_the_suite_and_starts_it_with_the_models_named(
    atelier_on_platform: Atelier, team: Team, tmp_path: Path
) -> None:
    for name in ("alpha", "beta"):
        ModelEndpoint.objects.create(workspace=team.workspace, name=name, base_url="http://127.0.0.1:9/v1", model=name)
    suite = tmp_path / "sums.jsonl"
    suite.write_bytes(SUITE)
    started = atelier_on_platform(
        "eval", str(suite), "--model", "alpha", "--model", "beta", "--mode", "plain",
        "--workspace", team.workspace.slug, token=token_for(team.member),
    )  # fmt: skip
    assert started.status == 0, started.err
    assert "Suite “sums” uploaded: 2 tasks." in started.err
    assert started.out.startswith("Evaluation ")
    assert started.out.rstrip().endswith("started: 4 tasks.")
    assert sorted(EvaluationItem.objects.values_list("model_name", flat=True)) == ["alpha", "alpha", "beta", "beta"]


def test_eval_with_the_demo_model_is_refused_saying_why(
    atelier_on_platform: Atelier, team: Team, tmp_path: Path
) -> None:
    suite = tmp_path / "sums.jsonl"
    suite.write_bytes(SUITE)
    refused = atelier_on_platform(
        "eval", str(suite), "--model", "demo", "--workspace", team.workspace.slug, token=token_for(team.member)
    )
    assert refused.status == ExitStatus.REFUSED
    assert DEMO_REFUSED in refused.err


def test_the_results_table() -> None:
    results = EVALUATION_RESULTS.validate_python(
        {
            "evaluation": {"id": 7, "status": "finished", "tasks_done": 40, "tasks_total": 40},
            "models": [
                {
                    "model": "alpha",
                    "sandbox_minus_plain": 0.8,
                    "modes": [
                        {"mode": "sandbox", "tasks_counted": 10, "correct": 8, "accuracy": 0.8, "ci95_low": 0.4902,
                         "ci95_high": 0.9433, "mean_tokens": 512.4, "mean_seconds": 3.21},
                        {"mode": "plain", "tasks_counted": 10, "correct": 0, "accuracy": 0.0, "ci95_low": 0.0,
                         "ci95_high": 0.2775, "mean_tokens": 40, "mean_seconds": 0.05},
                    ],
                }
            ],
        }
    )  # fmt: skip
    assert results_table(results).splitlines() == [
        "MODEL  MODE     ACCURACY  95% INTERVAL    CORRECT  MEAN TOKENS  MEAN TIME  SANDBOX-PLAIN",
        "alpha  sandbox  80.0%     49.0% to 94.3%  8/10     512          3.2 s      +80.0 pts",
        "alpha  plain    0.0%      0.0% to 27.8%   0/10     40           0.1 s      +80.0 pts",
    ]

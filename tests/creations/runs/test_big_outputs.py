"""A run that leaves more files than a run keeps: the top of its output is kept, what was left out is
counted and named on its page, and the files kept are previewed in one batch, after the agent's
sandbox is released, so their previews cost none of the workspace's sandbox time."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from django.db.models import Q
from django.test import Client
from django.urls import reverse

from creations.artifacts.previews import make_previews as make_previews_in_batches
from creations.artifacts.previews import previewer_source
from creations.models import Artifact, RunEvent, RunStatus
from creations.runs.admission import run_claim_next
from creations.runs.execution import run_execute
from devstack.scripted_model import ScriptedModel, bash
from devstack.scripted_model import submit as submit_reply
from sandboxes.docker_runtime import DockerSandbox
from sandboxes.pool import ColdStartProvider
from sandboxes.runtime import Sandbox
from tests.support.fixtures.accounts import Team
from tests.support.runs import scripted_endpoint, submit

pytestmark = [pytest.mark.docker, pytest.mark.services, pytest.mark.django_db(transaction=True)]

# 2,000 small code files in a subfolder (highlighted in the preview sandbox; plain text would be shown
# without one), then one at the top of output/: 1,001 more than a run keeps.
MANY_FILES = (
    "cd /testbed/output && mkdir many && python3 -c '"
    'for i in range(2000): open(f"many/f{i:05}.py", "w").write(f"line = {i}\\n")'
    "' && echo 'what I made' > top.txt"
)


class TimedProvider(ColdStartProvider):
    """The real (gVisor) provider, noting when the run's sandbox was acquired and released."""

    acquired_at = released_at = 0.0

    def acquire(self, *, labels: Mapping[str, str]) -> Sandbox:
        sandbox = super().acquire(labels=labels)
        self.acquired_at = time.monotonic()
        return sandbox

    def release(self, sandbox: Sandbox) -> None:
        super().release(sandbox)
        self.released_at = time.monotonic()


def test_a_run_of_more_files_than_it_keeps_keeps_its_top_names_the_rest_and_previews_them_after_release(
    sandbox_image: str,
    team: Team,
    scripted_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    client: Client,
    settings: Any,
) -> None:
    settings.SANDBOX_COPY_OUT_MAX_FILES = 1000
    provider = TimedProvider()
    monkeypatch.setattr("creations.runs.execution.get_provider", lambda: provider)
    monkeypatch.setattr("creations.runs.queue.send_wake_up", lambda run_id: None)  # run here, not on a worker
    previewing: list[float] = []

    def timed_previews(artifacts: Sequence[Artifact], *, run_id: int) -> None:
        previewing.append(time.monotonic())
        make_previews_in_batches(artifacts, run_id=run_id)

    monkeypatch.setattr("creations.runs.execution.make_previews", timed_previews)
    previewer_starts = []
    exec_in_sandbox = DockerSandbox.exec

    def counted(self: DockerSandbox, argv: list[str], **kwargs: Any) -> tuple[int, bytes]:
        if previewer_source() in argv:
            previewer_starts.append(argv)
        return exec_in_sandbox(self, argv, **kwargs)

    monkeypatch.setattr(DockerSandbox, "exec", counted)
    steps = [bash(MANY_FILES, "Making files."), submit_reply("2,001 files.")]
    run = submit(team, scripted_endpoint(team, scripted_model, steps), brief="make many files")

    assert run_claim_next(worker="test") == run.pk
    run_execute(run_id=run.pk)

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.reason
    paths = list(Artifact.objects.filter(run=run).values_list("path", flat=True))
    assert "top.txt" in paths
    assert len(paths) == 1000

    collected = RunEvent.objects.get(run=run, kind="artifacts").payload
    assert collected["rejected_count"] == 1001
    client.force_login(team.member)
    page = client.get(reverse("run_detail", args=[run.pk])).content.decode()
    assert "1,001 files of this run were not kept; the first 100 are named here." in page
    assert "<code>many/f00999.py</code>: more than 1000 files" in page

    # Every file kept is rendered, by one start of the previewer (bench/previews.py times it), after
    # the agent's sandbox was released: the workspace is not charged sandbox time for it.
    assert not Artifact.objects.filter(Q(rendered="") | Q(rendered__isnull=True), run=run).exists()
    assert len(previewer_starts) == 1
    (started,) = previewing
    assert provider.released_at <= started
    assert run.sandbox_seconds <= started - provider.acquired_at

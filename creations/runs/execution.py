"""Running one Run: sandbox, inputs, agent, artifacts, final status.

`run_execute` is what the Celery task calls once it has claimed a run
(creations.runs.admission: queued -> starting, exactly once). It hands the
sandbox work to the session the CLI
uses too (sandboxes.agent.session: the sandbox starts while the model is
already asked for its first step, inputs in, agent, outputs out, release in
every path). What is left here is the run's side: the model built from the
creation, events recorded, the status moved (running once the sandbox is
ready), outputs turned into Artifacts, usage, and one final status with a
reason a person can read.
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import assert_never

from django.conf import settings
from django.db import connection
from django.template.defaultfilters import filesizeformat

from creations.artifacts.ingest import ingest_outputs
from creations.artifacts.previews import make_previews
from creations.events.schema import ArtifactItem, ArtifactsCollected, RejectedOutput, SnapshotKept
from creations.events.store import EventRecorder
from creations.models import Artifact, Creation, Run, RunStatus
from creations.runs.inputs import renamed_inputs
from creations.runs.limits import effective_limits
from creations.runs.messages import run_messages_take
from creations.runs.selectors import run_is_scored_not_kept
from creations.runs.snapshots import snapshot_restorer, snapshot_save
from creations.runs.state import cancelled_reason, run_finish, run_mark_running
from creations.runs.supervision import RunSupervisor
from creations.runs.versions import run_continuation
from creations.usage.budgets import RunBudgetWatch, storage_allowance
from creations.usage.counters import usage_columns
from sandboxes.agent import AgentEvent, AgentLimits, AgentOutcome, InboxMessage, ModelClient, OutcomeReason
from sandboxes.agent.events import UsageReport
from sandboxes.agent.session import SandboxSession, SandboxStartError
from sandboxes.agent.usage import RunUsage
from sandboxes.container_spec import LABEL_RUN_ID
from sandboxes.pool import get_provider
from sandboxes.runtime import Sandbox
from workspaces.endpoints import KEY_UNREADABLE
from workspaces.fields import SealedSecret

log = logging.getLogger(__name__)

RUN_ID_LABEL = LABEL_RUN_ID  # names the sandbox after the run; the janitor and reaper use it
REJECTED_NAMED = 100  # output files not kept that a run's page names; the rest are counted
STEP_STARTED = "step_started"  # the agent's event before it asks the model: the step before it is complete
NOT_KEPT_SCORED = (
    "This version is a task of an evaluation: its files were scored, not kept for a refine, and get no previews."
)


@dataclass(frozen=True)
class Ending:
    status: RunStatus
    reason: str


def model_for(creation: Creation, *, instruction: str = "") -> ModelClient:
    from sandboxes.agent import demo_model_client, model_client_for

    endpoint = creation.model_endpoint
    if endpoint is None:
        if not instruction:
            return demo_model_client(creation.brief)
        try:
            return demo_model_client(creation.brief, instruction=instruction)
        except ValueError as refused:  # refused at submit too; a replay has nothing recorded for it
            raise RunSetupError(str(refused)) from None
    if endpoint.retired_at is not None:
        raise RunSetupError(
            f"The model endpoint “{endpoint.name}” was deleted from this workspace; fork with another model."
        )
    if not endpoint.is_enabled:
        raise RunSetupError(f"The model endpoint “{endpoint.name}” is disabled in this workspace.")
    if isinstance(endpoint.api_key, SealedSecret):
        raise RunSetupError(f"The model endpoint “{endpoint.name}” cannot be used. {KEY_UNREADABLE}")
    return model_client_for(
        base_url=endpoint.base_url,
        model=endpoint.model,
        api_key=endpoint.api_key,
        extra_body=endpoint.extra_body or None,
        temperature=endpoint.temperature,
        max_tokens=endpoint.max_tokens,
    )


class RunSetupError(Exception):
    """The run cannot start; the message is shown to the person as the reason."""


def run_execute(*, run_id: int) -> None:
    """Run a run this worker has claimed (it is starting) to its final status."""
    RunExecution(run_id).execute()


class RunExecution:
    def __init__(self, run_id: int) -> None:
        self.run = Run.objects.select_related("creation__workspace", "creation__model_endpoint", "parent").get(
            pk=run_id
        )
        self.creation = self.run.creation
        self.recorder = EventRecorder(run_id)
        self.session: SandboxSession | None = None
        self.supervisor = RunSupervisor(run_id, on_stop_sandbox=self._stop_sandbox)
        self.limits = effective_limits(self.creation)
        self.budget = RunBudgetWatch(workspace_id=self.creation.workspace_id, store_pending=self._store_held_events)
        # What the run has used: its steps' as they are reported (what its row's live counters
        # hold), then the agent's own count once it ends, the output and the sandbox time.
        self.usage = RunUsage()
        self.summary = ""
        # An evaluation's task: no snapshot and no previews, only its outputs stored (and scored).
        self.scored_not_kept = run_is_scored_not_kept(run_id=run_id)

    # --- the whole run ---

    def execute(self) -> None:
        ending = Ending(RunStatus.FAILED, "The run stopped unexpectedly.")
        self.supervisor.start()
        try:
            ending = self._run()
        except RunSetupError as error:
            ending = Ending(RunStatus.FAILED, str(error))
        except Exception as error:
            log.exception("Run %s failed", self.run.pk)
            ending = Ending(RunStatus.FAILED, f"Internal error while running: {type(error).__name__}. It was logged.")
        finally:
            self.supervisor.close()
            self._release_sandbox()
            self._close_recorder()
            if self.supervisor.lost:
                log.info("Run %s was ended elsewhere; leaving its final status alone.", self.run.pk)
            elif self.supervisor.cancelled or ending.status == RunStatus.CANCELLED:
                ending = Ending(RunStatus.CANCELLED, cancelled_reason(run_id=self.run.pk, started=True))
            run_finish(
                run_id=self.run.pk, status=ending.status, reason=ending.reason, usage=self.usage, summary=self.summary
            )

    def _run(self) -> Ending:
        model = model_for(self.creation, instruction=self.run.instruction)
        exhausted = self.budget()
        if exhausted is not None:  # its workspace's budget ran out while it waited: start nothing
            return Ending(RunStatus.QUOTA_EXCEEDED, f"{exhausted} The run did not start.")
        restore, left_out = snapshot_restorer(self.run)
        continuation = run_continuation(self.run, left_out=left_out)
        session = SandboxSession(
            provider=get_provider(),
            labels={RUN_ID_LABEL: str(self.run.pk)},
            # A whole snapshot holds the inputs already; anything less gets them again.
            input_files=self._read_inputs() if restore is None or left_out else {},
            on_ready=self._on_sandbox_ready,
            restore=restore,
        )
        self.session = session
        try:
            outcome = session.run_agent(
                model=model,
                brief=self.creation.brief,
                limits=self.limits,
                emit=self._on_agent_event,
                cancel=self.supervisor.stop,
                over_budget=self.budget,
                continuation=continuation,
                inbox=self._inbox,
                renamed_inputs=renamed_inputs(self.creation),
            )
        except SandboxStartError as error:
            log.warning("Run %s: no sandbox: %s", self.run.pk, error)
            raise RunSetupError(f"The sandbox could not start: {error}") from error
        self.supervisor.agent_stopped()
        # The same tokens as its steps' reports, and the last step too when it ended before its reply.
        self.usage = outcome.usage
        if outcome.reason is OutcomeReason.SUBMITTED:
            self.summary = outcome.message
        if not self.supervisor.lost:
            collected, artifacts = self._collect_outputs(session)
            self._keep_testbed(session)
            # The agent's sandbox time ends here: previews are the platform's work, in a sandbox of their own.
            self._release_sandbox()
            if not self.scored_not_kept:
                make_previews(artifacts, run_id=self.run.pk)
            self.recorder.record("artifacts", collected)  # the live page shows the files, previews and all
        return ending_for(outcome, self.limits)

    # --- pieces ---

    def _read_inputs(self) -> dict[str, bytes]:
        files: dict[str, bytes] = {}
        for input_file in self.creation.inputs.all():
            with input_file.file.open("rb") as handle:
                files[input_file.name] = handle.read()
        return files

    def _on_sandbox_ready(self, sandbox: Sandbox) -> None:
        """On the session's start thread, once the inputs are in."""
        try:
            run_mark_running(run_id=self.run.pk, sandbox_id=sandbox.id)
        finally:
            connection.close()  # this thread ends here: keep no database connection behind

    def _store_held_events(self) -> None:
        self.recorder.flush()

    def _on_agent_event(self, event: AgentEvent) -> None:
        # A step's events (and its usage, for the live counters) wait for the next step's start and
        # are stored with it: one write and one announcement per step, off the time between a model's
        # reply and the next request. A step that takes long still shows within the recorder's
        # coalescing time (its flusher), and the last ones are stored when the run ends.
        if isinstance(event.payload, UsageReport):
            step_usage = event.payload.run_usage()
            self.recorder.record(event.kind, event.payload, hold=True, add=usage_columns(step_usage))
            self.usage += step_usage
            self.budget.add_tokens(step_usage.total_tokens)
            return
        self.recorder.record(event.kind, event.payload, hold=event.kind != STEP_STARTED)

    def _collect_outputs(self, session: SandboxSession) -> tuple[ArtifactsCollected, list[Artifact]]:
        """The agent's output copied out and stored, and what the run's `artifacts` event says of it."""
        if session.stopped:
            return ArtifactsCollected(items=[], note="The sandbox was stopped before its output was copied."), []
        with tempfile.TemporaryDirectory(prefix=f"run-{self.run.pk}-") as tmp:
            try:
                report = session.copy_out(Path(tmp))
            except Exception as error:
                log.warning("Run %s: copy-out failed: %s", self.run.pk, error)
                return ArtifactsCollected(items=[], note=f"The output could not be copied: {error}"), []
            ingested = ingest_outputs(
                run=self.run,
                files=report.files,
                storage_allowance=storage_allowance(workspace_id=self.creation.workspace_id),
            )
        artifacts = ingested.artifacts
        self.usage += RunUsage(output_bytes=sum(a.size for a in artifacts))
        collected = ArtifactsCollected(
            items=[
                ArtifactItem(id=a.pk, path=a.path, kind=a.kind, size=a.size, content_type=a.content_type)
                for a in artifacts
            ]
        )
        # Each said only when there is something to say: an event stores the fields it was given.
        rejected = [*report.rejected, *ingested.rejected]
        if rejected:
            named = rejected[:REJECTED_NAMED]
            collected.rejected = [RejectedOutput(name=name, reason=reason) for name, reason in named]
        rejected_count = report.rejected_total + len(ingested.rejected)
        if rejected_count > len(collected.rejected or []):
            collected.rejected_count = rejected_count
        if not report.counted_all:
            collected.rejected_count_partial = True
        if report.truncated:
            collected.note = (
                f"Some output was left out: a run keeps at most {settings.SANDBOX_COPY_OUT_MAX_FILES:,} files "
                f"and {filesizeformat(settings.SANDBOX_COPY_OUT_MAX_BYTES)} of output/, the files at its top first."
            ).replace("\xa0", " ")
        return collected, artifacts

    def _inbox(self) -> list[InboxMessage]:
        return [InboxMessage(author=m.author_name, text=m.text) for m in run_messages_take(run_id=self.run.pk)]

    def _keep_testbed(self, session: SandboxSession) -> None:
        """The run's /testbed, kept for a refine to start from; a failure here never fails the run."""
        if session.stopped:
            return
        if self.scored_not_kept:  # said as any version not kept is: a refine starts from its deliverables
            self.recorder.record("snapshot", SnapshotKept(size=0, note=NOT_KEPT_SCORED))
            return
        try:
            kept = snapshot_save(run=self.run, session=session)
        except Exception as error:
            log.warning("Run %s: keeping its /testbed failed: %s", self.run.pk, error)
            kept = f"This version's files could not be kept for a refine ({type(error).__name__})."
        if isinstance(kept, str):
            self.recorder.record("snapshot", SnapshotKept(size=0, note=kept))
        else:
            self.recorder.record("snapshot", SnapshotKept(size=kept.size, note=kept.left_out or None))

    def _stop_sandbox(self) -> None:
        """Called by the supervisor after a cancel's grace period, from its timer thread."""
        if self.session is not None:
            self.session.stop_sandbox()

    def _release_sandbox(self) -> None:
        """Release the run's sandbox, once: its time is the run's sandbox time."""
        session, self.session = self.session, None
        if session is None:
            return
        try:
            session.close()
        except Exception:
            log.exception("Run %s: releasing the sandbox failed; it was stopped", self.run.pk)
        self.usage += RunUsage(sandbox_seconds=session.sandbox_seconds)

    def _close_recorder(self) -> None:
        try:
            self.recorder.close()
        except Exception:
            log.exception("Run %s: could not store its last events", self.run.pk)


# Where the run ends cancelled; execute() replaces it with the reason naming who cancelled.
CANCELLED_REASON = "Cancelled."


def ending_for(outcome: AgentOutcome, limits: AgentLimits) -> Ending:
    """The run's final status for how its agent ended, with the reason a person reads."""
    detail = f" {outcome.message}" if outcome.message else ""
    match outcome.reason:
        case OutcomeReason.SUBMITTED:
            return Ending(RunStatus.SUCCEEDED, outcome.message or "The agent submitted its work.")
        case OutcomeReason.CANCELLED:
            return Ending(RunStatus.CANCELLED, CANCELLED_REASON)
        case OutcomeReason.TIME_LIMIT:
            return Ending(RunStatus.TIMED_OUT, f"Stopped at the time limit of {int(limits.max_wall_seconds or 0)} s.")
        case OutcomeReason.STEP_LIMIT:
            return Ending(
                RunStatus.LIMIT_REACHED,
                f"Stopped at this run's step limit ({limits.max_steps} steps); the files made so far are kept.",
            )
        case OutcomeReason.TOKEN_LIMIT:
            return Ending(
                RunStatus.LIMIT_REACHED,
                f"Stopped at this run's token limit ({limits.max_tokens} tokens); the files made so far are kept.",
            )
        case OutcomeReason.BUDGET_EXHAUSTED:
            return Ending(
                RunStatus.QUOTA_EXCEEDED, f"{outcome.message} The run was stopped; the files made so far are kept."
            )
        case OutcomeReason.MODEL_ERROR:
            return Ending(RunStatus.FAILED, f"The model failed.{detail}")
        case OutcomeReason.SANDBOX_ERROR:
            return Ending(RunStatus.FAILED, f"The sandbox failed.{detail}")
        case _:  # mypy holds every reason to a case above
            assert_never(outcome.reason)

"""The LLM-in-Sandbox agent loop: ask the model, run its tool calls in the
sandbox, hand back the observations, until it submits or a limit is reached.

`run_agent` never raises for model or tool misbehaviour: it reports an
"error" event and returns an outcome saying why the run ended.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, assert_never

from sandboxes.agent.blocking_calls import Stopped, run_in_worker
from sandboxes.agent.config import agent_setting
from sandboxes.agent.conversation import Conversation
from sandboxes.agent.events import (
    AgentEvent,
    AgentLimits,
    AgentOutcome,
    AssistantMessage,
    BudgetCheck,
    Continuation,
    Emit,
    ErrorReport,
    EventPayload,
    Finished,
    Inbox,
    OutcomeReason,
    PersonMessage,
    StepStarted,
    TextDelta,
    ToolCall,
    ToolOutputDelta,
    ToolResult,
    UsageReport,
)
from sandboxes.agent.model import (
    ContextOverflowError,
    ModelCancelled,
    ModelClient,
    ModelError,
    ModelReply,
    ToolCallRequest,
)
from sandboxes.agent.prompts import (
    NO_TOOL_CALL_NUDGE,
    SHARED_BUDGET_NOTE,
    TIME_BUDGET_NOTE,
    TOKEN_BUDGET_NOTE,
    earlier_messages,
    person_message,
    refine_message,
    steps_left_note,
    system_prompt,
    task_message,
)
from sandboxes.agent.tool_schemas import TOOL_SCHEMAS
from sandboxes.agent.tools import Editor, InvalidCall, SandboxFailure, ToolOutcome, ToolRunner, parse_arguments
from sandboxes.agent.usage import RunUsage
from sandboxes.runtime import Sandbox

log = logging.getLogger(__name__)

MAX_CONTEXT_SHRINKS_PER_STEP = 8
TIME_NOTE_FRACTION = 0.1  # warn the model when this share of the wall time is left
MIN_COMMAND_TIMEOUT = 1.0


class _RunEnded(Exception):
    def __init__(self, reason: OutcomeReason, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def run_agent(
    *,
    sandbox: Sandbox,
    model: ModelClient,
    brief: str,
    limits: AgentLimits,
    emit: Emit,
    cancel: threading.Event | None = None,
    input_files: Sequence[str] = (),
    editor: Editor | None = None,
    over_budget: BudgetCheck | None = None,
    continuation: Continuation | None = None,
    inbox: Inbox | None = None,
    renamed_inputs: Mapping[str, str] | None = None,
) -> AgentOutcome:
    """Drive `model` on `brief` inside `sandbox` until it submits or a limit
    ends the run. Events go to `emit`, synchronously, on this thread.

    `renamed_inputs`: of `input_files`, those given a name other than the person's
    (name -> the person's), so the model knows which file the brief means.

    `over_budget`, asked before each step, says when a budget beyond the run's
    own limits is used up (its message); the model then gets one step to
    submit, as for the run's own token limit, and the run ends
    `OutcomeReason.BUDGET_EXHAUSTED` with that message.

    `continuation` makes the run a refine of earlier work: the model gets the earlier
    requests and summaries, then the instruction. `inbox`, asked before each model
    request, brings what people watching said; each becomes a message the model reads."""
    agent = _AgentRun(
        sandbox=sandbox,
        model=model,
        limits=limits,
        emit=emit,
        cancel=cancel,
        editor=editor,
        over_budget=over_budget,
        inbox=inbox,
    )
    prompt = system_prompt(agent_setting("ARTIFACT_PAGE_HOSTS"))
    if continuation is None:
        return agent.run(Conversation(prompt, task_message(brief, list(input_files), renamed_inputs)))
    return agent.run(Conversation(prompt, refine_message(continuation), earlier=earlier_messages(continuation)))


class _AgentRun:
    def __init__(
        self,
        *,
        sandbox: Sandbox,
        model: ModelClient,
        limits: AgentLimits,
        emit: Emit,
        cancel: threading.Event | None,
        editor: Editor | None,
        over_budget: BudgetCheck | None = None,
        inbox: Inbox | None = None,
    ) -> None:
        self._model = model
        self._inbox = inbox
        self._over_budget = over_budget
        self._limits = limits
        self._emit_event = emit
        self._cancel = cancel or threading.Event()
        # Set when the run stops for any reason, so a model request still
        # streaming in its worker thread gives up at the next chunk.
        self._halt = threading.Event()
        self._tools = ToolRunner(sandbox, editor=editor)
        self._started = time.monotonic()
        self._deadline = None if limits.max_wall_seconds is None else self._started + limits.max_wall_seconds
        self._steps = 0
        self._usage = RunUsage()  # of the model's replies

    def run(self, conversation: Conversation) -> AgentOutcome:
        reason: OutcomeReason
        try:
            reason, message = self._loop(conversation)
        except _RunEnded as ended:
            reason, message = ended.reason, ended.message
        except Stopped as stopped:
            reason, message = stopped.reason, self._stop_message(stopped.reason)
        finally:
            self._halt.set()
        self._emit("finished", Finished(reason=reason, steps=self._steps, message=message))
        return AgentOutcome(reason=reason, message=message, usage=replace(self._usage, steps=self._steps))

    # --- the loop -------------------------------------------------------

    def _loop(self, conversation: Conversation) -> tuple[OutcomeReason, str]:
        max_steps = self._limits.max_steps
        submit_asked = False  # told to submit because a budget ran out; the next step over one ends the run
        time_note_given = False
        for step in range(1, max_steps + 1):
            self._check_stop()
            spent = self._budget_spent()
            if spent is not None:
                if submit_asked:
                    return spent
                own = spent[0] is OutcomeReason.TOKEN_LIMIT
                conversation.append_to_last(TOKEN_BUDGET_NOTE if own else SHARED_BUDGET_NOTE)
                submit_asked = True
            elif not time_note_given and self._time_nearly_up():
                conversation.append_to_last(TIME_BUDGET_NOTE)
                time_note_given = True
            self._steps = step
            self._emit("step_started", StepStarted(step=step, remaining=max_steps - step))
            self._read_inbox(conversation, step)
            reply = self._ask(conversation, step)
            calls = _with_unique_ids(reply.tool_calls, step)
            self._emit(
                "assistant_message", AssistantMessage(step=step, content=reply.content, reasoning=reply.reasoning)
            )
            conversation.add_assistant(reply, calls)
            if not calls:
                conversation.add_user_note(NO_TOOL_CALL_NUDGE)
            for call in calls:
                outcome = self._run_call(call, step)
                if outcome.submitted:
                    return OutcomeReason.SUBMITTED, outcome.summary or "The agent submitted its work."
                conversation.add_tool_result(call.call_id, outcome.output)
            if step < max_steps:
                conversation.append_to_last(steps_left_note(max_steps - step))
        return OutcomeReason.STEP_LIMIT, self._stop_message(OutcomeReason.STEP_LIMIT)

    def _ask(self, conversation: Conversation, step: int) -> ModelReply:
        for _ in range(MAX_CONTEXT_SHRINKS_PER_STEP + 1):
            try:
                reply = self._request(conversation, step)
            except ContextOverflowError as overflow:
                log.info("step %d: %s; shortening the history", step, overflow)
                if not conversation.shrink():
                    raise self._failure(
                        OutcomeReason.MODEL_ERROR,
                        step,
                        f"The conversation no longer fits the model's context window ({overflow}).",
                    ) from None
                continue
            self._record_usage(reply, step)
            return reply
        raise self._failure(
            OutcomeReason.MODEL_ERROR, step, "The conversation could not be made to fit the model's context window."
        ) from None

    def _request(self, conversation: Conversation, step: int) -> ModelReply:
        def forward(item: tuple[str, str]) -> None:
            self._emit(item[0], TextDelta(step=step, text=item[1]))

        def call(push: Any) -> ModelReply:
            return self._model.complete(
                conversation.messages,
                TOOL_SCHEMAS,
                on_text=lambda text: push(("assistant_delta", text)),
                on_reasoning=lambda text: push(("reasoning_delta", text)),
                cancel=self._halt,
            )

        try:
            return run_in_worker(call, forward=forward, cancel=self._cancel, deadline=self._deadline)
        except ModelCancelled:
            self._check_stop()
            raise Stopped(OutcomeReason.CANCELLED) from None
        except ContextOverflowError:
            raise
        except ModelError as error:
            raise self._failure(OutcomeReason.MODEL_ERROR, step, str(error)) from None
        except Stopped:
            raise
        except Exception as error:  # a broken client must not crash the run
            log.exception("model client failed")
            raise self._failure(
                OutcomeReason.MODEL_ERROR,
                step,
                f"The model client failed unexpectedly: {type(error).__name__}: {error}",
            ) from None

    def _run_call(self, call: ToolCallRequest, step: int) -> ToolOutcome:
        try:
            arguments = parse_arguments(call.arguments)
            problem = None
        except InvalidCall as invalid:
            arguments, problem = {"raw": call.arguments}, invalid
        self._emit("tool_call", ToolCall(step=step, call_id=call.call_id, name=call.name, arguments=arguments))
        try:
            if problem is not None:
                raise problem
            outcome = self._run_tool(call, arguments, step)
        except InvalidCall as invalid:
            outcome = ToolOutcome(output=f"Error: {invalid}. The call was not run.", is_error=True)
        self._emit(
            "tool_result",
            ToolResult(
                step=step,
                call_id=call.call_id,
                name=call.name,
                output=outcome.output,
                is_error=outcome.is_error,
                exit_code=outcome.exit_code,
                duration=round(outcome.duration, 4),
            ),
        )
        return outcome

    def _run_tool(self, call: ToolCallRequest, arguments: dict[str, Any], step: int) -> ToolOutcome:
        def forward(text: str) -> None:
            self._emit("tool_output_delta", ToolOutputDelta(step=step, call_id=call.call_id, text=text))

        timeout = self._command_timeout()
        try:
            return run_in_worker(
                lambda push: self._tools.run(call.name, arguments, timeout=timeout, on_output=push),
                forward=forward,
                cancel=self._cancel,
                deadline=None if self._deadline is None else self._deadline + 5.0,
            )
        except SandboxFailure as failure:
            self._check_stop()  # stopping the sandbox is how a cancel interrupts a command
            raise self._failure(OutcomeReason.SANDBOX_ERROR, step, str(failure)) from None

    def _read_inbox(self, conversation: Conversation, step: int) -> None:
        if self._inbox is None:
            return
        try:
            arrived = self._inbox()
        except Exception:  # the caller's inbox failing must not end the run; the messages wait
            log.exception("reading the run's messages failed; going on")
            return
        for message in arrived:
            conversation.add_user_note(person_message(message.author, message.text))
            self._emit("person_message", PersonMessage(step=step, author=message.author, text=message.text))

    # --- limits and bookkeeping -----------------------------------------

    def _record_usage(self, reply: ModelReply, step: int) -> None:
        report = UsageReport.of_reply(step, reply.usage)
        self._usage += report.run_usage()
        self._emit("usage", report)

    def _budget_spent(self) -> tuple[OutcomeReason, str] | None:
        """The run's own token budget, then the caller's: (reason, message) for the first used up."""
        if self._tokens_exhausted():
            return OutcomeReason.TOKEN_LIMIT, self._stop_message(OutcomeReason.TOKEN_LIMIT)
        if self._over_budget is None:
            return None
        try:
            message = self._over_budget()
        except Exception:  # the caller's check failing must not end the run
            log.exception("the budget check failed; going on")
            return None
        return None if message is None else (OutcomeReason.BUDGET_EXHAUSTED, message)

    def _tokens_exhausted(self) -> bool:
        budget = self._limits.max_tokens
        return budget is not None and self._usage.total_tokens >= budget

    def _time_nearly_up(self) -> bool:
        if self._deadline is None or self._limits.max_wall_seconds is None:
            return False
        return self._deadline - time.monotonic() <= self._limits.max_wall_seconds * TIME_NOTE_FRACTION

    def _command_timeout(self) -> float:
        timeout = self._limits.command_timeout
        if self._deadline is not None:
            timeout = min(timeout, max(MIN_COMMAND_TIMEOUT, self._deadline - time.monotonic()))
        return timeout

    def _check_stop(self) -> None:
        if self._cancel.is_set():
            raise Stopped(OutcomeReason.CANCELLED)
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise Stopped(OutcomeReason.TIME_LIMIT)

    def _stop_message(
        self,
        reason: Literal[
            OutcomeReason.CANCELLED, OutcomeReason.TIME_LIMIT, OutcomeReason.STEP_LIMIT, OutcomeReason.TOKEN_LIMIT
        ],
    ) -> str:
        limits = self._limits
        match reason:
            case OutcomeReason.CANCELLED:
                return "The run was cancelled."
            case OutcomeReason.TIME_LIMIT:
                return f"The run reached its time limit of {limits.max_wall_seconds or 0:g} s."
            case OutcomeReason.STEP_LIMIT:
                return f"The run reached its limit of {limits.max_steps} steps without submitting."
            case OutcomeReason.TOKEN_LIMIT:
                return f"The run used up its budget of {limits.max_tokens} tokens."
            case _:
                assert_never(reason)

    def _failure(
        self, reason: Literal[OutcomeReason.MODEL_ERROR, OutcomeReason.SANDBOX_ERROR], step: int, message: str
    ) -> _RunEnded:
        """Report the error; the caller raises what this returns to end the run."""
        self._emit("error", ErrorReport(step=step, message=message))
        return _RunEnded(reason, message)

    def _emit(self, kind: str, payload: EventPayload) -> None:
        self._emit_event(AgentEvent(kind=kind, payload=payload))


def _with_unique_ids(calls: list[ToolCallRequest], step: int) -> list[ToolCallRequest]:
    """Some endpoints omit or repeat call ids; the conversation needs them unique."""
    seen: set[str] = set()
    fixed = []
    for index, call in enumerate(calls):
        call_id = call.call_id
        if not call_id or call_id in seen:
            call_id = f"call_{step}_{index}"
        seen.add(call_id)
        fixed.append(ToolCallRequest(call_id=call_id, name=call.name, arguments=call.arguments))
    return fixed

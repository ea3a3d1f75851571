"""Recording what happens in a run as RunEvents: gapless, stored before announced.

Sequence numbers come from `Run.last_seq`, bumped by a conditional UPDATE in
the same transaction that inserts the events. The UPDATE row-locks the run
until commit, so writers (the worker's threads, the reaper) take turns and
the committed events of a run are always a gapless prefix 1..last_seq. The
UPDATE only matches an active run: once a run has its final status, nothing
can be appended after the final event (a worker that was presumed dead and
wakes up learns here that its run is over).

Streamed text (command output, model text) arrives in tiny pieces; the
recorder coalesces pieces of the same stream for about 100 ms or 8 KB, so a
flood of output makes a bounded number of rows. A payload larger than about
32 KB keeps a prefix inline and the whole text goes to a file (Django
storage) that the event points to; the run counts the bytes of those files
(`Run.event_file_bytes`, for its workspace's storage).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from pydantic import BaseModel

from creations.events.announce import announce
from creations.events.flusher import flusher
from creations.events.payload_cap import cap_payload, count_event_files
from creations.events.schema import StoredToolResult, check_event, stored_form
from creations.events.storable import storable_payload
from creations.models import ACTIVE_STATUSES, LIVE_COUNTERS, Run, RunEvent
from sandboxes.agent.events import TextDelta, ToolOutputDelta, ToolResult

log = logging.getLogger(__name__)

# Streamed text whose pieces are merged into one event: the model's (`assistant_delta`,
# `reasoning_delta`: a stream per kind and step) and a command's (`tool_output_delta`: per call).
StreamPiece = TextDelta | ToolOutputDelta
STREAM_TRUNCATED_NOTE = "\n[live output truncated here: the command printed more than {limit} bytes]\n"
RUN_STREAM_TRUNCATED_NOTE = (
    "\n[live output stops here: this run has streamed more than {limit} bytes, so from now on only each"
    " command's result is kept (as the model saw it); the full output stays in the sandbox's own files]\n"
)

EventItem = tuple[str, dict[str, Any]]  # a kind and its payload's stored form (JSON)


def event_wire(event: RunEvent) -> dict[str, Any]:
    """The JSON shape clients receive (websocket and announcements)."""
    return {"seq": event.seq, "kind": event.kind, "payload": event.payload, "at": event.created_at.isoformat()}


# --- storing ---------------------------------------------------------------


def store_events(
    run_id: int,
    items: Sequence[EventItem],
    *,
    require_active: bool = True,
    announce_after: bool = True,
    add: Mapping[str, int | float] | None = None,
) -> list[RunEvent] | None:
    """Store `items` with the next seqs, then announce them. Returns None (and
    stores nothing) when `require_active` and the run has already ended.

    `add`: amounts added to the run's counters (column -> amount) in the same
    write, the usage its events report (the caller names the columns)."""
    if not items:
        return []
    capped = [(kind, cap_payload(run_id, storable_payload(payload))) for kind, payload in items]
    count_event_files(run_id, capped)
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        events = insert_events_one_statement(run_id, capped, require_active=require_active, add=add)
    else:
        with transaction.atomic():
            events = insert_events_locked(run_id, capped, require_active=require_active, add=add)
    if events is None:
        return None
    if announce_after:
        announce_events(run_id, events)
    return events


def announce_events(run_id: int, events: Sequence[RunEvent]) -> None:
    if events:
        announce(run_id, last_seq=events[-1].seq, events=[event_wire(e) for e in events])


def insert_events_locked(
    run_id: int, items: Sequence[EventItem], *, require_active: bool, add: Mapping[str, int | float] | None = None
) -> list[RunEvent] | None:
    """Allocate seqs and insert; call inside a transaction."""
    _check(items)
    table = Run._meta.db_table
    added, params = _counter_increments(len(items), add)
    sql = f"UPDATE {table} SET {added} WHERE id = %s"  # noqa: S608 - table and column names are ours
    params.append(run_id)
    if require_active:
        sql += " AND status IN (" + ", ".join(["%s"] * len(ACTIVE_STATUSES)) + ")"
        params += [str(s) for s in ACTIVE_STATUSES]
    with connection.cursor() as cursor:
        cursor.execute(sql + " RETURNING last_seq", params)
        row = cursor.fetchone()
    if row is None:
        return None
    first = int(row[0]) - len(items) + 1
    now = timezone.now()
    events = [
        RunEvent(run_id=run_id, seq=first + i, kind=kind, payload=payload, created_at=now)
        for i, (kind, payload) in enumerate(items)
    ]
    RunEvent.objects.bulk_create(events)
    return events


def insert_events_one_statement(
    run_id: int, items: Sequence[EventItem], *, require_active: bool, add: Mapping[str, int | float] | None = None
) -> list[RunEvent] | None:
    """`insert_events_locked` as ONE statement in autocommit (PostgreSQL): the
    seq bump (and the counters `add` names) and the inserts in a CTE, so one
    round trip instead of four (BEGIN, UPDATE, INSERT, COMMIT). Events are
    stored for every run step, so this is the worker's most frequent write.
    Same guarantees: the UPDATE row-locks the run until the statement commits;
    no active run, no rows (and nothing added)."""
    _check(items)
    run_table, event_table = Run._meta.db_table, RunEvent._meta.db_table
    status_filter = ""
    added, params = _counter_increments(len(items), add)
    params.append(run_id)
    if require_active:
        status_filter = " AND status IN (" + ", ".join(["%s"] * len(ACTIVE_STATUSES)) + ")"
        params += [str(s) for s in ACTIVE_STATUSES]
    now = timezone.now()
    kinds = [kind for kind, _ in items]
    payloads = [json.dumps(payload, ensure_ascii=False) for _, payload in items]
    sql = (
        f"WITH bumped AS (UPDATE {run_table} SET {added} WHERE id = %s{status_filter}"  # noqa: S608 - our tables
        " RETURNING last_seq)"
        f" INSERT INTO {event_table} (run_id, seq, kind, payload, created_at)"
        " SELECT %s, bumped.last_seq - %s + item.ord, item.kind, item.payload::jsonb, %s"
        " FROM bumped, unnest(%s::text[], %s::text[]) WITH ORDINALITY AS item(kind, payload, ord)"
        " RETURNING seq"
    )
    params += [run_id, len(items), now, kinds, payloads]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        seqs = [int(row[0]) for row in cursor.fetchall()]
    if not seqs:
        return None
    first = min(seqs)
    return [
        RunEvent(run_id=run_id, seq=first + i, kind=kind, payload=payload, created_at=now)
        for i, (kind, payload) in enumerate(items)
    ]


def _counter_increments(count: int, add: Mapping[str, int | float] | None) -> tuple[str, list[Any]]:
    """The SET clause bumping `last_seq` by `count` and each counter by its amount, and its parameters."""
    clauses: list[str] = ["last_seq = last_seq + %s"]
    params: list[Any] = [count]
    for column, amount in (add or {}).items():
        if column not in LIVE_COUNTERS:
            raise ValueError(f"{column!r} is not a counter of a run")
        if amount:
            clauses.append(f"{column} = {column} + %s")
            params.append(amount)
    return ", ".join(clauses), params


def _check(items: Sequence[EventItem]) -> None:
    for kind, payload in items:
        check_event(kind, payload)


# --- the recorder ------------------------------------------------------------


@dataclass
class _Pending:
    kind: str
    key: tuple[Any, ...]
    first: StreamPiece
    pieces: list[str] = field(default_factory=list)
    size: int = 0

    def item(self) -> EventItem:
        return self.kind, stored_form(self.first.model_copy(update={"text": "".join(self.pieces)}))


class EventRecorder:
    """Stores a run's events in order from any thread; coalesces streamed text.

    `record()` stores non-streamed events at once (together with anything
    waiting, which comes first), or with `hold=True` lets them wait to be
    stored with the events after them: a run's worker holds a step's events
    until the next step starts, so a step is one write and one announcement
    instead of one per event. Whatever waits (held events, streamed pieces)
    is stored at most `coalesce_seconds` after the first of it (the process's
    flusher thread: a long command's call still shows while it runs), or once
    streamed text reaches `coalesce_bytes`. `ended` turns true when the run
    turned out to be final already.
    """

    def __init__(
        self,
        run_id: int,
        *,
        coalesce_seconds: float | None = None,
        coalesce_bytes: int | None = None,
        stream_max_per_call: int | None = None,
        stream_max_per_run: int | None = None,
    ) -> None:
        self.run_id = run_id
        self.coalesce_seconds = settings.RUN_EVENT_COALESCE_SECONDS if coalesce_seconds is None else coalesce_seconds
        self.coalesce_bytes = coalesce_bytes or settings.RUN_EVENT_COALESCE_BYTES
        self.stream_max_per_call = stream_max_per_call or settings.RUN_STREAM_MAX_BYTES_PER_CALL
        # Live text of the whole run (command output, model text): one run cannot fill the database.
        self.stream_max_per_run = stream_max_per_run or settings.RUN_STREAM_MAX_BYTES_PER_RUN
        self._run_streamed = 0
        self._run_cut = False  # the run's live text reached its cap (said once)
        self.ended = False
        self._lock = threading.RLock()
        self._pending: _Pending | None = None  # the stream text being merged
        self._waiting: list[EventItem] = []  # held events and finished stream text, before `_pending`
        self._waiting_bytes = 0  # of stream text in `_waiting`
        self._waiting_since: float | None = None  # when the first of what waits (here or `_pending`) came
        self._add: dict[str, int | float] = {}  # counters the waiting events add to the run
        self._streamed: dict[str, int] = {}  # call_id -> bytes of live output kept
        self._omitted: dict[str, int] = {}  # call_id -> bytes of live output left out
        self._closed = False

    # --- public ---

    def record(
        self, kind: str, payload: BaseModel, *, hold: bool = False, add: Mapping[str, int | float] | None = None
    ) -> None:
        """Store an event of `kind` (its payload of the schema creations/events/schema.py gives the kind);
        `hold`: it may wait to be stored with the next events (see the class). `add`: amounts its
        storing adds to the run's counters (column -> amount), in the same write."""
        with self._lock:
            if self._closed:
                return
            if isinstance(payload, StreamPiece):
                self._add_piece(kind, payload)
                return
            if isinstance(payload, ToolResult) and self._omitted.get(payload.call_id):
                omitted = self._omitted[payload.call_id]
                payload = StoredToolResult(**payload.model_dump(exclude_unset=True), stream_omitted_bytes=omitted)
            self._close_pending()
            self._wait((kind, stored_form(payload)))
            for column, amount in (add or {}).items():
                self._add[column] = self._add.get(column, 0) + amount
            if not hold:
                self._store_waiting()

    def flush(self) -> None:
        with self._lock:
            self._store_waiting()

    def close(self) -> None:
        with self._lock:
            self._store_waiting()
            self._closed = True

    # --- internals (called with the lock held) ---

    def _add_piece(self, kind: str, payload: StreamPiece) -> None:
        call_id = payload.call_id if isinstance(payload, ToolOutputDelta) else None
        text = payload.text
        if call_id is not None:
            text = self._within_stream_cap(call_id, text)
        text = self._within_run_cap(call_id, text)
        if not text:
            return
        key = (kind, payload.step, call_id)
        pending = self._pending
        if pending is not None and pending.key != key:
            self._close_pending()
            pending = None
        if pending is None:
            self._note_waiting()
            pending = self._pending = _Pending(kind=kind, key=key, first=payload)
        pending.pieces.append(text)
        pending.size += len(text.encode())
        if self._waiting_bytes + pending.size >= self.coalesce_bytes:
            self._store_waiting()

    def _within_stream_cap(self, call_id: str, text: str) -> str:
        kept = self._streamed.get(call_id, 0)
        size = len(text.encode())
        if kept + size <= self.stream_max_per_call:
            self._streamed[call_id] = kept + size
            return text
        room = max(0, self.stream_max_per_call - kept)
        first_cut = call_id not in self._omitted
        self._omitted[call_id] = self._omitted.get(call_id, 0) + size - room
        self._streamed[call_id] = self.stream_max_per_call
        head = text.encode()[:room].decode(errors="ignore")
        return head + (STREAM_TRUNCATED_NOTE.format(limit=self.stream_max_per_call) if first_cut else "")

    def _within_run_cap(self, call_id: str | None, text: str) -> str:
        """`text` within what is left of the run's live text; `call_id` names a command's output."""
        size = len(text.encode())
        if self._run_streamed + size <= self.stream_max_per_run:
            self._run_streamed += size
            return text
        room = max(0, self.stream_max_per_run - self._run_streamed)
        first_cut, self._run_cut = not self._run_cut, True
        self._run_streamed = self.stream_max_per_run
        if call_id is not None:
            self._omitted[call_id] = self._omitted.get(call_id, 0) + size - room
        head = text.encode()[:room].decode(errors="ignore")
        return head + (RUN_STREAM_TRUNCATED_NOTE.format(limit=self.stream_max_per_run) if first_cut else "")

    def _note_waiting(self) -> None:
        """Something starts to wait: the flusher stores it once it has waited its while."""
        if self._waiting_since is None:
            self._waiting_since = time.monotonic()
            flusher().schedule(self, self._waiting_since + self.coalesce_seconds)

    def _wait(self, item: EventItem) -> None:
        self._note_waiting()
        self._waiting.append(item)

    def _close_pending(self) -> None:
        """The stream text being merged is complete: it waits in order with the rest."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self._waiting.append(pending.item())
            self._waiting_bytes += pending.size

    def _store_waiting(self) -> None:
        self._close_pending()
        items, add = self._waiting, self._add
        self._waiting, self._waiting_bytes, self._waiting_since, self._add = [], 0, None, {}
        if not items or self.ended:
            return
        if store_events(self.run_id, items, add=add) is None:
            self.ended = True
            log.info("Run %s already ended; dropping %d late event(s).", self.run_id, len(items))

    def flush_if_due(self, now: float) -> float | None:
        """Called by the flusher: store what waits if it waited long enough;
        returns when to look again (None: nothing pending)."""
        with self._lock:
            if self._waiting_since is None or self._closed:
                return None
            due = self._waiting_since + self.coalesce_seconds
            if due > now:
                return due
            try:
                self._store_waiting()
            except Exception:  # losing a piece beats a dead flusher
                log.exception("Could not store streamed output of run %s", self.run_id)
            return None

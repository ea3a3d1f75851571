"""Where a live event's time goes, hop by hop, read from a packet capture of the loopback interface
(tcpdump's pcap file) taken while the stream benchmark's one-run phase ran (bench/stream.py --hops).

Every hop is timed by the kernel as the packet crossed the interface, so no process of the stack is
changed or slowed to be measured, and a stalled process shows as a late packet. Each event is found
by its stored time (`created_at`, set by the worker as it writes the event), which every hop carries:
in the SQL of the worker's INSERT, in the announcement it publishes to Redis, and in the JSON that
daphne sends each watcher. From that time:

- `insert_sent`: the worker's INSERT leaves for PostgreSQL;
- `stored`: PostgreSQL's answer to it (the statement committed: the worker writes events in
  autocommit, or the COMMIT's answer when they are part of a bigger transaction);
- `published`: the worker's PUBLISH of the announcement leaves for Redis;
- `delivered`: Redis sends the announcement on to its first subscriber (daphne, or the benchmark's own
  listener on the channel layer: Redis writes to both within a fraction of a millisecond);
- `websocket_sent` and `sse_sent`: daphne sends the event to the watching websocket and to the
  API's event stream.

The hops of the slowest 2% of events, beside every event's, say which process the tail is in.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import shutil
import signal
import statistics
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dpkt

# A stored time as the INSERT's SQL writes it and as the JSON does (isoformat), in UTC.
STORED_TIME = re.compile(rb"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d\.\d{1,6})\+00(?::00)?")
HOPS = ("insert_sent", "stored", "published", "delivered", "websocket_sent", "sse_sent")
WORKER_AND_REDIS_HOPS = HOPS[:4]


@dataclass(frozen=True)
class Packet:
    at: float  # seconds since the epoch, as the kernel stamped it
    source_port: int
    destination_port: int
    payload: bytes


@dataclass(frozen=True)
class Ports:
    """Which TCP ports the stack's servers listen on."""

    web: int
    redis: int
    postgres: int

    @classmethod
    def of_stack(cls, web_port: int, redis_url: str, database: Mapping[str, Any]) -> Ports:
        """The ports of daphne on `web_port`, the Redis at `redis_url` and the database Django uses."""
        return cls(web_port, urlsplit(redis_url).port or 6379, int(database.get("PORT") or 5432))


@dataclass
class _Batch:
    """Events the worker wrote in one statement: they share their stored time and the hops up to
    daphne; daphne then sends each event on each transport ("websocket" and "sse") by itself."""

    hops: dict[str, float] = field(default_factory=dict)
    sent: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # (sent, watcher connected)

    def saw(self, hop: str, at: float) -> None:
        self.hops.setdefault(hop, at)


@contextlib.contextmanager
def loopback_captured(pcap: Path, ports: Ports) -> Iterator[None]:
    """tcpdump writing the stack's traffic on the loopback interface to `pcap` meanwhile (needs root)."""
    tcpdump = shutil.which("tcpdump")
    if tcpdump is None:
        raise SystemExit("--hops needs tcpdump (apt-get install tcpdump)")
    wanted = " or ".join(f"port {port}" for port in (ports.web, ports.redis, ports.postgres))
    capture = subprocess.Popen(
        [tcpdump, "-i", "lo", "-s", "0", "-B", "65536", "-U", "-w", str(pcap), f"tcp and ({wanted})"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 10
    while not pcap.exists() and capture.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # capturing once tcpdump has opened its file
    if capture.poll() is not None:
        raise SystemExit(f"tcpdump did not start: {capture.communicate()[1].decode(errors='replace')}")
    try:
        yield
    finally:
        capture.send_signal(signal.SIGINT)  # tcpdump writes what it holds, then ends
        capture.wait(timeout=30)


@contextlib.contextmanager
def hops_timed(pcap: Path | None, ports: Ports, into: dict[str, Any], key: str) -> Iterator[None]:
    """With a capture file, the block's loopback traffic captured into it, and then the hops of the
    live events stored meanwhile summarized in `into[key]` (and printed); with None, the block alone."""
    if pcap is None:
        yield
        return
    started_at = time.time()
    with loopback_captured(pcap, ports):
        yield
    into[key] = hop_summary(event_hops(packets(pcap), ports), since=started_at)
    print(key, into[key], flush=True)


def packets(pcap: Path) -> Iterator[Packet]:
    """The TCP packets with a payload in a pcap file (IPv4 over Ethernet, as tcpdump writes loopback)."""
    with pcap.open("rb") as file:
        for at, frame in dpkt.pcap.Reader(file):
            ip = dpkt.ethernet.Ethernet(frame).data
            if isinstance(ip, dpkt.ip.IP) and isinstance(ip.data, dpkt.tcp.TCP) and ip.data.data:
                tcp = ip.data
                yield Packet(float(at), tcp.sport, tcp.dport, bytes(tcp.data))


def _stored_times(payload: bytes) -> list[str]:
    return [(m.group(1) + b"T" + m.group(2)).decode() for m in STORED_TIME.finditer(payload)]


def _seconds(stored_time: str) -> float:
    return datetime.fromisoformat(stored_time + "+00:00").timestamp()


def event_hops(captured: Iterator[Packet], ports: Ports) -> list[dict[str, float]]:
    """Each event's hops (seconds since the epoch) and its stored time (`stored_time`); the live ones
    only, as the benchmark counts them: stored once the watcher it was sent to had connected (the
    history a watcher is sent as it connects is not live latency)."""
    batches: dict[str, _Batch] = {}
    awaiting_answer: dict[int, list[str]] = {}  # the worker's port -> batches whose INSERT has no answer yet
    opened: dict[int, float] = {}  # a watcher's port -> when daphne accepted its websocket or stream
    for packet in captured:
        times = _stored_times(packet.payload)
        if packet.destination_port == ports.postgres:
            if b"INSERT INTO" in packet.payload and b"runevent" in packet.payload and times:
                for stored_time in set(times):
                    batches.setdefault(stored_time, _Batch()).saw("insert_sent", packet.at)
                awaiting_answer[packet.source_port] = sorted(set(times))
        elif packet.source_port == ports.postgres:
            # The INSERT's answer in autocommit (its ReadyForQuery says idle: committed); in a
            # transaction, the COMMIT's.
            committed = b"COMMIT" in packet.payload or (
                b"INSERT 0" in packet.payload and b"Z\x00\x00\x00\x05I" in packet.payload
            )
            if committed and packet.destination_port in awaiting_answer:
                for stored_time in awaiting_answer.pop(packet.destination_port):
                    batches[stored_time].saw("stored", packet.at)
        elif packet.destination_port == ports.redis and b"PUBLISH" in packet.payload:
            for stored_time in set(times):
                batches.setdefault(stored_time, _Batch()).saw("published", packet.at)
        elif packet.source_port == ports.redis:
            for stored_time in set(times):
                batches.setdefault(stored_time, _Batch()).saw("delivered", packet.at)
        elif packet.source_port == ports.web:
            if packet.payload.startswith(b"HTTP/1.1 101") or b"text/event-stream" in packet.payload[:300]:
                opened[packet.destination_port] = packet.at
            if times and b'"at"' in packet.payload:
                kind = "websocket" if packet.payload[:1] == b"\x81" else "sse"
                connected = opened.get(packet.destination_port, float("inf"))
                for stored_time in times:  # once per event the packet carries
                    batches.setdefault(stored_time, _Batch()).sent.setdefault(kind, []).append((packet.at, connected))
    events = []
    for stored_time, batch in batches.items():
        if not all(hop in batch.hops for hop in WORKER_AND_REDIS_HOPS):
            continue  # not the worker's (the benchmark's own writes), or not announced
        stored_at = _seconds(stored_time)
        on_both = zip(batch.sent.get("websocket", []), batch.sent.get("sse", []), strict=False)
        for (websocket_sent, websocket_connected), (sse_sent, sse_connected) in on_both:
            if stored_at >= max(websocket_connected, sse_connected):
                events.append(
                    {"stored_time": stored_at, **batch.hops, "websocket_sent": websocket_sent, "sse_sent": sse_sent}
                )
    return events


def hop_summary(events: list[dict[str, float]], *, since: float = 0.0) -> dict[str, Any]:
    """Per hop, ms from the stored time (p50, p99), over the events stored after `since`; and the
    mean time between consecutive hops for the slowest 2% of events by websocket, beside that of
    all of them."""
    after_stored = [
        {hop: (event[hop] - event["stored_time"]) * 1000 for hop in HOPS}
        for event in events
        if event["stored_time"] >= since
    ]
    if not after_stored:
        return {"events": 0}
    report: dict[str, Any] = {"events": len(after_stored)}
    for hop in HOPS:
        values = sorted(e[hop] for e in after_stored)
        report[f"{hop}_ms"] = {
            "p50": round(statistics.median(values), 2),
            "p99": round(values[min(len(values) - 1, int(len(values) * 0.99))], 2),
        }
    slowest = sorted(after_stored, key=lambda e: e["websocket_sent"], reverse=True)
    report["between_hops_mean_ms"] = {
        "slowest_2_percent": _between_hops(slowest[: max(1, len(slowest) // 50)]),
        "all_events": _between_hops(after_stored),
    }
    return report


def _between_hops(events: list[dict[str, float]]) -> dict[str, float]:
    steps = [("stored_time", "insert_sent"), *itertools.pairwise(HOPS[:-1]), ("delivered", "sse_sent")]
    return {
        f"{earlier}->{later}": round(
            statistics.mean(e[later] - (0.0 if earlier == "stored_time" else e[earlier]) for e in events), 2
        )
        for earlier, later in steps
    }

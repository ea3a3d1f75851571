"""A real SMTP server on loopback (aiosmtpd) that keeps what it is sent, for the tests of the
e-mails the platform sends through Django's SMTP backend."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Inbox:
    host: str
    port: int
    received: list[EmailMessage] = field(default_factory=list)
    recipients: list[list[str]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received.append(message_from_bytes(envelope.content, policy=policy.default))
        self.recipients.append(list(envelope.rcpt_tos))
        return "250 Message accepted for delivery"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def smtp_server() -> Iterator[Inbox]:
    inbox = Inbox(host="127.0.0.1", port=_free_port())
    controller = Controller(inbox, hostname=inbox.host, port=inbox.port)
    controller.start()
    try:
        yield inbox
    finally:
        controller.stop()

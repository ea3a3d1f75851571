"""A sandbox task's answer: /testbed/output/answer.txt among its run's artifacts, else the agent's
final message (what it said when it submitted, else its last words)."""

from __future__ import annotations

from dataclasses import dataclass

from creations.evaluations.briefs import ANSWER_FILE
from creations.evaluations.scoring import ANSWER_MAX_CHARS
from creations.models import Artifact, Run, RunEvent

FROM_FILE = "answer.txt"
FROM_FINAL_MESSAGE = "final message"
FROM_REPLY = "reply"


@dataclass(frozen=True)
class Answer:
    text: str
    source: str


def run_answer(run: Run) -> Answer:
    artifact = Artifact.objects.filter(run=run, path=ANSWER_FILE).first()
    if artifact is not None:
        with artifact.file.open("rb") as handle:
            data = handle.read(ANSWER_MAX_CHARS * 4)
        return Answer(data.decode("utf-8", "replace").strip(), FROM_FILE)
    if run.summary.strip():
        return Answer(run.summary.strip(), FROM_FINAL_MESSAGE)
    for payload in (
        RunEvent.objects.filter(run=run, kind="assistant_message").order_by("-seq").values_list("payload", flat=True)
    ):
        content = (payload or {}).get("content") or ""
        if content.strip():
            return Answer(content.strip(), FROM_FINAL_MESSAGE)
    return Answer("", "")

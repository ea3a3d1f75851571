"""StarterBrief briefs for the five showcase kinds (from the demo model's bundled trajectories)."""

import logging
from dataclasses import dataclass, field

from django.core.files.uploadedfile import SimpleUploadedFile

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StarterBrief:
    kind: str
    title: str
    brief: str
    inputs: dict[str, bytes] = field(default_factory=dict)

    def input_uploads(self) -> list[SimpleUploadedFile]:
        return [SimpleUploadedFile(name, content) for name, content in self.inputs.items()]


def starters() -> list[StarterBrief]:
    try:
        from sandboxes.agent import SHOWCASE_BRIEFS
    except Exception:  # the agent package failing to load must not take the page down
        logger.exception("starter briefs are unavailable")
        return []
    result = []
    for entry in SHOWCASE_BRIEFS:
        inputs = {
            str(name): content if isinstance(content, bytes) else str(content).encode()
            for name, content in (entry.get("inputs") or {}).items()
        }
        result.append(StarterBrief(kind=entry["kind"], title=entry["title"], brief=entry["brief"], inputs=inputs))
    return result


def starter_get(kind: str) -> StarterBrief | None:
    return next((s for s in starters() if s.kind == kind), None)

"""The creations app's models, a module per concern; everything is importable from here."""

from creations.models.artifact import (
    Artifact,
    ArtifactKind,
    ArtifactPage,
    artifact_upload_to,
    page_upload_to,
    preview_upload_to,
    rendered_upload_to,
)
from creations.models.creation import TITLE_MAX_CHARS, Creation, InputFile, Visibility, input_upload_to
from creations.models.run import (
    ACTIVE_STATUSES,
    FINAL_STATUSES,
    IN_FLIGHT_STATUSES,
    LIVE_COUNTERS,
    Run,
    RunEvent,
    RunMessage,
    RunSnapshot,
    RunStatus,
    snapshot_upload_to,
)
from creations.models.usage import UsageRecord, UsageSource

__all__ = [
    "ACTIVE_STATUSES",
    "FINAL_STATUSES",
    "IN_FLIGHT_STATUSES",
    "LIVE_COUNTERS",
    "TITLE_MAX_CHARS",
    "Artifact",
    "ArtifactKind",
    "ArtifactPage",
    "Creation",
    "InputFile",
    "Run",
    "RunEvent",
    "RunMessage",
    "RunSnapshot",
    "RunStatus",
    "UsageRecord",
    "UsageSource",
    "Visibility",
    "artifact_upload_to",
    "input_upload_to",
    "page_upload_to",
    "preview_upload_to",
    "rendered_upload_to",
    "snapshot_upload_to",
]

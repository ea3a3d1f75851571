"""What a workspace keeps in storage: every kind of stored file, each known by a row that
says its size and its workspace. Their sum is what the storage quota counts and the usage
page shows (creations.usage.selectors), so nothing a workspace keeps is left out of either:

- the inputs given with its briefs (InputFile, through their creation), cancelled runs' too;
- its artifacts, with their previews, renditions and renderings (Artifact.size + derived_bytes);
- the files its runs' long event fields went to (Run.event_file_bytes);
- its version snapshots (RunSnapshot);
- and files kept by the apps above this one, which register their rows here as they start
  (`storage_holder_register`): inputs uploaded through the API before their run (api.StagedInput),
  evaluation suites' task files and input files (creations.evaluations).

Files shared by every workspace (comparison details, kept once per pair of contents) count for none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import models
from django.db.models import F, Q
from django.db.models.expressions import Combinable

from creations.models import Artifact, InputFile, Run, RunSnapshot


@dataclass(frozen=True)
class StorageHolder:
    """Rows of `model` that each hold `size` bytes in storage for the workspace `workspace` leads to."""

    model: type[models.Model]
    workspace: str  # the lookup from a row to its workspace's id
    size: Combinable
    label: str  # what the usage page calls these files; holders of one label are shown added up
    only: Q = field(default_factory=Q)  # the rows that can hold bytes at all

    def rows(self, workspace_id: Any) -> models.QuerySet[Any]:
        return self.model._default_manager.filter(self.only, **{self.workspace: workspace_id})


INPUTS, MADE, LOGS, SNAPSHOTS = "inputs given with briefs", "files runs made", "long step output", "version snapshots"

_HOLDERS: list[StorageHolder] = [
    StorageHolder(InputFile, "creation__workspace_id", F("size"), INPUTS),
    StorageHolder(Artifact, "workspace_id", F("size") + F("derived_bytes"), MADE),
    StorageHolder(Run, "creation__workspace_id", F("event_file_bytes"), LOGS, only=Q(event_file_bytes__gt=0)),
    StorageHolder(RunSnapshot, "workspace_id", F("size"), SNAPSHOTS),
]


def storage_holder_register(
    model: type[models.Model], *, workspace: str, size: Combinable, label: str = INPUTS
) -> None:
    """Count `model`'s rows in their workspace's storage: each holds `size` bytes (an expression
    of its columns) for the workspace reached by the lookup `workspace`, shown on the usage page
    as part of `label`. Called once per model, from its app's ready()."""
    if any(holder.model is model for holder in _HOLDERS):
        return
    _HOLDERS.append(StorageHolder(model, workspace, size, label))


def storage_holders() -> tuple[StorageHolder, ...]:
    return tuple(_HOLDERS)

"""A version's /testbed kept in storage, and given back to the version that continues it.

The archive is made and unpacked inside the sandbox (sandboxes.snapshots); here it
only moves between the sandbox and django-storages (local disk or S3) through a
temporary file, never read. Its size counts in the workspace's storage quota, and
it goes when its run goes (creations.stored_files).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable

from django.conf import settings
from django.core.files import File

from creations.models import Artifact, Run, RunSnapshot
from creations.usage.budgets import storage_allowance
from sandboxes.agent.session import SandboxSession
from sandboxes.runtime import Sandbox

log = logging.getLogger(__name__)

SPOOL_IN_MEMORY_BYTES = 8 * 1024 * 1024


def snapshot_save(*, run: Run, session: SandboxSession) -> RunSnapshot | str:
    """Keep the run's /testbed for its next version: the snapshot, or why there is none."""
    bound = min(settings.RUN_SNAPSHOT_MAX_BYTES, storage_allowance(workspace_id=run.creation.workspace_id))
    if bound <= 0:
        return "The workspace's storage quota is full, so this version's files were not kept for a refine."
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY_BYTES, prefix=f"snapshot-{run.pk}-") as spool:
        report = session.save_snapshot(spool, max_bytes=bound)
        if report is None:
            return "Even output/ was over the snapshot limit, so this version's files were not kept for a refine."
        spool.seek(0)
        snapshot = RunSnapshot(
            run=run, workspace_id=run.creation.workspace_id, size=report.size, left_out=report.left_out
        )
        snapshot.file.save("testbed.tar.zst", File(spool), save=False)
    snapshot.save()
    return snapshot


def snapshot_restorer(run: Run) -> tuple[Callable[[Sandbox], None] | None, str]:
    """For a refine: what fills its sandbox's /testbed before the agent starts, and what
    that lacks in words (blank: everything). None for a run that starts from its inputs."""
    parent = run.parent
    if parent is None:
        return None, ""
    snapshot = RunSnapshot.objects.filter(run=parent).first()
    if snapshot is None:
        # A version kept without a snapshot (made before snapshots, or its sandbox was
        # stopped): the next one starts from its deliverables.
        artifacts = list(Artifact.objects.filter(run=parent).only("path", "file", "size"))
        return _artifacts_writer(artifacts), (
            "Only the previous version's deliverables (output/) and the inputs were kept; its work files were not."
        )

    def restore(sandbox: Sandbox) -> None:
        with snapshot.file.open("rb") as source:
            sandbox.restore_snapshot(source, size=snapshot.size)

    return restore, snapshot.left_out


def _artifacts_writer(artifacts: list[Artifact]) -> Callable[[Sandbox], None]:
    def write(sandbox: Sandbox) -> None:
        files: dict[str, bytes] = {}
        for artifact in artifacts:
            with artifact.file.open("rb") as handle:
                files[artifact.path] = handle.read()
        if files:
            sandbox.write_files(files, dest="/testbed/output")

    return write

"""Writes for evaluation suites: upload one (its mistakes named by line and field, nothing kept
then), add the samples, delete one no evaluation is running on."""

from __future__ import annotations

import logging
from functools import partial

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import Storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from creations.evaluations.models import Evaluation, EvaluationStatus, Suite, SuiteFile, SuiteTask
from creations.evaluations.samples import sample_suites
from creations.evaluations.suite_format import (
    ParsedSuite,
    SuiteFormatError,
    SuiteLimits,
    parse_suite,
    unstorable_text,
)
from creations.runs.inputs import clean_input_files
from creations.usage.budgets import storage_room_check
from workspaces.models import Workspace
from workspaces.permissions import DELETE_SUITE_REFUSED, EVALUATE_REFUSED, may_delete_suite, may_run_evaluations
from workspaces.selectors import membership_get

log = logging.getLogger(__name__)

SUITE_NAME_MAX_CHARS = 200


def check_may_evaluate(workspace: Workspace, user: User) -> None:
    if not may_run_evaluations(membership_get(workspace=workspace, user=user)):
        raise PermissionDenied(EVALUATE_REFUSED)


def suite_limits() -> SuiteLimits:
    return SuiteLimits(
        max_bytes=settings.EVALUATION_SUITE_MAX_BYTES,
        max_tasks=settings.EVALUATION_SUITE_MAX_TASKS,
        files_max_bytes=settings.EVALUATION_SUITE_FILES_MAX_BYTES,
    )


def _check_task_files(parsed: ParsedSuite) -> None:
    """Each task's files as a run's inputs: the kinds, sizes and counts a brief's files may have."""
    problems: list[str] = []
    for spec in parsed.tasks:
        uploads = [SimpleUploadedFile(name, parsed.files[name]) for name in spec.files]
        try:
            clean_input_files(uploads)
        except ValidationError as refused:
            problems += [f"Task “{spec.task_id}”, field “files”: {message}" for message in refused.messages]
    if problems:
        raise ValidationError({"tasks": problems})


def _clean_suite_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": "Name the suite, e.g. “Invoices, March”."})
    if why := unstorable_text(name):
        raise ValidationError({"name": f"The name {why}."})
    if len(name) > SUITE_NAME_MAX_CHARS:
        raise ValidationError({"name": f"The name has at most {SUITE_NAME_MAX_CHARS} characters."})
    return name


def suite_upload(
    *, workspace: Workspace, user: User, name: str, data: bytes, zip_data: bytes | None = None, is_sample: bool = False
) -> Suite:
    """Read a task file (and its zip of input files) and keep it as a suite; ValidationError with
    every problem (`tasks`: each naming its line and field) and nothing stored, otherwise."""
    check_may_evaluate(workspace, user)
    name = _clean_suite_name(name)
    try:
        parsed = parse_suite(data, limits=suite_limits(), zip_data=zip_data)
    except SuiteFormatError as refused:
        raise ValidationError({"tasks": refused.problems}) from None
    _check_task_files(parsed)
    with transaction.atomic():
        # Before anything is written, holding the workspace's row until it is: what the suite keeps
        # (its task file, as its rows, and its input files) must fit in the storage left.
        storage_room_check(
            workspace_id=workspace.pk, adding=len(data) + sum(len(content) for content in parsed.files.values())
        )
        suite = Suite.objects.create(
            workspace=workspace,
            name=name,
            uploaded_by=user,
            is_sample=is_sample,
            task_count=len(parsed.tasks),
            task_file_bytes=len(data),
        )
        SuiteTask.objects.bulk_create(
            SuiteTask(
                suite=suite,
                position=position,
                task_id=spec.task_id,
                prompt=spec.prompt,
                plain_prompt=spec.plain_prompt,
                rule=spec.rule,
                expected=spec.expected,
                options=spec.options,
                file_names=list(spec.files),
            )
            for position, spec in enumerate(parsed.tasks, 1)
        )
        for file_name, content in parsed.files.items():
            suite_file = SuiteFile(suite=suite, name=file_name, size=len(content))
            suite_file.file.save(file_name, ContentFile(content), save=False)
            suite_file.save()
    return suite


class SuiteInUse(ValidationError):
    """The suite is being evaluated now: it is not deleted."""


def suite_delete(*, suite: Suite, user: User) -> None:
    """Delete the suite with its tasks, its evaluations and their results, and its files from storage
    (once the deletion is committed). Refused (SuiteInUse, a sentence) while one of its evaluations is
    running: its tasks still read the suite. Runs its sandbox tasks made stay, as the usage they cost."""
    membership = membership_get(workspace=suite.workspace_id, user=user)
    if not may_delete_suite(membership, uploaded_by_id=suite.uploaded_by_id, user=user):
        raise PermissionDenied(DELETE_SUITE_REFUSED)
    with transaction.atomic():
        # The row lock makes an evaluation starting now wait, then find the suite gone (evaluation_start).
        locked = Suite.objects.select_for_update().filter(pk=suite.pk).first()
        if locked is None:
            return
        if Evaluation.objects.filter(suite=locked, status=EvaluationStatus.RUNNING).exists():
            raise SuiteInUse(
                f"“{locked.name}” is being evaluated now: cancel that evaluation, or let it finish, "
                "then delete the suite."
            )
        stored = [(f.file.storage, f.file.name) for f in locked.files.all() if f.file.name]
        locked.delete()
        transaction.on_commit(partial(_delete_stored, stored))


def _delete_stored(stored: list[tuple[Storage, str]]) -> None:
    for storage, name in stored:
        try:
            storage.delete(name)
        except Exception as error:  # the store is away (any backend's error): the file stays, the suite is gone
            log.warning("Could not delete a deleted suite's file %s: %s", name, error)


def sample_suites_add(*, workspace: Workspace, user: User) -> list[Suite]:
    """The platform's three sample suites, added to the workspace (again, if they were added before)."""
    return [
        suite_upload(
            workspace=workspace, user=user, name=sample.name, data=sample.data, zip_data=sample.zip_data, is_sample=True
        )
        for sample in sample_suites()
    ]


# --- starting ------------------------------------------------------------------------------------

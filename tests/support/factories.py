"""factory-boy factories for every model tests build: the one way to make one.

RunFactory()                                   a queued run of a new creation in a new workspace
RunFactory(finished=True)                      a succeeded run (started and finished)
RunFactory(creation__workspace=ws, creation__author=user, creation__visibility="public")
ArtifactFactory(run=run, path="map.html", kind="map")
UsageRecordFactory(run=run)                    the ledger's record of an ended run (as ending it writes)
UsageRecordFactory(workspace=ws, person=user, prompt_tokens=900, recorded_at=when)   a record alone
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import factory
from django.contrib.auth.models import User
from django.utils import timezone
from factory.django import DjangoModelFactory

from creations.events.schema import stored_form
from creations.events.store import store_events
from creations.models import (
    Artifact,
    ArtifactKind,
    Creation,
    InputFile,
    Run,
    RunEvent,
    RunStatus,
    UsageRecord,
    Visibility,
)
from creations.usage.counters import usage_columns
from sandboxes.agent.events import UsageReport
from sandboxes.agent.usage import RunUsage
from tests.support.fixtures.accounts import PASSWORD, Team
from workspaces.models import Membership, ModelEndpoint, Role, Workspace


@dataclass(frozen=True)
class _AfterSave:
    """A time `seconds` after the row's own creation time, which is taken when it is saved."""

    seconds: float


def _soon(seconds: float) -> Any:
    # Resolved in RunFactory._create, from the saved run's created_at: the related rows the factory makes
    # first, and the insert itself, can take seconds on a loaded machine.
    return _AfterSave(seconds)


class UserFactory(DjangoModelFactory[User]):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"person{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def _save_password(user: User, create: bool, extracted: Any, **kwargs: Any) -> None:
        if create:
            user.save(update_fields=["password"])


class WorkspaceFactory(DjangoModelFactory[Workspace]):
    class Meta:
        model = Workspace

    name = factory.Sequence(lambda n: f"Studio {n}")
    slug = factory.Sequence(lambda n: f"studio-{n}")


class MembershipFactory(DjangoModelFactory[Membership]):
    class Meta:
        model = Membership

    workspace = factory.SubFactory(WorkspaceFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.MEMBER


class ModelEndpointFactory(DjangoModelFactory[ModelEndpoint]):
    class Meta:
        model = ModelEndpoint

    workspace = factory.SubFactory(WorkspaceFactory)
    name = factory.Sequence(lambda n: f"model-{n}")
    base_url = "http://127.0.0.1:9/v1"
    model = "scripted"


class CreationFactory(DjangoModelFactory[Creation]):
    class Meta:
        model = Creation

    workspace = factory.SubFactory(WorkspaceFactory)
    author = factory.SubFactory(UserFactory)
    brief = "a calm piano piece"
    visibility = Visibility.WORKSPACE


class InputFileFactory(DjangoModelFactory[InputFile]):
    class Meta:
        model = InputFile

    creation = factory.SubFactory(CreationFactory)
    name = factory.Sequence(lambda n: f"input-{n}.csv")
    file = factory.django.FileField(data=b"a,b\n1,2\n")
    size = 8


class RunFactory(DjangoModelFactory[Run]):
    class Meta:
        model = Run

    class Params:
        finished = factory.Trait(
            status=RunStatus.SUCCEEDED,
            reason="The agent submitted its work.",
            started_at=_soon(1),
            finished_at=_soon(2),
            steps=1,
        )

    creation = factory.SubFactory(CreationFactory)
    started_by = factory.SelfAttribute("creation.author")
    status = RunStatus.QUEUED

    @classmethod
    def _create(cls, model_class: type[Run], *args: Any, **kwargs: Any) -> Run:
        # Stamped from the run's own created_at once it is saved: a test process starved of CPU (the fast
        # tests run as background work beside sandboxes) can take longer than those seconds between any
        # clock read and the insert. Until then they are an hour ahead, so the row's checks hold.
        after_save = {name: value.seconds for name, value in kwargs.items() if isinstance(value, _AfterSave)}
        ahead = timezone.now() + timedelta(hours=1)
        kwargs.update({name: ahead + timedelta(seconds=seconds) for name, seconds in after_save.items()})
        run = super()._create(model_class, *args, **kwargs)
        if after_save:
            stamps = {name: run.created_at + timedelta(seconds=seconds) for name, seconds in after_save.items()}
            model_class.objects.filter(pk=run.pk).update(**stamps)
            for name, value in stamps.items():
                setattr(run, name, value)
        return run


class RunEventFactory(DjangoModelFactory[RunEvent]):
    class Meta:
        model = RunEvent

    run = factory.SubFactory(RunFactory)
    seq = factory.Sequence(lambda n: n + 1)
    kind = "step_started"
    payload = factory.LazyAttribute(lambda event: {"step": event.seq, "remaining": 10})


class ArtifactFactory(DjangoModelFactory[Artifact]):
    class Meta:
        model = Artifact

    run = factory.SubFactory(RunFactory, finished=True)
    path = factory.Sequence(lambda n: f"file-{n:04}.png")
    kind = ArtifactKind.IMAGE
    size = 1
    content_type = "image/png"
    file = "artifacts/placeholder.png"


class UsageRecordFactory(DjangoModelFactory[UsageRecord]):
    """A usage ledger record. Given a run, it copies what ending the run records; given
    none, it stands alone (a run since deleted, or figures a test chooses)."""

    class Meta:
        model = UsageRecord

    run = None
    workspace = factory.LazyAttribute(
        lambda record: record.run.creation.workspace if record.run else WorkspaceFactory.create()
    )
    creation = factory.LazyAttribute(lambda record: record.run.creation if record.run else None)
    creation_title = factory.LazyAttribute(
        lambda record: str(record.creation)[:200] if record.creation else "A creation since deleted"
    )
    person = factory.LazyAttribute(lambda record: record.run.started_by if record.run else None)
    model_name = "demo"
    status = RunStatus.SUCCEEDED
    prompt_tokens = factory.LazyAttribute(lambda record: record.run.prompt_tokens if record.run else 0)
    completion_tokens = factory.LazyAttribute(lambda record: record.run.completion_tokens if record.run else 0)
    sandbox_seconds = factory.LazyAttribute(lambda record: record.run.sandbox_seconds if record.run else 0.0)
    bytes_stored = factory.LazyAttribute(lambda record: record.run.output_bytes if record.run else 0)
    recorded_at = factory.LazyFunction(timezone.now)


def make_run(
    team: Team, *, status: str = RunStatus.QUEUED, visibility: str = Visibility.WORKSPACE, **fields: Any
) -> Run:
    """A run of a new creation by the team's owner, in the team's workspace."""
    return RunFactory.create(
        creation__workspace=team.workspace,
        creation__author=team.owner,
        creation__visibility=visibility,
        status=status,
        **fields,
    )


def record_step_usage(run: Run, usage: RunUsage) -> None:
    """A step's usage stored as the worker stores it: its usage event, with the run's live counters
    raised in the same write."""
    report = UsageReport(
        step=run.steps + usage.steps,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
        estimated=False,
    )
    stored = store_events(run.pk, [("usage", stored_form(report))], add=usage_columns(usage))
    assert stored is not None, "the run had ended: nothing was stored"
    run.steps += usage.steps

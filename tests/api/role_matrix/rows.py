"""What a row of the API role matrix says: an operation, what each role gets from it (`Answer`),
and how to tell that a write took place; with the rules that belong to no one area."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from creations.models import Creation
from tests.support.role_world import ANONYMOUS, CREATORS, MEMBERS, World, sees

GET, POST, PATCH, PUT, DELETE = "get", "post", "patch", "put", "delete"


@dataclass(frozen=True)
class Answer:
    status: int
    listed: bool | None = None  # a list names the row's mark (None: not a list)
    changed: bool = False

    def __str__(self) -> str:
        listing = {True: " listing it", False: " not listing it", None: ""}[self.listed]
        return f"{self.status}{listing}{' changed' if self.changed else ''}"


UNAUTHORIZED, NOT_FOUND, FORBIDDEN = Answer(401), Answer(404), Answer(403)
Rule = Callable[[str, str], Answer]  # (role, visibility) → answer
Effect = Callable[[World], bool]


def members_only(answer: Answer) -> Rule:
    """A workspace's operation: outsiders are told it does not exist."""

    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        return answer if who in MEMBERS else NOT_FOUND

    return rule


def creators_only(answer: Answer) -> Rule:
    """A write in a workspace: viewers are refused, outsiders told it does not exist."""
    return members_only_or(answer, otherwise=FORBIDDEN)


def members_only_or(answer: Answer, *, otherwise: Answer) -> Rule:
    def rule(who: str, visibility: str) -> Answer:
        if who == ANONYMOUS:
            return UNAUTHORIZED
        if who not in MEMBERS:
            return NOT_FOUND
        return answer if who in CREATORS else otherwise

    return rule


def run_page(who: str, visibility: str) -> Answer:
    if who == ANONYMOUS:
        return UNAUTHORIZED
    return Answer(200) if sees(who, visibility) else NOT_FOUND


def signed_in(answer: Answer) -> Rule:
    return lambda who, visibility: UNAUTHORIZED if who == ANONYMOUS else answer


def with_the_workspaces_model(world: World) -> None:
    """Refined with a model of the workspace: the demo model refines only what it has recordings of."""
    Creation.objects.filter(pk=world.creation.pk).update(model_endpoint=world.endpoint)


@dataclass(frozen=True)
class Row:
    method: str
    path: str  # as the schema names it
    expect: Rule
    body: Any = None  # a JSON body, or a callable that makes it from the world
    multipart: bool = False
    writes: bool = False  # needs a token with the write scope
    changed: Effect | None = None
    per_creation: bool = False  # the answer depends on the creation's visibility
    mark: Callable[[World], str] = field(default=lambda world: world.workspace.slug)
    # Read on threads of their own (a stream's database reads), which see only committed rows.
    needs_commits: bool = False
    label: str = ""  # tells two rows of one operation apart
    # The world made ready for this operation before it is called.
    prepare: Callable[[World], None] | None = None

    @property
    def id(self) -> str:
        label = f" ({self.label})" if self.label else ""
        return f"{self.method.upper()} {self.path}{label}"

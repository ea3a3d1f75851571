"""What a row of the browser's role matrix says: a URL by name, what each role notices per HTTP
method, what a POST sends and how to tell that the write took place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.contrib.auth.models import User

from tests.support.role_outcomes import NOT_ALLOWED, Rule, signed_in
from tests.support.role_world import World

GET, POST = "GET", "POST"


Effect = Callable[[World, User | None], bool]


@dataclass(frozen=True)
class Row:
    name: str
    expect: dict[str, Rule]  # by HTTP method
    data: dict[str, str] = field(default_factory=dict)  # what a POST sends
    changed: Effect | None = None  # has the write taken place? (a GET must never change anything)
    per_creation: bool = False  # the outcome depends on the creation's visibility
    target: str = "colleague"  # whose membership <membership_id> is
    label: str = ""  # tells two rows of one URL apart


# A GET of a URL that takes POSTs only: the signed-in are told the method is not allowed, the others to log in.
POST_ONLY = signed_in(NOT_ALLOWED)

"""What every request body the API reads is built on: a JSON object, and nothing else."""

from __future__ import annotations

from datetime import time
from typing import Annotated, Any

from ninja import Schema
from ninja.schema import DjangoGetter
from pydantic import BeforeValidator, model_validator


def _written_as_text(value: Any) -> Any:
    # pydantic would read a number as that many seconds past midnight; the published schema says a
    # time of day is a string.
    if isinstance(value, str | time):
        return value
    raise ValueError("A time of day is written as text, as HH:MM.")


TimeOfDay = Annotated[time, BeforeValidator(_written_as_text)]


class RequestBody(Schema):
    """A request body. Ninja's schemas read their fields as attributes of whatever they are given (that
    is how they read Django models), so a bare JSON string sent as a rename's body would have had its
    `title` read from `str.title`: a body that is not a JSON object is refused, as any body that does
    not fit its schema is.

    Numbers and flags of a body are declared `StrictInt` and `StrictBool`, and times of day `TimeOfDay`:
    pydantic would otherwise read `true` as 1, `"5"` as 5 and `5` as 00:00:05, none of which the schema
    the API publishes allows."""

    @model_validator(mode="before")
    @classmethod
    def _a_json_object(cls, data: Any) -> Any:
        # Ninja's own validator hands the fields on wrapped in its attribute reader.
        given = data._obj if isinstance(data, DjangoGetter) else data
        if not isinstance(given, dict):
            raise ValueError("The request body must be a JSON object, with the fields this operation documents.")
        return data

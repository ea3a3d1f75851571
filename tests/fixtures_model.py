"""pytest fixture for the scripted model server (loaded from tests/conftest.py
through `pytest_plugins`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.scripted_model import ScriptedModel


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    """A running scripted OpenAI-compatible server; give it replies with
    `scripted_model.play([...])` and point a client at `.base_url`."""
    with ScriptedModel() as server:
        yield server

"""/api/v1/openapi.json, which anyone may fetch (the docs page and client generators read it), is made
once per process: a second fetch serves the same document without making it again."""

from __future__ import annotations

from typing import Any

import ninja.main
import pytest
from django.test import Client

from api.v1 import api


@pytest.fixture
def schemas_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URL prefixes django-ninja makes a schema for from here on, in a process that has made none."""
    made: list[str] = []
    make = ninja.main.get_schema

    def counted(*, api: Any, path_prefix: str) -> Any:
        made.append(path_prefix)
        return make(api=api, path_prefix=path_prefix)

    monkeypatch.setattr(ninja.main, "get_schema", counted)
    monkeypatch.setattr(api, "_schemas", {})
    return made


def test_the_document_is_made_once_and_served_the_same_to_everyone(schemas_made: list[str]) -> None:
    anonymous = Client().get("/api/v1/openapi.json")
    again = Client().get("/api/v1/openapi.json")

    assert anonymous.status_code == again.status_code == 200
    assert anonymous["Content-Type"].startswith("application/json")
    assert again.content == anonymous.content
    assert schemas_made == ["/api/v1/"]
    document = again.json()
    assert document["info"]["title"] == "Atelier API"
    # What the platform adds to django-ninja's document is in the copy kept, too.
    assert document["components"]["schemas"]["Problem"]["properties"]["status"]["type"] == "integer"
    assert "application/problem+json" in document["paths"]["/api/v1/workspaces"]["get"]["responses"]["401"]["content"]


def test_the_docs_page_reads_the_same_document(schemas_made: list[str]) -> None:
    page = Client().get("/api/v1/docs")

    assert page.status_code == 200
    assert b"/api/v1/openapi.json" in page.content
    Client().get("/api/v1/openapi.json")
    assert api.get_openapi_schema() is api.get_openapi_schema()
    assert schemas_made == ["/api/v1/"]

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from ninja import Schema

from creations.models import Artifact


def _artifact_url(request: HttpRequest, artifact: Artifact, tail: str) -> str:
    return str(request.build_absolute_uri(f"{reverse('api-v1:api-root')}artifacts/{artifact.pk}/{tail}"))


class ArtifactOut(Schema):
    """An artifact, read from an `Artifact` with the request in the serialization context."""

    id: int
    path: str
    name: str
    kind: str
    size: int
    content_type: str
    sha256: str | None
    preview_url: str | None
    download_url: str

    @staticmethod
    def resolve_sha256(artifact: Artifact) -> str | None:
        return artifact.sha256 or None

    @staticmethod
    def resolve_preview_url(artifact: Artifact, context: dict[str, Any]) -> str | None:
        return _artifact_url(context["request"], artifact, "preview") if artifact.preview else None

    @staticmethod
    def resolve_download_url(artifact: Artifact, context: dict[str, Any]) -> str:
        return _artifact_url(context["request"], artifact, "download")

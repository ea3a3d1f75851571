"""The artifact origin's only routes (selected by host in ArtifactOriginMiddleware)."""

from django.urls import path

from creations.artifacts import serving

urlpatterns = [
    path("r/<str:token>/<path:path>", serving.artifact_serve, name="artifact_serve"),
    path("d/<str:token>/overlay.png", serving.derived_serve, name="artifact_derived_serve"),
]

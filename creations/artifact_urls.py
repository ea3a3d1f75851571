"""The artifact origin's only routes (selected by host in ArtifactOriginMiddleware)."""

from django.urls import path

from creations import artifact_views

urlpatterns = [
    path("r/<str:token>/<path:path>", artifact_views.artifact_serve, name="artifact_serve"),
]

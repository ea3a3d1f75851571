"""Everything the artifact origin answers (chosen by host in ArtifactOriginMiddleware): the files of
runs for the platform's pages, and what share links show to anyone who has them."""

from django.urls import include, path

urlpatterns = [
    path("", include("creations.artifacts.urls")),
    path("", include("creations.sharing.origin_urls")),
]

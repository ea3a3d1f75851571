"""A share link's routes on the artifact origin (included in creations.origin_urls). The addresses
are built in creations/sharing/tokens.py."""

from django.urls import path

from creations.sharing import origin_views

urlpatterns = [
    path("s/<str:token>/", origin_views.share_page, name="share_page"),
    path("s/<str:token>/embed/<int:artifact_id>/", origin_views.share_embed, name="share_embed"),
    path("s/<str:token>/f/<path:path>", origin_views.share_file, name="share_file"),
    path("oembed", origin_views.share_oembed, name="share_oembed"),
]

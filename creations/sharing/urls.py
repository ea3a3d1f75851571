"""The platform's pages for share links (those a visitor opens are in origin_urls.py)."""

from django.urls import path

from creations.sharing import views

urlpatterns = [
    path("creations/<int:pk>/share/", views.creation_share, name="creation_share"),
    path("w/<slug:slug>/share-links/", views.workspace_share_links, name="workspace_share_links"),
    path("share-links/<int:pk>/revoke/", views.share_link_revoke_view, name="share_link_revoke"),
]

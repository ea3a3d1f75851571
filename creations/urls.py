from django.urls import path

from creations import run_views, views, views_export, views_gallery

urlpatterns = [
    # Web (issue 6): pages, galleries, downloads.
    path("w/<slug:slug>/new/", views.creation_new, name="creation_new"),
    path("w/<slug:slug>/gallery/", views_gallery.workspace_gallery, name="workspace_gallery"),
    path("gallery/", views_gallery.public_gallery, name="public_gallery"),
    path("creations/<int:pk>/", views.creation_detail, name="creation_detail"),
    path("creations/<int:pk>/rerun/", views.creation_rerun, name="creation_rerun"),
    path("creations/<int:pk>/fork/", views.creation_fork_view, name="creation_fork"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/artifacts/", views.run_artifacts, name="run_artifacts"),
    path("runs/<int:pk>/artifacts.zip", views_export.run_download_zip, name="run_download_zip"),
    path("runs/<int:pk>/trajectory.json", views_export.run_trajectory_json, name="run_trajectory_json"),
    path("artifacts/<int:pk>/", views.artifact_detail, name="artifact_detail"),
    # Runs (issue 5): cancel, and the full text behind a capped event.
    path("runs/<int:pk>/cancel/", run_views.run_cancel_view, name="run_cancel"),
    path("runs/<int:pk>/events/<int:seq>/<slug:field>/", run_views.run_event_overflow, name="run_event_overflow"),
]

"""The platform's pages for workspaces' creations, runs, artifacts and galleries."""

from django.urls import include, path

from creations.web.views import arena, artifacts, comments, compare, creations, dashboard, exports, gallery, runs, usage

urlpatterns = [
    path("w/<slug:slug>/", dashboard.workspace_dashboard, name="workspace_dashboard"),
    path("w/<slug:slug>/new/", creations.creation_new, name="creation_new"),
    path("w/<slug:slug>/gallery/", gallery.workspace_gallery, name="workspace_gallery"),
    path("w/<slug:slug>/usage/", usage.workspace_usage, name="workspace_usage"),
    path("w/<slug:slug>/usage.csv", usage.workspace_usage_csv, name="workspace_usage_csv"),
    path("w/<slug:slug>/arena/", arena.workspace_leaderboard_view, name="workspace_leaderboard"),
    path("gallery/", gallery.public_gallery, name="public_gallery"),
    path("comparisons/<int:pk>/", arena.comparison_detail, name="comparison_detail"),
    path("comparisons/<int:pk>/vote/", arena.comparison_vote, name="comparison_vote"),
    path("comparisons/<int:pk>/cancel/", arena.comparison_cancel_view, name="comparison_cancel"),
    path("creations/<int:pk>/", creations.creation_detail, name="creation_detail"),
    path("creations/<int:pk>/rerun/", creations.creation_rerun, name="creation_rerun"),
    path("creations/<int:pk>/fork/", creations.creation_fork_view, name="creation_fork"),
    path("creations/<int:pk>/rename/", creations.creation_rename_view, name="creation_rename"),
    path("creations/<int:pk>/delete/", creations.creation_delete_view, name="creation_delete"),
    path("creations/<int:pk>/compare/", compare.creation_compare, name="creation_compare"),
    path("creations/<int:pk>/comments/", creations.creation_comment, name="creation_comment"),
    path("comments/<int:pk>/edit/", comments.comment_edit_view, name="comment_edit"),
    path("comments/<int:pk>/delete/", comments.comment_delete_view, name="comment_delete"),
    path("runs/<int:pk>/", runs.run_detail, name="run_detail"),
    path("runs/<int:pk>/steps/", runs.run_steps, name="run_steps"),
    path("runs/<int:pk>/artifacts/", runs.run_artifacts, name="run_artifacts"),
    path("runs/<int:pk>/cancel/", runs.run_cancel_view, name="run_cancel"),
    path("runs/<int:pk>/messages/", runs.run_message_view, name="run_message"),
    path("runs/<int:pk>/refine/", creations.run_refine_view, name="run_refine"),
    path("creations/<int:pk>/versions/<int:run_pk>/restore/", creations.creation_restore_view, name="creation_restore"),
    path("runs/<int:pk>/events/<int:seq>/<slug:field>/", runs.run_event_overflow, name="run_event_overflow"),
    path("runs/<int:pk>/artifacts.zip", exports.run_download_zip, name="run_download_zip"),
    path("runs/<int:pk>/trajectory.json", exports.run_trajectory_json, name="run_trajectory_json"),
    path("artifacts/<int:pk>/", artifacts.artifact_detail, name="artifact_detail"),
    path("artifacts/<int:pk>/use/", artifacts.artifact_use, name="artifact_use"),
    path("", include("creations.sharing.urls")),
    path("", include("creations.webhooks.urls")),
    path("", include("creations.schedules.urls")),
    path("", include("creations.evaluations.urls")),
    path("", include("creations.notifications.urls")),
]

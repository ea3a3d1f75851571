"""A client generated from /api/v1/openapi.json names its methods after the operation ids:
each operation keeps the id it was published with, wherever its code moves."""

from __future__ import annotations

from django.test import Client

PUBLISHED = {
    ("GET", "/api/v1/artifacts/{artifact_id}/download"): "api_endpoints_artifacts_download_artifact",
    ("GET", "/api/v1/artifacts/{artifact_id}/preview"): "api_endpoints_artifacts_artifact_preview",
    ("GET", "/api/v1/runs"): "api_endpoints_runs_list_runs",
    ("GET", "/api/v1/runs/{run_id}"): "api_endpoints_runs_get_run",
    ("GET", "/api/v1/runs/{run_id}/artifacts"): "api_endpoints_artifacts_list_artifacts",
    ("GET", "/api/v1/runs/{run_id}/artifacts/zip"): "api_endpoints_artifacts_download_zip",
    ("POST", "/api/v1/runs/{run_id}/cancel"): "api_endpoints_runs_cancel_run",
    ("GET", "/api/v1/runs/{run_id}/compare/{other_run_id}"): "api_endpoints_compare_compare_runs",
    ("GET", "/api/v1/runs/{run_id}/events"): "api_endpoints_events_list_events",
    ("GET", "/api/v1/runs/{run_id}/events/stream"): "api_endpoints_events_stream_events",
    ("POST", "/api/v1/runs/{run_id}/fork"): "api_endpoints_runs_fork",
    ("POST", "/api/v1/runs/{run_id}/messages"): "api_endpoints_messages_send_message",
    ("POST", "/api/v1/runs/{run_id}/refine"): "api_endpoints_versions_refine_run",
    ("POST", "/api/v1/runs/{run_id}/rerun"): "api_endpoints_runs_rerun",
    ("POST", "/api/v1/runs/{run_id}/restore"): "api_endpoints_versions_restore_version",
    ("POST", "/api/v1/runs/{run_id}/rename"): "api_endpoints_creations_rename_creation",
    ("GET", "/api/v1/runs/{run_id}/versions"): "api_endpoints_versions_list_versions",
    ("GET", "/api/v1/workspaces"): "api_endpoints_workspaces_list_workspaces",
    ("GET", "/api/v1/workspaces/{slug}"): "api_endpoints_workspaces_get_workspace",
    ("POST", "/api/v1/workspaces/{slug}/inputs"): "api_endpoints_inputs_upload_inputs",
    ("GET", "/api/v1/workspaces/{slug}/models"): "api_endpoints_models_list_models",
    ("POST", "/api/v1/workspaces/{slug}/runs"): "api_endpoints_runs_create_run",
    ("GET", "/api/v1/workspaces/{slug}/usage"): "api_endpoints_usage_workspace_usage",
    ("POST", "/api/v1/runs/{run_id}/share-links"): "api_endpoints_share_links_create_share_link",
    ("GET", "/api/v1/runs/{run_id}/share-links"): "api_endpoints_share_links_list_share_links",
    ("GET", "/api/v1/workspaces/{slug}/share-links"): "api_endpoints_share_links_list_workspace_share_links",
    ("POST", "/api/v1/share-links/{share_link_id}/revoke"): "api_endpoints_share_links_revoke_share_link",
    ("GET", "/api/v1/workspaces/{slug}/webhooks"): "api_endpoints_webhooks_list_webhooks",
    ("POST", "/api/v1/workspaces/{slug}/webhooks"): "api_endpoints_webhooks_create_webhook",
    ("GET", "/api/v1/webhooks/{webhook_id}"): "api_endpoints_webhooks_get_webhook",
    ("PATCH", "/api/v1/webhooks/{webhook_id}"): "api_endpoints_webhooks_update_webhook",
    ("DELETE", "/api/v1/webhooks/{webhook_id}"): "api_endpoints_webhooks_delete_webhook",
    ("POST", "/api/v1/webhooks/{webhook_id}/test"): "api_endpoints_webhooks_test_webhook",
    ("GET", "/api/v1/webhooks/{webhook_id}/deliveries"): "api_endpoints_webhooks_list_deliveries",
    ("GET", "/api/v1/runs/{run_id}/schedule"): "api_endpoints_schedules_get_schedule",
    ("PUT", "/api/v1/runs/{run_id}/schedule"): "api_endpoints_schedules_set_schedule",
    ("DELETE", "/api/v1/runs/{run_id}/schedule"): "api_endpoints_schedules_clear_schedule",
    ("GET", "/api/v1/runs/{run_id}/comments"): "api_endpoints_comments_list_comments",
    ("POST", "/api/v1/runs/{run_id}/comments"): "api_endpoints_comments_create_comment",
    ("PATCH", "/api/v1/comments/{comment_id}"): "api_endpoints_comments_edit_comment",
    ("DELETE", "/api/v1/comments/{comment_id}"): "api_endpoints_comments_delete_comment",
    ("GET", "/api/v1/notifications"): "api_endpoints_notifications_list_notifications",
    ("POST", "/api/v1/notifications/read"): "api_endpoints_notifications_read_all_notifications",
    ("POST", "/api/v1/notifications/{notification_id}/read"): "api_endpoints_notifications_read_notification",
    ("GET", "/api/v1/notifications/settings"): "api_endpoints_notifications_get_notification_settings",
    ("PUT", "/api/v1/notifications/settings"): "api_endpoints_notifications_put_notification_settings",
    ("GET", "/api/v1/notifications/unread-count"): "api_endpoints_notifications_count_unread_notifications",
    ("GET", "/api/v1/runs/{run_id}/follow"): "api_endpoints_follows_get_follow",
    ("PUT", "/api/v1/runs/{run_id}/follow"): "api_endpoints_follows_follow_creation",
    ("DELETE", "/api/v1/runs/{run_id}/follow"): "api_endpoints_follows_unfollow_creation",
    ("GET", "/api/v1/workspaces/{slug}/suites"): "api_endpoints_evaluations_list_suites",
    ("POST", "/api/v1/workspaces/{slug}/suites"): "api_endpoints_evaluations_upload_suite",
    ("DELETE", "/api/v1/workspaces/{slug}/suites/{suite_id}"): "api_endpoints_evaluations_delete_suite",
    ("POST", "/api/v1/workspaces/{slug}/evaluations"): "api_endpoints_evaluations_create_evaluation",
    ("GET", "/api/v1/evaluations/{evaluation_id}"): "api_endpoints_evaluations_get_evaluation",
    ("GET", "/api/v1/evaluations/{evaluation_id}/results"): "api_endpoints_evaluations_get_results",
    ("POST", "/api/v1/evaluations/{evaluation_id}/cancel"): "api_endpoints_evaluations_cancel_evaluation",
    ("POST", "/api/v1/workspaces/{slug}/comparisons"): "api_endpoints_arena_create_comparison",
    ("GET", "/api/v1/comparisons/{comparison_id}"): "api_endpoints_arena_get_comparison",
    ("POST", "/api/v1/comparisons/{comparison_id}/votes"): "api_endpoints_arena_vote",
    ("POST", "/api/v1/comparisons/{comparison_id}/cancel"): "api_endpoints_arena_cancel_comparison",
    ("GET", "/api/v1/workspaces/{slug}/leaderboard"): "api_endpoints_arena_leaderboard",
}


def test_every_operation_keeps_the_id_it_was_published_with(client: Client) -> None:
    schema = client.get("/api/v1/openapi.json").json()
    ids = {
        (method.upper(), path): operation["operationId"]
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
    }
    assert ids == PUBLISHED

from django.urls import path

from workspaces.views import accounts, endpoints, members, teams

urlpatterns = [
    path("", accounts.home, name="home"),
    path("accounts/signup/", accounts.signup, name="signup"),
    # Before django.contrib.auth's own (config/urls.py): the same pages, rate-limited.
    path("accounts/login/", accounts.LimitedLoginView.as_view(), name="login"),
    path("accounts/password_reset/", accounts.LimitedPasswordResetView.as_view(), name="password_reset"),
    path("workspaces/new/", teams.workspace_new, name="workspace_new"),
    path("w/<slug:slug>/settings/", teams.workspace_settings, name="workspace_settings"),
    path("w/<slug:slug>/delete/", teams.workspace_delete_view, name="workspace_delete"),
    path("w/<slug:slug>/leave/", teams.workspace_leave, name="workspace_leave"),
    path("w/<slug:slug>/members/", members.workspace_members_view, name="workspace_members"),
    path("w/<slug:slug>/members/<int:membership_id>/role/", members.membership_role_view, name="membership_role"),
    path("w/<slug:slug>/members/<int:membership_id>/remove/", members.membership_remove_view, name="membership_remove"),
    path("w/<slug:slug>/invitations/<int:pk>/revoke/", members.invitation_revoke_view, name="invitation_revoke"),
    path("w/<slug:slug>/models/", endpoints.endpoints_view, name="workspace_endpoints"),
    path("w/<slug:slug>/models/new/", endpoints.endpoint_new, name="endpoint_new"),
    path("w/<slug:slug>/models/<int:pk>/", endpoints.endpoint_edit, name="endpoint_edit"),
    path("w/<slug:slug>/models/<int:pk>/test/", endpoints.endpoint_test_view, name="endpoint_test"),
    path("w/<slug:slug>/models/<int:pk>/enabled/", endpoints.endpoint_enabled_view, name="endpoint_enabled"),
    path("w/<slug:slug>/models/<int:pk>/delete/", endpoints.endpoint_delete_view, name="endpoint_delete"),
    # Any path: a link a mail client broke (a slash added, say) still reaches the invitation page.
    path("invitations/<path:token>/", members.invitation_accept_view, name="invitation_accept"),
]

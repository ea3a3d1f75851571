"""The workspace's webhook pages."""

from django.urls import path

from creations.webhooks import views

urlpatterns = [
    path("w/<slug:slug>/webhooks/", views.workspace_webhooks, name="workspace_webhooks"),
    path("webhooks/<int:pk>/", views.webhook_detail, name="webhook_detail"),
    path("webhooks/<int:pk>/test/", views.webhook_test, name="webhook_test"),
    path("webhooks/<int:pk>/secret/", views.webhook_secret, name="webhook_secret"),
    path("webhooks/<int:pk>/delete/", views.webhook_delete_view, name="webhook_delete"),
]

"""The platform's pages for notifications and following a creation."""

from django.urls import path

from creations.notifications import views

urlpatterns = [
    path("notifications/", views.notifications_list, name="notifications"),
    path("notifications/<int:pk>/read/", views.notification_read, name="notification_read"),
    path("notifications/read/", views.notifications_read_all, name="notifications_read_all"),
    path("notifications/settings/", views.notification_settings, name="notification_settings"),
    path("creations/<int:pk>/follow/", views.creation_follow, name="creation_follow"),
]

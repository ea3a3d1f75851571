"""A creation's schedule page."""

from django.urls import path

from creations.schedules import views

urlpatterns = [
    path("creations/<int:pk>/schedule/", views.creation_schedule, name="creation_schedule"),
    path("creations/<int:pk>/schedule/clear/", views.creation_schedule_clear, name="creation_schedule_clear"),
]

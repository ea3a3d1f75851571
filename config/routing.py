"""Websocket URL routes (each app adds its consumers here)."""

from django.urls import URLPattern, URLResolver, path

from creations.events.consumer import RunEventsConsumer

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    path("ws/runs/<int:run_id>/", RunEventsConsumer.as_asgi()),
]

"""Websocket URL routes (each app adds its consumers here)."""

from django.urls import URLPattern, URLResolver, path

from creations.arena.selectors import run_names_hidden_from
from creations.events.consumer import RunEventsConsumer

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    # A blind comparison's rule for what a run's events may not tell each watcher.
    path("ws/runs/<int:run_id>/", RunEventsConsumer.as_asgi(names_hidden=run_names_hidden_from)),
]

"""Websocket URL routes (each app adds its consumers here)."""

from django.urls import URLPattern, URLResolver

websocket_urlpatterns: list[URLPattern | URLResolver] = []

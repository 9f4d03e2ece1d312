"""Websocket routes (dashboard/asgi.py mounts them behind the origin check and sessions)."""

from __future__ import annotations

from django.urls import path

from training.live.consumers import LiveConsumer

websocket_urlpatterns = [
    path("ws/live/", LiveConsumer.as_asgi(), name="training-live"),
]

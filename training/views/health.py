"""Health checks for probes: /healthz (the process answers), /readyz (it can do its job)."""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe
from kubernetes import client as k8s

from training.cluster import service_account_api_client

log = logging.getLogger("training.health")


@login_not_required
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def _check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


async def _round_trip(layer) -> bool:
    # send a message to a fresh channel and take it back, so the probe leaves nothing behind
    name = await layer.new_channel()
    await layer.send(name, {"type": "readyz"})
    message = await asyncio.wait_for(layer.receive(name), timeout=5)
    return message.get("type") == "readyz"


def _check_channel_layer() -> str:
    layer = get_channel_layer()
    if layer is None:
        return "not configured"
    if not async_to_sync(_round_trip)(layer):
        raise RuntimeError("the channel layer returned another message")
    return "ok"


def _api_version(refresh: bool) -> None:
    api = service_account_api_client(refresh=refresh)
    try:
        k8s.VersionApi(api).get_code(_request_timeout=(3, 5))
    finally:
        api.close()


def _check_cluster() -> str:
    """The API server answers the dashboard's own token (read again if it was rotated)."""
    try:
        _api_version(refresh=False)
    except k8s.ApiException as e:
        if e.status != 401:
            raise
        _api_version(refresh=True)  # the token may have just been replaced: read it again
    return "ok"


@login_not_required
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    checks = {}
    ready = True
    for name, check in (("database", _check_database), ("channel_layer", _check_channel_layer),
                        ("cluster", _check_cluster)):
        try:
            checks[name] = check()
        except Exception as e:  # a probe reports, it never raises
            log.warning("readiness check %s failed: %s", name, e)
            checks[name] = "unavailable"
            ready = False
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks},
                        status=200 if ready else 503)

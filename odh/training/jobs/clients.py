"""The TrainingClient the SDK's jobs use when none is given: one per kubeconfig and
context, shared."""

from __future__ import annotations

import threading

from odh.training.jobs.spellings import TrainingClient

_clients: dict[tuple[str | None, str | None], TrainingClient] = {}
_clients_lock = threading.Lock()


def default_client(kubeconfig: str | None = None, context: str | None = None
                   ) -> TrainingClient:
    """One TrainingClient per kubeconfig and context, shared by the jobs that use it."""
    key = (kubeconfig, context)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = TrainingClient(kubeconfig=kubeconfig, context=context)
        return _clients[key]

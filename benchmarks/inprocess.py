"""The dashboard in the benchmark's own process, as the view tests run it: Django set up
on a SQLite file, and test clients signed in through real OAuth tokens of simcluster."""

from __future__ import annotations

import os
from pathlib import Path


def setup_django(work: Path) -> None:
    """Django on a fresh SQLite file under `work`, without the embedded watch hub."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
    os.environ["DATABASE_URL"] = f"sqlite:///{work}/db.sqlite3"
    os.environ["WATCHER_EMBEDDED"] = "false"
    os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def signed_in_clients(sim, users: tuple[str, ...]) -> dict:
    """A Django test client per user, signed in to a dashboard that talks to `sim`."""
    from django.conf import settings
    from django.test import Client

    from tests.dashboard_support import sign_in
    from training import cluster, permissions
    from training.accounts import oauth
    settings.CLUSTER_KUBECONFIG = str(sim.kubeconfig("dashboard"))
    settings.OAUTH_CLIENT_SECRET = "mpijob-dashboard-demo-secret"  # noqa: S105 - the demo's
    cluster.cluster_config.cache_clear()
    oauth.reset()
    permissions.ANSWERS.clear()
    clients = {}
    for user in users:
        clients[user] = Client()
        sign_in(clients[user], sim, user)
    return clients

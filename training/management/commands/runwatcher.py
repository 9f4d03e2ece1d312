"""`python manage.py runwatcher`: the watch hub as a process of its own (production).

Web replicas then run with WATCHER_EMBEDDED=false and only consume: this process keeps
the cluster-wide watches and publishes every update through Redis (REDIS_URL), so the
API server sees one set of watches however many replicas and viewers there are. It also
records each job transition once, and the job history with it
(training/live/hub/keepers/transitions.py).

`--metrics-port 9102` (or WATCHER_METRICS_PORT) serves /metrics there for Prometheus: the
job, worker, wait and quota numbers only the process with the watches can give (see
training/monitoring/exposition.py), with the same METRICS_BEARER_TOKEN / METRICS_ALLOWED_NETWORKS
rules as the web process, plus /healthz (the process answers) and /readyz (the hub has
listed everything) for probes.

With WATCHER_LEADER_ELECTION=true several replicas run, one active: each holds or waits
for the Lease WATCHER_LEASE_NAME in WATCHER_LEASE_NAMESPACE (odh/training/cluster/election.py).
A standby serves /healthz and /readyz (ready: standing by) and starts the hub when it
takes the Lease over; a leader that can no longer renew it stops and exits with status 1
(the kubelet starts it again, as a candidate).

SIGTERM or SIGINT stops it cleanly (a leader gives the Lease up on the way out).
"""

from __future__ import annotations

import logging
import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from odh.training.cluster.election import LeaseElector
from training import cluster
from training.live.hub.building import build_hub
from training.monitoring import exposition as monitoring

log = logging.getLogger("training.live.hub")


class Command(BaseCommand):
    help = ("Keep the cluster-wide watches of the live dashboard and publish updates "
            "through the Redis channel layer (REDIS_URL) to every web process.")

    def add_arguments(self, parser):
        parser.add_argument("--allow-in-memory", action="store_true",
                            help="run even without REDIS_URL (updates then reach no one; "
                            "for trying the watches out)")
        parser.add_argument("--metrics-port", type=int, default=settings.WATCHER_METRICS_PORT,
                            help="serve /metrics, /healthz and /readyz on this port (0: do "
                            "not; default WATCHER_METRICS_PORT)")
        parser.add_argument("--metrics-address", default="0.0.0.0",
                            help="address to serve them on (default: every interface)")

    def handle(self, *args, **options):
        if not settings.REDIS_URL and not options["allow_in_memory"]:
            raise CommandError("runwatcher publishes through Redis: set REDIS_URL (the web "
                               "processes must use the same one)")
        stopping = threading.Event()

        def on_signal(signum, _frame):
            log.info("runwatcher: %s received, stopping", signal.Signals(signum).name)
            stopping.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        server = self._serve_metrics(options)
        elector = None
        if settings.WATCHER_LEADER_ELECTION:
            elector = LeaseElector(cluster.service_account_client,
                                   settings.WATCHER_LEASE_NAMESPACE, settings.WATCHER_LEASE_NAME,
                                   lease_seconds=settings.WATCHER_LEASE_SECONDS,
                                   on_stopped=stopping.set).start()
            monitoring.use_elector(elector)
            self._say(f"runwatcher: standing by for the lease "
                      f"{settings.WATCHER_LEASE_NAMESPACE}/{settings.WATCHER_LEASE_NAME} "
                      f"as {elector.holder}")
            while not elector.leading.is_set() and not stopping.wait(0.2):
                pass
            if not elector.leading.is_set():
                self._stop(server, None, elector)
                return
            self._say("runwatcher: leading")
        hub = build_hub().start()
        monitoring.use_hub(hub)
        self._say("runwatcher: watch hub started")
        announced = False
        while not stopping.wait(0.5):
            if not announced and hub.ready.is_set():
                counts = hub.index.counts()
                self._say(f"runwatcher: READY ({counts['jobs']} jobs, {counts['pods']} pods)")
                announced = True
        self._stop(server, hub, elector)
        if elector is not None and elector.lost.is_set():
            raise CommandError("runwatcher: lost the lease (could not renew it): exiting so "
                               "that it starts again as a candidate")

    def _serve_metrics(self, options) -> monitoring.MetricsServer | None:
        if not options["metrics_port"]:
            return None
        try:
            server = monitoring.MetricsServer(options["metrics_port"],
                                              options["metrics_address"]).start()
        except OSError as e:
            raise CommandError(f"cannot serve /metrics on port {options['metrics_port']}: "
                               f"{e}") from None
        self._say(f"runwatcher: /metrics on port {server.port}")
        return server

    def _stop(self, server, hub, elector) -> None:
        if server is not None:
            server.stop()
        if hub is not None:
            hub.stop()
            monitoring.use_hub(None)
        if elector is not None:  # after the hub: a successor must not overlap it
            elector.stop(release=not elector.lost.is_set())
            monitoring.use_elector(None)
        self._say("runwatcher: stopped")

    def _say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

"""Evidence kept before the cluster deletes it (odh/training/diagnosis/evidence.py, the hub's
training/live/hub/keepers/evidence.py): a job written from the upstream examples (Launcher
`restartPolicy: OnFailure`, restarted in place and its pod deleted at the backoff limit,
the Job itself soon after by `ttlSecondsAfterFinished`) is told the same as the job the
wizard makes of the same manifest (Launcher `Never`, its failed pods kept), for every
failure simcluster simulates that fails a job."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.dashboard_support import oauth_token
from tests.integration.hub.conftest import NS, dashboard_client, start_cluster
from tests.reference import PI
from tests.training_jobs import Jobs
from tests.waiting import wait_until

EXAMPLE = PI
FAILURES = ["oom", "exit-code", "mpi-connection-refused", "cuda-oom", "command-not-found",
            "not-executable", "segfault", "evict", "node-lost"]


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    # At speed 50 an upstream Launcher's restarts come 0.2 s apart (10 s on a cluster):
    # on a loaded 2-core machine the keeper lost that race now and then, which no cluster
    # asks of it; at 20 they come 0.5 s apart.
    cluster = start_cluster(tmp_path_factory, "evidence", speed=20)
    yield cluster
    cluster.stop()


def _upstream(name: str, failure: str) -> dict:
    """The upstream example as people apply it, with simcluster's failure annotation."""
    manifest = yaml.safe_load(EXAMPLE.read_text())
    manifest["metadata"] = {"name": name, "annotations": {
        "simcluster.io/failure": failure, "simcluster.io/failure-worker": "1",
        "simcluster.io/run-seconds": "10", "opendatahub.io/username": "alice"}}
    return manifest


def _wizards(name: str, failure: str) -> dict:
    """The job the wizard makes of the same manifest (imported, then generated anew)."""
    from odh.training.kinds.mpijob.manifest import build_manifest
    from odh.training.manifests.importing import parse_manifest_text
    spec = parse_manifest_text(yaml.safe_dump(_upstream(name, failure)))
    spec.base = None
    spec.namespace = NS
    return build_manifest(spec)


def _cut_short(found) -> bool:
    """Whether the diagnosis' reads ran out of their time (a loaded machine's simcluster
    answering slowly): what it says is then what it could read, not what the job shows.
    Compared here is what is told from all the evidence, so such a one is read again."""
    return found is not None and any("no time left" in u or "did not answer" in u
                                     for u in found.unread)


def _headline(sim, token: str, name: str) -> str:
    """The job page's diagnosis headline for alice (training/diagnoses/)."""
    from django.test import override_settings

    from odh.training.kinds import MPIJOB
    from odh.training.status.queries import job_detail
    from training import cluster, diagnoses
    with override_settings(CLUSTER_KUBECONFIG=str(sim.kubeconfig("dashboard"))):
        cluster.cluster_config.cache_clear()
        with cluster.client_for_token(token) as client:
            detail = job_detail(client, MPIJOB, NS, name)
        for _attempt in range(3):
            _facts, found = diagnoses.compute(token, detail.job, detail.pods, detail.events,
                                              detail.summary)
            if not _cut_short(found):
                break
    assert found is not None, name
    # the node a Worker ran on may differ between the two jobs
    return re.sub(r"\bcpu-\d+\b", "<node>", found.headline)


def _cli_headline(sim, name: str) -> str:
    """What `odh training describe` and the SDK's diagnose() say, with alice's own client."""
    from odh.training.cluster.client import ClusterClient
    from odh.training.diagnosis.gather import diagnose_job
    from odh.training.kinds import MPIJOB
    with ClusterClient(sim.api_client("alice")) as client:
        for _attempt in range(3):
            _detail, found = diagnose_job(client, MPIJOB, NS, name)
            if not _cut_short(found):
                break
    assert found is not None, name
    return re.sub(r"\bcpu-\d+\b", "<node>", found.headline)


@pytest.mark.django_db(transaction=True)
def test_an_upstream_example_is_told_as_the_wizards_job_for_every_failure(sim):
    from channels.layers import InMemoryChannelLayer

    from training.live.hub.hub import Hub, Publisher
    from training.live.hub.keepers.evidence import EvidenceKeeper
    from training.models import KeptEvidence

    hub = Hub(lambda: dashboard_client(sim), Publisher(InMemoryChannelLayer()),
              evidence=EvidenceKeeper(lambda: dashboard_client(sim)))
    hub.start()
    jobs = Jobs(sim.api_client("alice"), NS)
    try:
        assert hub.ready.wait(30)
        for failure in FAILURES:
            jobs.create(_upstream(f"up-{failure}", failure))
            jobs.create(_wizards(f"wz-{failure}", failure))

        def failed(name: str) -> bool:
            return ("Failed", "True") in [(t, s) for t, s, _r in jobs.conditions(name)]

        def settled() -> bool:
            # every job failed; the upstream ones' Launcher pods are gone with their Jobs
            # (ttlSecondsAfterFinished), and the keeper has kept what it saw
            return all(failed(f"{p}-{f}") for f in FAILURES for p in ("up", "wz")) and \
                all(not jobs.job_pods(f"up-{f}", "launcher") for f in FAILURES) and \
                hub.evidence.idle()

        wait_until(settled, 120, message=lambda: f"{hub.evidence.stats()}")
        hub.stop()  # what it kept is in the database; nothing writes while we read
        token = oauth_token(sim, "alice")
        told = {f: (_headline(sim, token, f"up-{f}"), _headline(sim, token, f"wz-{f}"))
                for f in FAILURES}
        differ = {f: pair for f, pair in told.items() if pair[0] != pair[1]}
        # said whole (pytest cuts a long dict): which failure, and both headlines
        assert not differ, "upstream vs wizard's: " + "; ".join(
            f"{f}: {up!r} vs {wz!r}" for f, (up, wz) in differ.items())
        assert not any(up.startswith("We could not tell") for up, _wz in told.values()), told
        # what made it possible: the upstream Launcher's failed runs, kept with their logs
        kept = KeptEvidence.objects.filter(job_name="up-mpi-connection-refused")
        assert any("Connection refused" in row.log for row in kept)
        # the CLI and the SDK, which read the cluster and not the dashboard's database, tell
        # the same: the watcher wrote what it kept on the job
        cli = {f: _cli_headline(sim, f"up-{f}") for f in FAILURES}
        assert {f: (cli[f], up) for f, (up, _wz) in told.items() if cli[f] != up} == {}
        annotation = jobs.get("up-mpi-connection-refused")["metadata"]["annotations"][
            "opendatahub.io/kept-evidence"]
        assert "Connection refused" in annotation
    finally:
        jobs.cleanup()
        hub.stop()

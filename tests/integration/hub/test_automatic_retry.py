"""Automatic retry (MPIJob-033) against the demo cluster, with two hubs in this process on
the test database, each with its transition recorder and its retry starter (as two
watcher replicas would be): a job of alice's that asked for one retry loses a Worker's
node, and exactly one retry is made, linked to it, created by the watcher's account in
her name; a job that runs out of memory is not retried, unless it asked for every
failure; a job whose creator may no longer create jobs there is not retried."""

from __future__ import annotations

import pytest
from django.test import override_settings

from odh.training.manifests.retries import (
    RETRIES_ANNOTATION,
    RETRY_ATTEMPT_ANNOTATION,
    RETRY_OF_ANNOTATION,
    RETRY_OF_UID_ANNOTATION,
    RETRY_ON_ANNOTATION,
)
from tests.integration.hub.conftest import dashboard_client
from tests.training_jobs import mpijob
from tests.waiting import wait_until


def _hub(sim):
    from channels.layers import InMemoryChannelLayer

    from training.live.hub.hub import Hub, Publisher
    from training.live.hub.retries import RetryStarter
    from training.live.hub.transitions import TransitionRecorder

    return Hub(lambda: dashboard_client(sim), Publisher(InMemoryChannelLayer()),
               transitions=TransitionRecorder(audit_seen=None, prune=None),
               retries=RetryStarter(poll=0.2))


def _failing(name: str, failure: str, retries: str = "1", on: str = "platform",
             user: str = "alice") -> dict:
    return mpijob(name, workers=1, run_seconds=30, annotations={
        "opendatahub.io/username": user, "simcluster.io/failure": failure,
        "simcluster.io/failure-after-seconds": "1", RETRIES_ANNOTATION: retries,
        RETRY_ON_ANNOTATION: on})


def _exists(jobs, name: str) -> dict | None:
    from kubernetes.client.rest import ApiException

    try:
        return jobs.get(name)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


@pytest.mark.django_db(transaction=True)
@override_settings(RETRY_BACKOFF_SECONDS=1)
def test_a_lost_node_gives_one_linked_retry_and_an_oom_none(demo, jobs):
    from training.models import AuditEvent, JobRetry

    hubs = [_hub(demo), _hub(demo)]
    for hub in hubs:
        hub.start()
    try:
        for hub in hubs:
            assert hub.ready.wait(30), hub.stats()
        lost = jobs.create(_failing("retry-node", "node-lost"))
        oom = jobs.create(_failing("retry-oom", "oom", retries="2"))
        every = jobs.create(_failing("retry-every", "oom", on="all"))
        jobs.created += [("mpijobs", "v2beta1", name) for name in (
            "retry-node-retry-1", "retry-oom-retry-1", "retry-every-retry-1")]
        retry = wait_until(lambda: _exists(jobs, "retry-node-retry-1"), 120,
                           message=lambda: f"the retry; {[h.stats()['retries'] for h in hubs]}"
                           f" {list(JobRetry.objects.values())}")
        annotations = retry["metadata"]["annotations"]
        assert annotations[RETRY_OF_ANNOTATION] == "retry-node"
        assert annotations[RETRY_OF_UID_ANNOTATION] == lost["metadata"]["uid"]
        assert annotations[RETRY_ATTEMPT_ANNOTATION] == "1"
        assert annotations["opendatahub.io/username"] == "alice"
        assert retry["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 1
        wait_until(lambda: _exists(jobs, "retry-every-retry-1"), 120,
                   message="retry-on all retries an OOM")
        # the retry fails the same way; it was the only one asked for: no second
        jobs.wait_condition("retry-node-retry-1", "Failed", timeout=120)
        jobs.wait_condition("retry-oom", "Failed", timeout=120)
        wait_until(lambda: all(h.transitions.idle() for h in hubs) and
                   JobRetry.objects.filter(state="waiting").count() == 0, 60,
                   message=lambda: str(list(JobRetry.objects.values("name", "state"))))
        rows = list(JobRetry.objects.filter(original_uid__in=[
            lost["metadata"]["uid"], oom["metadata"]["uid"], every["metadata"]["uid"]])
            .values_list("name", "attempt", "state", "scenario", "created_by"))
        assert sorted(rows) == [("retry-every-retry-1", 1, "started", "oom-killed", "alice"),
                                ("retry-node-retry-1", 1, "started", "node-lost", "alice")]
        assert _exists(jobs, "retry-oom-retry-1") is None
        assert _exists(jobs, "retry-node-retry-2") is None
        audited = AuditEvent.objects.filter(verb="retry", name="retry-node-retry-1")
        assert [(a.username, a.outcome) for a in audited] == [("alice", "success")]
        assert "by=watcher" in audited[0].detail
        started = sum(h.retries.outcomes.get("started", 0) for h in hubs)
        assert started == 2, [h.stats()["retries"] for h in hubs]
    finally:
        for hub in hubs:
            hub.stop()


@pytest.mark.django_db(transaction=True)
@override_settings(RETRY_BACKOFF_SECONDS=0)
def test_no_retry_for_a_creator_who_may_no_longer_create_jobs_there(demo, jobs):
    from training.models import JobRetry

    hub = _hub(demo).start()
    try:
        assert hub.ready.wait(30), hub.stats()
        # bob only views team-nlp's neighbour; here he may do nothing at all
        job = jobs.create(_failing("retry-bob", "node-lost", user="bob"))
        jobs.created.append(("mpijobs", "v2beta1", "retry-bob-retry-1"))
        refused = wait_until(lambda: JobRetry.objects.filter(
            original_uid=job["metadata"]["uid"], state="refused").first(), 120,
            message=lambda: str(list(JobRetry.objects.values("name", "state"))))
        assert "bob may no longer create MPIJob jobs in project team-nlp" in \
            refused.last_error
        assert _exists(jobs, "retry-bob-retry-1") is None
    finally:
        hub.stop()

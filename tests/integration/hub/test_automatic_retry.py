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
    from training.live.hub.keepers.retries import RetryStarter
    from training.live.hub.keepers.transitions import TransitionRecorder

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
        def state() -> str:
            from training.models import JobTransition

            return (f"retries {[h.stats()['retries'] for h in hubs]}; transitions "
                    f"{[h.stats()['transitions'] for h in hubs]}; rows "
                    f"{list(JobRetry.objects.values('name', 'state', 'last_error'))}; "
                    f"recorded {list(JobTransition.objects.values_list('name', 'to_status'))}")

        retry = wait_until(lambda: _exists(jobs, "retry-node-retry-1"), 120,
                           message=lambda: f"the retry; {state()}")
        annotations = retry["metadata"]["annotations"]
        assert annotations[RETRY_OF_ANNOTATION] == "retry-node"
        assert annotations[RETRY_OF_UID_ANNOTATION] == lost["metadata"]["uid"]
        assert annotations[RETRY_ATTEMPT_ANNOTATION] == "1"
        assert annotations["opendatahub.io/username"] == "alice"
        assert retry["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 1
        wait_until(lambda: _exists(jobs, "retry-every-retry-1"), 120,
                   message=lambda: f"retry-on all retries an OOM; {state()}")
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


@pytest.mark.django_db(transaction=True)
def test_a_retry_created_before_a_watcher_was_killed_is_not_created_twice(demo, jobs):
    """The watcher created the retry and was killed before it recorded so: its claim
    expires, the next watcher claims the row, finds the job there and records it started."""
    from datetime import UTC, datetime, timedelta

    from training.live.hub.keepers.retries import claim_due, start
    from training.models import JobRetry

    failed = jobs.create(_failing("retry-killed", "node-lost"))
    jobs.create(mpijob("retry-killed-retry-1", workers=1, annotations={  # the killed one's
        "opendatahub.io/username": "alice", RETRY_OF_ANNOTATION: "retry-killed",
        RETRY_OF_UID_ANNOTATION: failed["metadata"]["uid"], RETRY_ATTEMPT_ANNOTATION: "1"}))
    now = datetime.now(UTC)
    row = JobRetry.objects.create(
        original_uid=failed["metadata"]["uid"], attempt=1, retries=1, namespace="team-nlp",
        kind="MPIJob", original="retry-killed", failed="retry-killed",
        failed_uid=failed["metadata"]["uid"], name="retry-killed-retry-1", created_by="alice",
        scenario="node-lost", spec=failed, due=now - timedelta(minutes=5),
        claimed_until=now - timedelta(seconds=1))  # the killed watcher's claim, expired
    ((pk, claim),) = [c for c in claim_due(10) if c[0] == row.pk]
    assert claim_due(10) == []  # claimed: nobody else gets it meanwhile
    assert start(pk, claim, lambda: dashboard_client(demo)) == "started"
    row.refresh_from_db()
    assert (row.state, row.claimed_until) == ("started", None)
    names = {j["metadata"]["name"] for j in jobs.custom.list_namespaced_custom_object(
        "kubeflow.org", "v2beta1", "team-nlp", "mpijobs")["items"]}
    assert "retry-killed-retry-1" in names and "retry-killed-retry-2" not in names
    # a job of that name that is not the retry (someone's own): refused, not taken for it
    other = JobRetry.objects.create(
        original_uid="another-first", attempt=1, retries=1, namespace="team-nlp",
        kind="MPIJob", original="retry-killed", failed="retry-killed",
        failed_uid="another-failed", name="retry-killed-retry-1", created_by="alice",
        spec=failed, due=now - timedelta(minutes=1))
    ((pk, claim),) = [c for c in claim_due(10) if c[0] == other.pk]
    assert start(pk, claim, lambda: dashboard_client(demo)) == "refused"
    other.refresh_from_db()
    assert "already exists" in other.last_error


def test_two_runwatcher_processes_make_one_retry(demo, jobs, tmp_path, monkeypatch):
    """Two watcher replicas (runwatcher processes on one database file): a node lost gives
    one retry, made by one of them."""
    from tests.integration.hub.test_history import Database, Watcher

    monkeypatch.setenv("RETRY_BACKOFF_SECONDS", "1")
    db = Database("sqlite", tmp_path)
    watchers = [Watcher(demo, db, tmp_path / f"runwatcher-{n}.log") for n in (1, 2)]
    try:
        for watcher in watchers:
            watcher.wait_ready()
        jobs.create(_failing("retry-procs", "node-lost"))
        jobs.created.append(("mpijobs", "v2beta1", "retry-procs-retry-1"))
        wait_until(lambda: _exists(jobs, "retry-procs-retry-1"), 120,
                   message=lambda: "\n".join(w.log()[-3000:] for w in watchers))
        jobs.wait_condition("retry-procs-retry-1", "Failed", timeout=120)
        wait_until(lambda: db.query("SELECT count(*) FROM training_jobtransition WHERE "
                                    "name = 'retry-procs-retry-1' AND to_status = 'Failed'")
                   == [(1,)], 60, message="the retry's failure recorded")
        rows = db.query("SELECT name, attempt, state FROM training_jobretry")
        assert rows == [("retry-procs-retry-1", 1, "started")], rows
        started = sum(w.log().count("retry-procs-retry-1 (attempt 1 of retry-procs): "
                                    "started") for w in watchers)
        assert started == 1, "\n".join(w.log() for w in watchers)
        assert _exists(jobs, "retry-procs-retry-2") is None
        for watcher in watchers:
            assert watcher.process.poll() is None, watcher.log()
            assert "Traceback" not in watcher.log(), watcher.log()
    finally:
        for watcher in watchers:
            watcher.stop()

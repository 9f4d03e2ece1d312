"""Signs told before a job ends, against the demo cluster: two hubs (two watchers) in this
process on the test database, each looking for signs and sending. alice asked to hear of
a possible hang and of restarts of her jobs: a job of hers whose Worker crashes and is
restarted in place, and one that hangs, each reach her webhook exactly once, in the
diagnosis' words and with what to do. Pending longer than N minutes is claimed once per
wait and told to the subscriptions that asked for that N, not to one made after. The early
warnings: a Worker near its memory limit, and a pace that runs past the job's deadline,
each told once while the job still runs."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import timedelta

import pytest

from tests.integration.hub.conftest import NS, dashboard_client
from tests.training_jobs import mpijob
from tests.waiting import wait_until
from tests.webhook_receiver import serving, signed_by

SECRET = "alice-signs-secret"


_Receiver = signed_by(SECRET)


def _hub(sim):
    from channels.layers import InMemoryChannelLayer

    from training.live.hub.hub import Hub, Publisher
    from training.live.hub.keepers.notifying import NotificationSender
    from training.live.hub.keepers.signs import SignWatcher
    from training.live.hub.keepers.transitions import TransitionRecorder

    # one sending thread each: SQLite's in-memory test database takes one writer at a time;
    # a hang after 3 s of silence (the dashboard's threshold is minutes)
    return Hub(lambda: dashboard_client(sim), Publisher(InMemoryChannelLayer()),
               transitions=TransitionRecorder(), notifications=NotificationSender(workers=1),
               signs=SignWatcher(every=0.3, hang_after=lambda: 3.0))


@pytest.mark.django_db(transaction=True)
def test_a_restart_and_a_hang_are_told_once_with_what_to_do(demo, jobs, settings):
    from training import cluster
    from training.models import JobSignal, NotificationDelivery, NotificationSubscription

    with serving(_Receiver) as receiver:
        settings.NOTIFY_WEBHOOK_ALLOW = ["127.0.0.1"]
        settings.CLUSTER_KUBECONFIG = str(demo.kubeconfig("dashboard"))
        settings.PROMETHEUS_URL = ""
        cluster.cluster_config.cache_clear()
        NotificationSubscription.objects.create(
            username="alice", scope="mine", statuses=[], signals=["hang", "restart"],
            in_dashboard=False, webhook_url=f"http://127.0.0.1:{receiver.server_address[1]}/",
            webhook_secret=SECRET)
        hubs = [_hub(demo), _hub(demo)]
        for hub in hubs:
            hub.start()
        try:
            crashes = mpijob("signs-restart", workers=2, run_seconds=600, annotations={
                "opendatahub.io/username": "alice", "simcluster.io/failure": "restart-once",
                "simcluster.io/failure-worker": "1", "simcluster.io/failure-after-seconds": "50"})
            crashes["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "OnFailure"
            jobs.create(crashes)
            jobs.create(mpijob("signs-hang", workers=1, run_seconds=600, annotations={
                "opendatahub.io/username": "alice", "simcluster.io/failure": "hang"}))

            def told(job: str, event: str) -> list[dict]:
                return [body for _path, _signed, body in receiver.received
                        if body["job"] == job and body["event"] == event]

            wait_until(lambda: told("signs-restart", "job.restarted") and
                       told("signs-hang", "job.possible_hang"), 90, message=lambda: str(list(
                           JobSignal.objects.filter(namespace=NS).values_list(
                               "name", "signal", "key"))))
            # both watchers look again, several times: nothing is told twice
            passes = [h.signs.passes for h in hubs]
            wait_until(lambda: all(h.signs.passes >= p + 5
                                   for h, p in zip(hubs, passes, strict=True)), 60,
                       message="more passes")
            wait_until(lambda: all(h.notifications.idle() for h in hubs), 30,
                       message="the senders done")
            assert all(signed for _path, signed, _body in receiver.received)
            restarted, = told("signs-restart", "job.restarted")
            assert restarted["headline"].startswith("Worker 1 crashed and ")
            assert "suspend or delete the job" in restarted["advice"]
            assert restarted["to"] == "Running" and "signs-restart" in restarted["text"]
            hang, = told("signs-hang", "job.possible_hang")
            assert hang["headline"].startswith("Possible hang: no new log line")
            assert "delete the job and retry it" in hang["advice"]
            assert hang["url"].endswith(f"/jobs/{NS}/mpijob/signs-hang/")
            # one occurrence each, claimed by one of the two watchers
            assert JobSignal.objects.filter(name="signs-hang", signal="hang").count() == 1
            # (the shared demo's own jobs may give signs of their own meanwhile: not counted)
            assert JobSignal.objects.filter(name="signs-restart", signal="restart").count() == 1
            assert NotificationDelivery.objects.filter(
                signal__name__in=["signs-hang", "signs-restart"]).exclude(
                state="sent").count() == 0
        finally:
            for hub in hubs:
                hub.stop()
            cluster.cluster_config.cache_clear()


@contextmanager
def _warnings_heard(demo, settings, prometheus_url: str, **watcher):
    """A hub looking for early warnings (`watcher`: SignWatcher's settings) and a webhook
    where alice hears them: (the hub, the receiver)."""
    from channels.layers import InMemoryChannelLayer

    from training import cluster
    from training.live.hub.hub import Hub, Publisher
    from training.live.hub.keepers.notifying import NotificationSender
    from training.live.hub.keepers.signs import SignWatcher
    from training.live.hub.keepers.transitions import TransitionRecorder
    from training.models import NotificationSubscription

    with serving(_Receiver) as receiver:
        settings.NOTIFY_WEBHOOK_ALLOW = ["127.0.0.1"]
        settings.CLUSTER_KUBECONFIG = str(demo.kubeconfig("dashboard"))
        settings.PROMETHEUS_URL = prometheus_url
        cluster.cluster_config.cache_clear()
        NotificationSubscription.objects.create(
            username="alice", scope="mine", statuses=[], signals=["warnings"],
            in_dashboard=False, webhook_url=f"http://127.0.0.1:{receiver.server_address[1]}/",
            webhook_secret=SECRET)
        hub = Hub(lambda: dashboard_client(demo), Publisher(InMemoryChannelLayer()),
                  transitions=TransitionRecorder(),
                  notifications=NotificationSender(workers=1),
                  signs=SignWatcher(every=0.3, **watcher))
        hub.start()
        try:
            yield hub, receiver
        finally:
            hub.stop()
            cluster.cluster_config.cache_clear()


@pytest.mark.django_db(transaction=True)
def test_a_worker_near_its_memory_limit_is_told_before_it_is_killed(demo, jobs, settings):
    """The early warning of a coming OOM (MPIJob-041): Worker 0's working set climbs to its
    1Gi limit (simcluster's OOM ramp, read from its Prometheus with the dashboard's own
    account); over 90% for the whole window (2 s here, minutes in the dashboard), alice's
    webhook hears it once, before the Worker is OOMKilled."""
    from training.live.hub.keepers.signs import prometheus_with_service_account

    with _warnings_heard(demo, settings, demo.prometheus_url,
                         prometheus=prometheus_with_service_account,
                         memory_window=lambda: 2.0) as (hub, receiver):
        job = mpijob("signs-memory", workers=1, run_seconds=6000, annotations={
            "opendatahub.io/username": "alice", "simcluster.io/failure": "oom",
            "simcluster.io/failure-worker": "0",
            "simcluster.io/failure-after-seconds": "3000"})
        worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        worker["containers"][0]["resources"] = {"limits": {"memory": "1Gi", "cpu": "1"}}
        jobs.create(job)

        def told() -> list[dict]:
            return [body for _path, _signed, body in receiver.received
                    if body["job"] == "signs-memory"]

        wait_until(lambda: told(), 150, message=lambda: str(hub.signs.stats()))
        (warning,) = told()
        assert warning["event"] == "job.memory_near_limit" and warning["to"] == "Running"
        assert warning["headline"].startswith("Worker 0 has used over 9")
        assert "of its memory limit for 2s" in warning["headline"]
        assert "Clone the job with more memory per Worker" in warning["advice"]


@pytest.mark.django_db(transaction=True)
def test_pending_too_long_is_claimed_once_and_told_to_who_asked_for_that_n(settings):
    from odh.training.signs import Sign
    from tests.unit.diagnosis_objects import facts, pending_job
    from training.live.hub.keepers.signs import claim_with_orm
    from training.models import NotificationDelivery, NotificationSubscription

    summary = facts(pending_job("vit"), []).s
    since = summary.since
    thirty = NotificationSubscription.objects.create(
        username="alice", scope="mine", statuses=[], signals=["pending"], pending_minutes=30)
    ten = NotificationSubscription.objects.create(
        username="alice", scope="mine", statuses=[], signals=["pending"], pending_minutes=10,
        email="alice@example.com")
    NotificationSubscription.objects.create(  # asked for statuses only
        username="alice", scope="mine", statuses=["Failed"])
    for sub in (thirty, ten):  # made before the job waited
        NotificationSubscription.objects.filter(pk=sub.pk).update(
            created=since - timedelta(minutes=1))
    later = NotificationSubscription.objects.create(  # made after it began to wait too long
        username="alice", scope="mine", statuses=[], signals=["pending"], pending_minutes=30)
    assert later.created > since + timedelta(minutes=30)
    sign = Sign("pending", f"{since.isoformat()}/30m", since + timedelta(minutes=30),
                "Pending for 31m")
    assert claim_with_orm(summary, sign) is True
    assert claim_with_orm(summary, sign) is False  # the other watcher, or after a restart
    queued = NotificationDelivery.objects.filter(signal__signal="pending")
    assert [(d.subscription_id, d.channel) for d in queued] == [(thirty.pk, "dashboard")]
    ten_sign = Sign("pending", f"{since.isoformat()}/10m", since + timedelta(minutes=10),
                    "Pending for 11m")
    assert claim_with_orm(summary, ten_sign) is True
    assert sorted(NotificationDelivery.objects.filter(subscription=ten).values_list(
        "channel", flat=True)) == ["dashboard", "email"]


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_pace_runs_past_its_deadline_is_told_before_it_is_stopped(
        demo, jobs, settings):
    """The early warning of a deadline (MPIJob-041): at the pace its log tells, training
    ends long after `runPolicy.activeDeadlineSeconds`; alice's webhook hears it once, while
    the job still runs, with what to do."""
    from training.models import JobSignal

    with _warnings_heard(demo, settings, "") as (hub, receiver):
        # a long run (its epochs seconds apart here), stopped after an hour of the
        # cluster's time: at its pace, far past that
        job = mpijob("signs-deadline", workers=1, run_seconds=200000, annotations={
            "opendatahub.io/username": "alice", "simcluster.io/epochs": "1000"},
            runPolicy={"activeDeadlineSeconds": 3600})
        jobs.create(job)

        def told() -> list[dict]:
            return [body for _path, _signed, body in receiver.received
                    if body["job"] == "signs-deadline"]

        wait_until(lambda: told(), 60, message=lambda: str(hub.signs.stats()))
        wait_until(lambda: hub.notifications.idle(), 30, message="the sender done")
        (warning,) = told()
        assert warning["event"] == "job.deadline_at_risk" and warning["to"] == "Running"
        assert warning["headline"].startswith("At its pace training needs ")
        assert "but its deadline of 1h 0m 0s stops it in " in warning["headline"]
        assert "Raise or remove runPolicy.activeDeadlineSeconds" in warning["advice"]
        assert JobSignal.objects.filter(name="signs-deadline",
                                        signal="deadline").count() == 1

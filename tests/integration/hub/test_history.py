"""One event per job transition, and the job history written from it: one transition
record per change of a job's status and one history record per finished job, however many
watchers, and across restarts.

Against the demo cluster (a Succeeded and a Failed MPIJob, a Succeeded TFJob from before
the start): two hubs in this process on the test database, then two `runwatcher`
processes on one database file (SQLite) and on one PostgreSQL database, each time
started together so that they race on the finished jobs they list first, then on a job
that fails while both watch; then both killed, a job finishing and another deleted while
nothing watches, and the watchers started again.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import requests

from tests.integration.hub.conftest import NS, dashboard_client
from tests.prometheus_text import cluster_summaries, parse, value
from tests.simcluster_process import ROOT, free_port
from tests.training_jobs import mpijob
from tests.waiting import wait_until

POSTGRES_URL = os.environ.get("POSTGRES_TEST_URL", "postgres://postgres@127.0.0.1:5432/test")
WATCHER_TOKEN = "watcher-metrics-token"


def finished_uids(sim) -> dict[str, str]:
    """{uid: outcome} of the cluster's finished jobs, as the cluster says now."""
    return {s.uid: str(s.status) for _job, s in cluster_summaries(sim) if s.is_finished}


def short_job(name: str) -> dict:
    return mpijob(name, workers=1, run_seconds=3,
                  annotations={"opendatahub.io/username": "alice"})


# -- two hubs in this process ---------------------------------------------------------------------
def _hub(sim):
    from channels.layers import InMemoryChannelLayer

    from training.live.hub.hub import Hub, Publisher
    from training.live.hub.keepers.transitions import TransitionRecorder

    return Hub(lambda: dashboard_client(sim), Publisher(InMemoryChannelLayer()),
               transitions=TransitionRecorder())


def _settled(hubs, records: int) -> bool:
    """Both hubs have handled every finished job: one wrote each record, the other
    found it (or wrote it first)."""
    return all(h.ready.is_set() and h.transitions.idle() for h in hubs) and \
        sum(h.transitions.written + h.transitions.found for h in hubs) == 2 * records


def once_each(transitions: list[tuple[str, str, str]]) -> Counter:
    """(uid, from, to) of the transitions recorded more than once."""
    counts = Counter(transitions)
    return Counter({t: n for t, n in counts.items() if n > 1})


@pytest.mark.django_db(transaction=True)
def test_two_hubs_write_one_record_per_finished_job(demo, jobs):
    from training.models import JobHistory

    expected = finished_uids(demo)
    # the demo's finished jobs: gpt2-finetune and the five failed ones that show what the
    # diagnosis explains, the TrainJob t5-large-summarize, resnet50-imagenet, mnist-tf-dist
    # and the TrainJob bert-base-ner
    assert sorted(expected.values()) == ["Failed"] * 7 + ["Succeeded"] * 3
    hubs = [_hub(demo), _hub(demo)]
    for hub in hubs:  # together: they race on the jobs they list first
        hub.start()
    try:
        def recorded() -> dict[str, str]:
            # this cluster's jobs only: another module's hub may still run in this process
            return dict(JobHistory.objects.filter(uid__in=list(expected)).values_list(
                "uid", "outcome"))

        wait_until(lambda: recorded() == expected and _settled(hubs, len(expected)), 60,
                   message=lambda: f"{recorded()} != {expected}; "
                   f"{[h.stats()['transitions'] for h in hubs]}")
        assert sum(h.transitions.written for h in hubs) == len(expected)
        failed = JobHistory.objects.get(outcome="Failed", name="gpt2-finetune")
        assert (failed.namespace, failed.kind) == (NS, "MPIJob")
        assert failed.reason.startswith("BackoffLimitExceeded")
        assert (failed.cause, failed.cause_reason) == ("Worker 2 was OOMKilled", "OOMKilled")

        # a job that finishes while both hubs watch it
        jobs.create(short_job("history-new"))
        jobs.wait_condition("history-new", "Succeeded")
        new = wait_until(lambda: JobHistory.objects.filter(name="history-new").first(), 60,
                         message="the new job's record")
        wait_until(lambda: _settled(hubs, len(expected) + 1), 60,
                   message=lambda: str([h.stats()["transitions"] for h in hubs]))
        assert JobHistory.objects.filter(uid=new.uid).count() == 1
        assert JobHistory.objects.filter(uid__in=[*expected, new.uid]).count() == \
            len(expected) + 1
        assert sum(h.transitions.written for h in hubs) == len(expected) + 1
        # one event per transition: its creation, and its end, each once
        from training.models import JobTransition

        events = list(JobTransition.objects.filter(uid=new.uid).order_by("id").values_list(
            "uid", "from_status", "to_status"))
        assert not once_each(events), events
        assert events[0][1] == "" and [e[2] for e in events][-1] == "Succeeded", events
        for uid, outcome in expected.items():
            assert JobTransition.objects.filter(uid=uid, to_status=outcome).count() == 1
        assert (new.outcome, new.kind, new.namespace, new.created_by) == (
            "Succeeded", "MPIJob", NS, "alice")
        assert "status" not in new.spec and new.spec["metadata"]["name"] == "history-new"
        assert new.started is not None and new.finished is not None
        assert new.duration_seconds is not None and new.gpu_hours == 0.0
    finally:
        for hub in hubs:
            hub.stop()


# -- two runwatcher processes on one database ------------------------------------------------------
class Database:
    """An empty database with the dashboard's tables: a SQLite file or a PostgreSQL db."""

    def __init__(self, vendor: str, tmp: Path) -> None:
        self.vendor = vendor
        if vendor == "sqlite":
            self.path = tmp / "history.sqlite3"
            self.url = f"sqlite:///{self.path}"
        else:
            import psycopg

            self.name = f"test_history_{os.getpid()}"
            try:
                with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=3) as c:
                    c.execute(f'DROP DATABASE IF EXISTS "{self.name}"')
                    c.execute(f'CREATE DATABASE "{self.name}"')
            except psycopg.Error as e:
                pytest.skip(f"no PostgreSQL at {POSTGRES_URL}: {e}")
            self.url = POSTGRES_URL.rsplit("/", 1)[0] + "/" + self.name
        result = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"],
                                cwd=ROOT, env=self.env(), capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ, DATABASE_URL=self.url, DJANGO_SETTINGS_MODULE="dashboard.settings",
                   PYTHONUNBUFFERED="1", **extra)
        env.pop("REDIS_URL", None)
        return env

    def rows(self) -> list[tuple[str, str, str]]:
        """(uid, outcome, name) of every history record."""
        return self.query("SELECT uid, outcome, name FROM training_jobhistory")

    def transitions(self, name: str | None = None) -> list[tuple[str, str, str]]:
        """(uid, from, to) of every transition recorded (of the jobs called `name`)."""
        rows = self.query("SELECT uid, from_status, to_status, name FROM "
                          "training_jobtransition ORDER BY id")
        return [row[:3] for row in rows if name is None or row[3] == name]

    def audit(self, name: str) -> list[tuple[str, str, str]]:
        """(verb, outcome, username) of the audit rows about the jobs called `name`."""
        rows = self.query("SELECT verb, outcome, username, name FROM training_auditevent "
                          "ORDER BY id")
        return [row[:3] for row in rows if row[3] == name]

    def subscribe(self, username: str, statuses: list[str]) -> None:
        """`username` subscribes to their own jobs' `statuses`, in the dashboard (made with
        the ORM in a process of its own, as the page would)."""
        code = ("from training.models import NotificationSubscription as S; "
                f"S.objects.create(username={username!r}, scope='mine', "
                f"statuses={statuses!r}, in_dashboard=True)")
        result = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT,
                                env=self.env(), capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr

    def query(self, sql: str) -> list[tuple]:
        if self.vendor == "sqlite":
            with sqlite3.connect(self.path, timeout=10) as conn:
                return list(conn.execute(sql))
        import psycopg

        with psycopg.connect(self.url, connect_timeout=3) as conn:
            return list(conn.execute(sql))

    def drop(self) -> None:
        if self.vendor == "postgresql":
            import psycopg

            with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=3) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


class Watcher:
    def __init__(self, sim, db: Database, log_path: Path) -> None:
        self.log_path = log_path
        self.port = free_port()
        env = db.env(CLUSTER_KUBECONFIG=str(sim.kubeconfig("dashboard")),
                     WATCHER_EMBEDDED="false", METRICS_BEARER_TOKEN=WATCHER_TOKEN)
        with open(log_path, "ab") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runwatcher", "--allow-in-memory",
                 "--metrics-port", str(self.port), "--metrics-address", "127.0.0.1"],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self) -> None:
        wait_until(lambda: "runwatcher: READY" in self.log() or self.process.poll() is not None,
                   60, message=lambda: "runwatcher to be ready:\n" + self.log())
        assert self.process.poll() is None, self.log()

    def recorded(self) -> int:
        return self.log().count("job history: recorded")

    def get(self, path: str, token: str | None = WATCHER_TOKEN) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.get(f"http://127.0.0.1:{self.port}{path}", headers=headers, timeout=10)

    def kill(self) -> None:
        """Gone without a word (a node lost, the OOM killer): nothing claimed on the way."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def two_watchers(request, demo, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"history-{request.param}")
    db = Database(request.param, tmp)
    watchers = [Watcher(demo, db, tmp / f"runwatcher-{n}.log") for n in (1, 2)]
    try:
        for watcher in watchers:
            watcher.wait_ready()
        yield db, watchers
    finally:
        for watcher in watchers:
            watcher.stop()
        db.drop()


def test_two_runwatchers_write_one_record_per_finished_job(two_watchers, demo, jobs):
    db, watchers = two_watchers
    expected = finished_uids(demo)

    def uids() -> Counter:
        return Counter(uid for uid, _outcome, _name in db.rows())

    wait_until(lambda: set(expected) <= set(uids()), 60,
               message=lambda: f"records of {expected}; have {db.rows()}")
    jobs.create(short_job("history-proc"))
    jobs.wait_condition("history-proc", "Succeeded")
    wait_until(lambda: any(name == "history-proc" for _u, _o, name in db.rows()), 60,
               message=lambda: f"the record of history-proc; have {db.rows()}")
    rows = db.rows()
    assert all(count == 1 for count in uids().values()), rows
    assert {uid: outcome for uid, outcome, _name in rows if uid in expected} == expected
    # every record was written by exactly one of the two processes, and neither failed
    wait_until(lambda: sum(w.recorded() for w in watchers) == len(rows), 30,
               message=lambda: "\n".join(w.log() for w in watchers))
    for watcher in watchers:
        assert watcher.process.poll() is None, watcher.log()
        assert "Traceback" not in watcher.log(), watcher.log()


def test_runwatcher_serves_the_hub_numbers_on_its_metrics_port(two_watchers, demo):
    _db, watchers = two_watchers
    watcher = watchers[0]
    assert watcher.get("/healthz", token=None).status_code == 200
    assert watcher.get("/readyz", token=None).status_code == 200
    refused = watcher.get("/metrics", token=None)
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert watcher.get("/metrics", token="wrong").status_code == 401

    def running_nlp_mpijobs() -> tuple[float | None, int]:
        response = watcher.get("/metrics")
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        samples = parse(response.text)
        metric = value(samples, "mpijob_dashboard_jobs", project=NS, type="MPIJob",
                       status="Running")
        truth = sum(1 for _j, s in cluster_summaries(demo)
                    if (s.namespace, s.kind.kind, str(s.status)) == (NS, "MPIJob", "Running"))
        return metric, truth

    wait_until(lambda: (lambda m, t: m == t and t >= 1)(*running_nlp_mpijobs()), 30,
               message=lambda: f"(metric, cluster) = {running_nlp_mpijobs()}")
    samples = parse(watcher.get("/metrics").text)
    assert value(samples, "mpijob_dashboard_hub_ready") == 1.0
    assert value(samples, "mpijob_dashboard_quota_hard", project=NS, quota="team-quota",
                 resource="requests.nvidia.com/gpu") == 24.0
    # the history numbers come from the shared database: the same in every process; the
    # operator said BackoffLimitExceeded, the diagnosis (Worker 2 was OOMKilled) is the label
    # (written by the leader's history writer: on a busy machine a moment after the rest)
    def oom_failures() -> float | None:
        nonlocal samples
        samples = parse(watcher.get("/metrics").text)
        return value(samples, "mpijob_dashboard_job_failures_total", project=NS,
                     type="MPIJob", reason="OOMKilled")
    wait_until(lambda: oom_failures() == 1.0, 30,
               message=lambda: f"one OOMKilled failure counted: {oom_failures()}")
    # ... and is counted once: no failed job is counted under two reasons
    failures = sum(v for (name, labels), v in samples.items()
                   if name == "mpijob_dashboard_job_failures_total"
                   and dict(labels).get("project") == NS and dict(labels).get("type") == "MPIJob")
    failed = sum(1 for _j, s in cluster_summaries(demo)
                 if (s.namespace, s.kind.kind, str(s.status)) == (NS, "MPIJob", "Failed"))
    assert failures <= failed
    other = parse(watchers[1].get("/metrics").text)
    for name in ("mpijob_dashboard_job_failures_total",
                 "mpijob_dashboard_job_duration_seconds_count"):
        assert {k: v for k, v in samples.items() if k[0] == name} == \
            {k: v for k, v in other.items() if k[0] == name}


def test_transitions_while_nothing_watched_are_recorded_once_on_the_next_start(
        two_watchers, demo, jobs, tmp_path):
    """Both watchers killed; meanwhile a job fails, one is created and finishes, and one is
    deleted. Started again, one after the other: each of those transitions is recorded
    once, the history of each finished job once, and the audit trail lists the job made
    and the job removed outside the dashboard as "seen", with the creator its annotation
    names."""
    db, watchers = two_watchers
    db.subscribe("bob", ["Failed"])  # notified of his jobs' failures, in the dashboard
    jobs.create(short_job("while-watched"))
    wait_until(lambda: any(name == "while-watched" for _u, _o, name in db.rows()), 60,
               message=lambda: f"while-watched recorded: {db.rows()}")
    doomed = jobs.create(mpijob("fails-unwatched", workers=1, run_seconds=30, annotations={
        "opendatahub.io/username": "bob", "simcluster.io/failure": "oom",
        "simcluster.io/failure-after-seconds": "4"}))
    wait_until(lambda: any(t[0] == doomed["metadata"]["uid"] for t in db.transitions()), 60,
               message=lambda: f"fails-unwatched seen: {db.transitions('fails-unwatched')}")
    for watcher in watchers:
        watcher.kill()
    jobs.delete("while-watched")
    made = jobs.create(short_job("made-unwatched"))
    jobs.wait_condition("made-unwatched", "Succeeded")
    jobs.wait_condition("fails-unwatched", "Failed", timeout=90)

    uids = {made["metadata"]["uid"], doomed["metadata"]["uid"]}
    for n, _watcher in enumerate(watchers):  # one, then the other
        watchers[n] = Watcher(demo, db, tmp_path / f"again-{n}.log")
        watchers[n].wait_ready()
        wait_until(lambda: uids <= {u for u, _o, _n in db.rows()} and
                   any(t[2] == "Deleted" for t in db.transitions("while-watched")), 60,
                   message=lambda: f"records {db.rows()}, transitions {db.transitions()}")
    wait_until(lambda: ("create", "seen", "alice") in db.audit("made-unwatched")
               and ("delete", "seen", "") in db.audit("while-watched"), 60,
               message=lambda: f"{db.audit('made-unwatched')} {db.audit('while-watched')}")

    transitions = db.transitions()
    assert not once_each(transitions), transitions
    assert [t[1:] for t in db.transitions("made-unwatched")] == [("", "Succeeded")]
    failed = [t[1:] for t in db.transitions("fails-unwatched")]
    assert failed[-1][1] == "Failed" and len(failed) == len(set(failed)), failed
    assert [t[2] for t in db.transitions("while-watched")].count("Deleted") == 1
    assert Counter(uid for uid, _o, _n in db.rows())[doomed["metadata"]["uid"]] == 1
    assert db.audit("made-unwatched").count(("create", "seen", "alice")) == 1
    assert db.audit("while-watched").count(("delete", "seen", "")) == 1
    # the failure while no watcher ran is queued for bob once, from the transition found
    # at the next start (then sent, or skipped where he may not see the job)
    queued = db.query("SELECT d.channel FROM training_notificationdelivery d JOIN "
                      "training_jobtransition t ON d.transition_id = t.id WHERE "
                      "t.name = 'fails-unwatched' AND t.to_status = 'Failed'")
    assert queued == [("dashboard",)], queued
    for watcher in watchers:
        assert watcher.process.poll() is None, watcher.log()
        assert "Traceback" not in watcher.log(), watcher.log()

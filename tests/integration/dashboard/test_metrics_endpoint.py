"""`/metrics` (issue 6 item 4) against the demo cluster, with the watch hub embedded.

The numbers are compared with the cluster itself, read as its admin at the same moment
(retried until they agree: jobs keep moving at simcluster's speed). The hub is started
the way a websocket would start it (on an event loop standing in for daphne's); it also
writes the job history, which the failure and duration numbers are read from.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from odh.training.overviews import jobmetrics
from tests.dashboard_support import sign_in
from tests.integration.hub.conftest import LoopThread, embedded_hub
from tests.prometheus_text import cluster_summaries, matching, parse, value
from tests.training_jobs import Jobs, mpijob
from tests.waiting import wait_until

NS = "team-nlp"
URL = "/metrics"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def loop():
    thread = LoopThread()
    yield thread
    thread.close()


@pytest.fixture(scope="module")
def hub(demo_cluster, loop):
    with embedded_hub(demo_cluster, loop) as hub:
        yield hub


@pytest.fixture
def transition_recorder(hub, transactional_db):
    """The hub's transition recorder (which writes the job history), for the tests that read
    the history only: SQLite's shared in-memory test database refuses a write beside the
    recorder's ("table is locked"), e.g. a sign-in's session. Stopped before the test's
    database is flushed."""
    from training.live.hub.keepers.transitions import TransitionRecorder

    if hub.transitions is not None:
        hub.transitions.stop()
    hub.transitions = TransitionRecorder().start()
    yield hub.transitions
    hub.transitions.stop()


@pytest.fixture
def jobs(demo_cluster):
    helper = Jobs(demo_cluster.api_client("alice"), NS)
    yield helper
    helper.cleanup()


def scrape(client: Client | None = None, **extra) -> str:
    response = (client or Client()).get(URL, **extra)
    assert response.status_code == 200, response.content
    return response.content.decode()


def agree(metric, truth, timeout: float = 30, what: str = "the metric and the cluster"):
    """Wait until metric() == truth(); both are read again on every try."""
    def same():
        m, t = metric(), truth()
        return (m, t) if m == t else None
    return wait_until(same, timeout, message=lambda: f"{what}: {metric()} != {truth()}")


# -- not behind sign-in, in the Prometheus text format ---------------------------------------------
def test_metrics_need_no_sign_in_and_use_the_prometheus_text_format(hub):
    response = Client().get(URL)
    assert response.status_code == 200  # not a redirect to sign in
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert response["Cache-Control"] == "no-store"
    samples = parse(response.content.decode())
    assert value(samples, "mpijob_dashboard_build_info", version="0.1.0") == 1.0
    assert value(samples, "mpijob_dashboard_hub_ready") == 1.0
    assert value(samples, "mpijob_dashboard_hub_renders_total") >= 0
    assert Client().head(URL).status_code == 200
    assert Client().post(URL).status_code == 405


# -- the watch hub's numbers -----------------------------------------------------------------------
def test_job_counts_match_the_cluster(hub, demo_cluster):
    def count(project: str, kind: str, status: str) -> int:
        return sum(1 for _j, s in cluster_summaries(demo_cluster)
                   if (s.namespace, s.kind.kind, str(s.status)) == (project, kind, status))

    # the demo's Running MPIJobs in team-nlp
    running, _ = agree(lambda: value(parse(scrape()), "mpijob_dashboard_jobs", project=NS,
                                     type="MPIJob", status="Running"),
                       lambda: float(count(NS, "MPIJob", "Running")))
    assert running >= 1
    # every (project, type, status) the cluster has, and zeros for the other statuses
    def table(samples) -> dict:
        return {dict(k)["project"] + "/" + dict(k)["type"] + "/" + dict(k)["status"]: v
                for k, v in matching(samples, "mpijob_dashboard_jobs").items() if v}

    def truth() -> dict:
        found: dict[str, float] = {}
        for _j, s in cluster_summaries(demo_cluster):
            key = f"{s.namespace}/{s.kind.kind}/{s.status}"
            found[key] = found.get(key, 0.0) + 1
        return found

    agree(lambda: table(parse(scrape())), truth)
    samples = parse(scrape())
    for status in jobmetrics.STATUSES:
        assert value(samples, "mpijob_dashboard_jobs", project="research", type="PyTorchJob",
                     status=status) is not None


def test_trainjobs_are_counted_under_their_kind(hub):
    """The demo's TrainJobs (Kubeflow Trainer v2) in the same series as the other kinds,
    `type="TrainJob"`, and their node pods among the workers (not the MPI launcher)."""
    def counted() -> dict | None:
        samples = parse(scrape())
        jobs = {(p, s): value(samples, "mpijob_dashboard_jobs", project=p, type="TrainJob",
                              status=s)
                for p, s in (("research", "Running"), ("research", "Succeeded"),
                             ("research", "Suspended"), ("team-nlp", "Pending"),
                             ("team-nlp", "Failed"))}
        return {"jobs": jobs, "samples": samples} if all(jobs.values()) else None

    found = wait_until(counted, 30, message="the demo's TrainJobs counted")
    # xgboost-mpi-bench runs: its 2 nodes, not its launcher
    assert value(found["samples"], "mpijob_dashboard_workers", project="research",
                 type="TrainJob", state="active") >= 2
    # t5-large-summarize's evicted node pods
    assert value(found["samples"], "mpijob_dashboard_workers", project="team-nlp",
                 type="TrainJob", state="failed") >= 1


def test_workers_match_the_pods(hub, demo_cluster):
    from kubernetes import client as k8s

    def truth() -> dict[str, float]:
        # the pods of training jobs: the operators' and (a TrainJob's) a JobSet's
        with demo_cluster.api_client("admin") as api:
            core = k8s.CoreV1Api(api)
            pods = [p for label in ("training.kubeflow.org/job-name",
                                    "jobset.sigs.k8s.io/jobset-name")
                    for p in core.list_namespaced_pod(NS, label_selector=label).items]
        counts = {"active": 0.0, "pending": 0.0, "failed": 0.0}
        for pod in pods:
            labels = pod.metadata.labels or {}
            if labels.get("training.kubeflow.org/job-role") == "launcher" or \
                    labels.get("jobset.sigs.k8s.io/replicatedjob-name") == "launcher":
                continue
            if pod.metadata.deletion_timestamp:
                continue
            state = {"Running": "active", "Pending": "pending", "Failed": "failed"}.get(
                pod.status.phase)
            if state:
                counts[state] += 1
        return counts

    def metric() -> dict[str, float]:
        samples = parse(scrape())
        return {state: sum(matching(samples, "mpijob_dashboard_workers", project=NS,
                                    state=state).values())
                for state in ("active", "pending", "failed")}

    found, _ = agree(metric, truth)
    assert found["active"] >= 1  # bert-large-pretrain's workers


def test_quota_numbers_are_the_resource_quotas(hub, demo_cluster):
    from kubernetes import client as k8s

    from odh.training.quantity import parse_quantity
    def truth() -> tuple[float, float]:
        with demo_cluster.api_client("admin") as api:
            quota = k8s.CoreV1Api(api).read_namespaced_resource_quota("team-quota", NS)
        used = quota.status.used
        return (float(parse_quantity(used["requests.nvidia.com/gpu"])),
                float(parse_quantity(used["requests.memory"])))

    def metric() -> tuple[float | None, float | None]:
        samples = parse(scrape())
        labels = {"project": NS, "quota": "team-quota"}
        return (value(samples, "mpijob_dashboard_quota_used",
                      resource="requests.nvidia.com/gpu", **labels),
                value(samples, "mpijob_dashboard_quota_used", resource="requests.memory",
                      **labels))

    (gpus_used, _memory), _ = agree(metric, truth)
    samples = parse(scrape())
    labels = {"project": NS, "quota": "team-quota", "resource": "requests.nvidia.com/gpu"}
    assert value(samples, "mpijob_dashboard_quota_hard", **labels) == 24.0
    ratio = value(samples, "mpijob_dashboard_quota_used_ratio", **labels)
    assert ratio == pytest.approx(gpus_used / 24.0)
    assert value(samples, "mpijob_dashboard_quota_hard", project=NS, quota="team-quota",
                 resource="requests.cpu") == 192.0
    assert value(samples, "mpijob_dashboard_quota_hard", project=NS, quota="team-quota",
                 resource="count/mpijobs.kubeflow.org") == 20.0


def test_pending_jobs_say_how_long_and_why(hub, demo_cluster, jobs):
    # team-nlp's GPU quota is 16: two Workers of 8 GPUs beside what runs there cannot fit
    eight = {"limits": {"nvidia.com/gpu": "8", "cpu": "1", "memory": "1Gi"}}
    jobs.create(mpijob("metrics-waits", workers=2, run_seconds=3600,
                       worker_resources=eight))

    def waiting() -> dict:
        return {dict(k)["reason"]: v for k, v in matching(
            parse(scrape()), "mpijob_dashboard_job_pending_seconds", project=NS,
            type="MPIJob", name="metrics-waits").items()}

    wait_until(lambda: waiting().get("quota") is not None, 60,
               message=lambda: f"metrics-waits pending on quota; have {waiting()}")
    assert waiting()["quota"] >= 0
    # the demo's vit-huge-pretrain waits in team-cv, for as long as the cluster says
    samples = parse(scrape())
    vit = matching(samples, "mpijob_dashboard_job_pending_seconds", project="team-cv",
                   name="vit-huge-pretrain")
    assert len(vit) == 1
    (labels, seconds), = vit.items()
    assert dict(labels)["reason"] in jobmetrics.PENDING_REASONS
    created = next(s.created for _j, s in cluster_summaries(demo_cluster)
                   if s.name == "vit-huge-pretrain")
    from datetime import UTC, datetime

    assert 0 < seconds <= (datetime.now(UTC) - created).total_seconds()


def test_watch_reconnects_are_reported_per_resource(hub):
    samples = parse(scrape())
    for resource in ("mpijobs", "pytorchjobs", "tfjobs", "pods", "events", "resourcequotas"):
        for reason in ("expired", "error"):
            assert value(samples, "mpijob_dashboard_watch_reconnects_total",
                         resource=resource, reason=reason) is not None
    w = next(w for w in hub.watches if w.resource.plural == "pods")
    assert value(samples, "mpijob_dashboard_watch_reconnects_total", resource="pods",
                 reason="expired") == float(w.expired)


def test_a_web_process_without_the_hub_reports_no_job_numbers():
    from training.monitoring.exposition import HubCollector

    assert list(HubCollector(lambda: None).collect()) == []


# -- the job history's numbers ---------------------------------------------------------------------
def test_failures_and_durations_come_from_the_job_history(hub, demo_cluster, jobs,
                                                          transition_recorder):
    from training.models import JobHistory

    # the demo's finished jobs are recorded by the hub from its first list (again here:
    # every test of this module starts with an emptied database)
    for key, summary in list(hub.summaries.items()):
        data = hub.index.job_data(key)
        if summary.is_finished and data is not None:
            hub.transitions.saw(data.job, summary)
    wait_until(lambda: JobHistory.objects.filter(name="gpt2-finetune").exists(), 30,
               message="gpt2-finetune's record")
    failed = JobHistory.objects.get(name="gpt2-finetune")
    assert failed.reason.startswith("BackoffLimitExceeded")  # what the MPI Operator said
    assert (failed.cause, failed.cause_reason) == ("Worker 2 was OOMKilled", "OOMKilled")
    reason = jobmetrics.failure_reason(failed.reason, failed.message, failed.cause_reason)
    assert reason == "OOMKilled"  # what the dashboard diagnosed

    def failures(label: str) -> float | None:
        return value(parse(scrape()), "mpijob_dashboard_job_failures_total", project=NS,
                     type="MPIJob", reason=label)

    def recorded_failures(label: str) -> float:
        return float(sum(1 for r in JobHistory.objects.filter(
            namespace=NS, kind="MPIJob", outcome="Failed")
            if jobmetrics.failure_reason(r.reason, r.message, r.cause_reason) == label))

    def succeeded() -> float | None:
        return value(parse(scrape()), "mpijob_dashboard_job_duration_seconds_count",
                     project=NS, type="MPIJob", outcome="Succeeded")

    def recorded(outcome: str) -> float:
        return float(JobHistory.objects.filter(namespace=NS, kind="MPIJob",
                                               outcome=outcome).count())

    agree(lambda: failures(reason), lambda: recorded_failures(reason))
    before = succeeded() or 0.0
    # a job that fails (a Worker runs out of memory) and one that succeeds
    jobs.create(mpijob("metrics-oom", workers=1, run_seconds=6, annotations={
        "simcluster.io/failure": "oom", "simcluster.io/failure-after-seconds": "1"}))
    jobs.create(mpijob("metrics-ok", workers=1, run_seconds=3))
    jobs.wait_condition("metrics-ok", "Succeeded")
    jobs.wait_condition("metrics-oom", "Failed")
    wait_until(lambda: JobHistory.objects.filter(name__in=["metrics-ok", "metrics-oom"])
               .count() == 2, 30, message="the two records")
    assert succeeded() == before + 1
    oom = JobHistory.objects.get(name="metrics-oom")
    oom_reason = jobmetrics.failure_reason(oom.reason, oom.message, oom.cause_reason)
    assert oom_reason == "OOMKilled"
    assert failures(oom_reason) == recorded_failures(oom_reason) >= 1
    assert sum(matching(parse(scrape()), "mpijob_dashboard_job_failures_total", project=NS,
                        type="MPIJob").values()) == recorded("Failed")
    # the histogram's buckets are cumulative and end with every record
    samples = parse(scrape())
    buckets = matching(samples, "mpijob_dashboard_job_duration_seconds_bucket", project=NS,
                       type="MPIJob", outcome="Succeeded")
    ordered = sorted(buckets.items(), key=lambda kv: float(dict(kv[0])["le"]))
    counts = [v for _k, v in ordered]
    assert counts == sorted(counts) and counts[-1] == succeeded()
    assert [dict(k)["le"] for k, _v in ordered][-1] == "+Inf"
    assert len(ordered) == len(jobmetrics.DURATION_BUCKETS) + 1


# -- this process's numbers ------------------------------------------------------------------------
def test_request_latency_is_labelled_by_view_not_path(hub, client):
    client.get(reverse("training-job-list"))  # anonymous: sent to sign in
    client.get("/jobs/team-nlp/mpijob/some-job-name/")
    client.get("/no/such/page/")
    samples = parse(scrape())
    assert value(samples, "mpijob_dashboard_http_request_duration_seconds_count",
                 method="GET", view="training-job-list", status="302") >= 1
    assert value(samples, "mpijob_dashboard_http_request_duration_seconds_count",
                 method="GET", view="training-job-detail", status="302") >= 1
    assert value(samples, "mpijob_dashboard_http_request_duration_seconds_count",
                 method="GET", view="unmatched", status="404") >= 1
    paths = [k for k in samples if "some-job-name" in str(k)]
    assert paths == []


def test_submissions_are_counted_by_outcome(hub, client, demo_cluster):
    from tests.wizard_cluster import ClusterJobs

    def created() -> float:
        return value(parse(scrape()), "mpijob_dashboard_job_submissions_total", project=NS,
                     type="MPIJob", outcome="created") or 0.0

    before = created()
    sign_in(client, demo_cluster, "alice")
    url = reverse("training-job-retry", args=[NS, "mpijob", "gpt2-finetune"])
    with demo_cluster.api_client("admin") as api:
        cluster_jobs = ClusterJobs(api)
        cluster_jobs.track(NS, "gpt2-finetune-metrics")
        try:
            response = client.post(url, {"new_name": "gpt2-finetune-metrics"})
            assert response.status_code == 302, response.content.decode()[:2000]
            assert created() == before + 1
        finally:
            cluster_jobs.cleanup()


def test_refused_creates_are_counted_by_why(hub, rf):
    from django.contrib.auth.models import AnonymousUser

    from training import audit
    def count(outcome: str) -> float:
        return value(parse(scrape()), "mpijob_dashboard_job_submissions_total",
                     project="team-cv", type="MPIJob", outcome=outcome) or 0.0

    request = rf.post("/jobs/new/x/create/")
    request.user = AnonymousUser()
    request.session = {}
    cases = [
        ("create", "denied", 'mpijobs.kubeflow.org is forbidden: User "bob" cannot create',
         "forbidden"),
        ("clone", "denied", 'pods "x" is forbidden: exceeded quota: team-quota', "quota_exceeded"),
        ("retry", "failed", 'MPIJob.kubeflow.org "X" is invalid: metadata.name', "invalid"),
        ("create", "failed", "the cluster could not be reached", "error"),
    ]
    for verb, outcome, detail, label in cases:
        before = count(label)
        audit.record(request, verb, "MPIJob", "team-cv", "x", outcome, detail)
        assert count(label) == before + 1, label
    before = {label: count(label) for *_x, label in cases}
    audit.record(request, "delete", "MPIJob", "team-cv", "x", "denied", "forbidden")
    assert {label: count(label) for *_x, label in cases} == before  # not a submission


def test_open_websockets_are_counted(hub, loop):
    from channels.testing import WebsocketCommunicator

    from dashboard.asgi import application

    def sockets() -> float:
        return value(parse(scrape()), "mpijob_dashboard_websocket_connections")

    before = sockets()
    comm = WebsocketCommunicator(application, "/ws/live/?ns=team-nlp",
                                 headers=[(b"host", b"127.0.0.1:8000"),
                                          (b"origin", b"http://127.0.0.1:8000")])
    accepted, _ = loop.run(comm.connect(timeout=30))
    assert accepted
    assert sockets() == before + 1  # (then refused: nobody is signed in)
    while loop.run(comm.receive_output(30), 40)["type"] != "websocket.close":
        pass
    loop.run(comm.disconnect(timeout=30), 40)
    assert sockets() == before


# -- who may read them -----------------------------------------------------------------------------
def test_a_bearer_token_restricts_the_metrics(hub, settings):
    settings.METRICS_BEARER_TOKEN = "prometheus-secret"
    refused = Client().get(URL)
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert "mpijob_dashboard" not in refused.content.decode()
    assert Client().get(URL, HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert Client().get(URL, HTTP_AUTHORIZATION="Basic prometheus-secret").status_code == 401
    assert Client().get(URL, HTTP_AUTHORIZATION="prometheus-secret").status_code == 401
    text = scrape(HTTP_AUTHORIZATION="Bearer prometheus-secret")
    assert "mpijob_dashboard_jobs" in text


def test_allowed_networks_restrict_the_metrics(hub, settings):
    settings.METRICS_ALLOWED_NETWORKS = ["10.128.0.0/14", "fd00::/8"]
    settings.TRUST_X_FORWARDED_FOR = False
    assert Client().get(URL).status_code == 403  # the test client is 127.0.0.1
    assert Client().get(URL, REMOTE_ADDR="10.129.4.7").status_code == 200
    assert Client().get(URL, REMOTE_ADDR="fd00::17").status_code == 200
    assert Client().get(URL, REMOTE_ADDR="10.132.0.1").status_code == 403
    # without the proxy setting, X-Forwarded-For is the client's word: ignored
    assert Client().get(URL, HTTP_X_FORWARDED_FOR="10.129.4.7").status_code == 403
    # behind the router, the hop it appended (the last) is the address that counts
    settings.TRUST_X_FORWARDED_FOR = True
    assert Client().get(URL, HTTP_X_FORWARDED_FOR="192.0.2.1, 10.129.4.7").status_code == 200
    assert Client().get(URL, HTTP_X_FORWARDED_FOR="10.129.4.7, 192.0.2.1").status_code == 403


def test_token_and_networks_together_both_apply(hub, settings):
    settings.METRICS_BEARER_TOKEN = "prometheus-secret"
    settings.METRICS_ALLOWED_NETWORKS = ["10.128.0.0/14"]
    good = {"HTTP_AUTHORIZATION": "Bearer prometheus-secret", "REMOTE_ADDR": "10.129.4.7"}
    assert Client().get(URL, **good).status_code == 200
    assert Client().get(URL, **{**good, "REMOTE_ADDR": "192.0.2.1"}).status_code == 403
    assert Client().get(URL, REMOTE_ADDR="10.129.4.7").status_code == 401


# -- the contract deploy/monitoring's alerts and Grafana dashboard rely on ------------------------
def test_every_metric_of_the_monitoring_contract_is_exported_as_declared(hub, client):
    from prometheus_client.parser import text_string_to_metric_families

    from tests.deploy.test_monitoring import METRICS  # the table in prometheusrule.yaml

    client.get(reverse("training-job-list"))  # a request to time
    families = {f.name: f for f in text_string_to_metric_families(scrape())}
    for name, (kind, labels) in METRICS.items():
        family = families.get(name.removesuffix("_total"))
        assert family is not None, f"{name} is not exported"
        assert family.type == kind, name
        for sample in family.samples:
            assert set(sample.labels) - {"le"} == labels, (name, sample)
    with_samples = {f.name for f in families.values() if f.samples}
    assert {"mpijob_dashboard_jobs", "mpijob_dashboard_workers",
            "mpijob_dashboard_job_pending_seconds", "mpijob_dashboard_quota_used_ratio",
            "mpijob_dashboard_watch_reconnects", "mpijob_dashboard_websocket_connections",
            "mpijob_dashboard_http_request_duration_seconds",
            "mpijob_dashboard_build_info"} <= with_samples

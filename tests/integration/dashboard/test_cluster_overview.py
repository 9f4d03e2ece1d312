"""The admin overview at /cluster/ against the demo cluster: its numbers are the cluster's."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from kubernetes import client as k8s

from odh.training.manifests.totals import number
from odh.training.quantity import parse_quantity
from tests import simcluster_process
from tests.dashboard_support import sign_in
from tests.html_checks import assert_valid
from tests.overview_support import one_gpu_job, placed_pods_and_quota_use, requested
from tests.page_text import ids_starting, text_of
from tests.training_jobs import mpijob
from tests.waiting import wait_until
from training.models import JobHistory

URL = reverse("training-cluster-overview")
GPU = "nvidia.com/gpu"
# simcluster/scenarios/demo.yaml: the quotas' hard limits, exactly
DEMO_QUOTAS = {
    "team-nlp": {"GPUs": "24", "CPUs": "192", "Memory": "1.5Ti", "Pods": "100",
                 "MPIJobs": "20"},
    "team-cv": {"GPUs": "56", "CPUs": "192", "Memory": "1.5Ti", "Pods": "100",
                "MPIJobs": "20"},
    "research": {"GPUs": "8", "CPUs": "64", "Memory": "512Gi", "Pods": "50", "MPIJobs": "5"},
}
QUOTA_KEYS = {"GPUs": "requests.nvidia.com/gpu", "CPUs": "requests.cpu",
              "Memory": "requests.memory", "Pods": "pods",
              "MPIJobs": "count/mpijobs.kubeflow.org"}


def _cluster_numbers(sim) -> dict:
    """What the cluster says, read here with the official client (not the dashboard's code)."""
    pods, quotas = placed_pods_and_quota_use(sim)
    return {"gpus_used": sum((requested(p, GPU) for p in pods), Decimal(0)),
            "cpu_used": sum((requested(p, "cpu") for p in pods), Decimal(0)),
            "gpus_by_ns": {ns: sum((requested(p, GPU) for p in pods
                                    if p.metadata.namespace == ns), Decimal(0))
                           for ns in DEMO_QUOTAS},
            "quota_used": quotas}


def _page_and_cluster(client, sim):
    """The page, and the cluster's numbers when they did not change while it was made
    (jobs of the demo keep starting and finishing: retry until a quiet moment)."""
    def attempt():
        before = _cluster_numbers(sim)
        response = client.get(URL)
        after = _cluster_numbers(sim)
        return (response, before) if before == after else None

    return wait_until(attempt, 30, message="a moment when the cluster's numbers hold still")


def test_the_overview_shows_the_demo_clusters_gpu_capacity_exactly(admin, demo_cluster):
    response, cluster = _page_and_cluster(admin, demo_cluster)
    assert response.status_code == 200
    html = response.content.decode()
    assert_valid(html)
    used = cluster["gpus_used"]
    assert used > 0  # bert-large-pretrain's 8 Workers hold a GPU each
    # 5 nodes x 8 A100 = 40 GPUs
    assert text_of(html, "capacity-gpu").startswith(f"GPUs {number('gpu', used)} / 40 ")
    assert text_of(html, "gpu-model-1") == (
        f"NVIDIA-A100-SXM4-80GB 5 40 {number('gpu', used)} {number('gpu', 40 - used)} "
        f"{round(used * 100 / 40)}%")
    assert ids_starting(html, "gpu-model-") == ["gpu-model-1"]  # one model in the demo
    # 5 x 96 + 2 x 32 CPUs; 5 x 1152Gi + 2 x 128Gi of memory
    assert text_of(html, "capacity-cpu").startswith(
        f"CPUs {number('cpu', cluster['cpu_used'])} / 544 ")
    assert " / 6016Gi " in text_of(html, "capacity-memory")
    assert '<script src="/static/plotly/plotly-basic.min.js"></script>' in html
    charts = json.loads(html.split('id="cluster-chart-data" type="application/json">')[1]
                        .split("</script>")[0])
    assert charts["gpu"]["total"] == [40.0] and charts["gpu"]["used"] == [float(used)]


def test_the_overview_shows_each_projects_quota_exactly(admin, demo_cluster):
    response, cluster = _page_and_cluster(admin, demo_cluster)
    html = response.content.decode()
    for ns, hard in DEMO_QUOTAS.items():
        row = text_of(html, f"project-{ns}")
        used = cluster["quota_used"][ns]
        for title, limit in hard.items():
            unit = {"GPUs": "gpu", "CPUs": "cpu", "Memory": "memory"}.get(title, title)
            shown = number(unit, parse_quantity(used.get(QUOTA_KEYS[title], "0")))
            expected = f"{shown}/{limit}" if title == "MPIJobs" else f"{title} {shown}/{limit}"
            assert expected in row, (ns, expected, row)
        gpus_in_use = text_of(html, f"project-{ns}").split()
        assert number("gpu", cluster["gpus_by_ns"][ns]) in gpus_in_use
    # most pressed first, and every project at 90% of a quota says so
    rows = ids_starting(html, "project-")
    pressures = [int(html.split(f'id="{r}"')[1].split('data-pressure="')[1].split('"')[0])
                 for r in rows]
    assert pressures == sorted(pressures, reverse=True)
    for r, pressure in zip(rows, pressures, strict=True):
        assert ("At 90% or more of a quota" in text_of(html, r)) == (pressure >= 90)
    # team-nlp's GPUs leave room for a newcomer's first 8-GPU job (llama-13b-pretrain
    # waits for the quota's memory instead)
    if cluster["quota_used"]["team-nlp"].get(QUOTA_KEYS["GPUs"]) == "15":
        assert "15/24" in text_of(html, "project-team-nlp")


def test_jobs_by_type_waiting_jobs_and_success_rate(admin, demo_cluster):
    html = admin.get(URL).content.decode()
    mpijobs = text_of(html, "jobs-mpijob").split()
    with demo_cluster.api_client("admin") as api:
        listed = k8s.CustomObjectsApi(api).list_cluster_custom_object(
            "kubeflow.org", "v2beta1", "mpijobs")["items"]
    assert mpijobs[0] == "MPIJob" and int(mpijobs[-1]) == len(listed)
    assert ids_starting(html, "jobs-") == ["jobs-mpijob", "jobs-pytorchjob", "jobs-tfjob",
                                           "jobs-trainjob"]
    waiting = text_of(html, "table-waiting")
    vit = text_of(html, "waiting-team-cv-mpijob-vit-huge-pretrain")
    # why it waits is its diagnosis' story, in the dashboard's words
    assert "The job can never start" in vit
    assert "each Worker asks for 12 GPUs and no node has that many" in vit
    assert "Suspended" in text_of(html, "waiting-team-cv-mpijob-whisper-asr-eval")
    assert "vit-huge-pretrain" in waiting
    assert "bert-large-pretrain" not in waiting  # running
    assert 'href="/jobs/team-cv/mpijob/vit-huge-pretrain/"' in html
    # resnet50-imagenet succeeded 3 hours ago, gpt2-finetune failed 2 hours ago
    success = text_of(html, "success-mpijob")
    assert success.startswith("MPIJob ") and "%" in success
    # the demo's Kueue: its two ClusterQueues, and the jobs it holds waiting, said so
    assert ids_starting(html, "queue-") == ["queue-team-cv-a100", "queue-team-nlp-a100"]
    assert "Queued: 1 of 1 in team-cv-queue" in text_of(
        html, "waiting-team-cv-mpijob-segformer-sweep")


def test_finished_jobs_kept_in_the_history_count_once(admin, demo_cluster):
    with demo_cluster.api_client("admin") as api:
        tf = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            "kubeflow.org", "v1", "research", "tfjobs", "mnist-tf-dist")
    now = datetime.now(UTC)
    JobHistory.record_once(uid=tf["metadata"]["uid"], namespace="research", kind="TFJob",
                           name="mnist-tf-dist", outcome="Succeeded",
                           finished=now - timedelta(minutes=90))
    JobHistory.record_once(uid="deleted-long-ago", namespace="research", kind="TFJob",
                           name="tf-old", outcome="Failed", finished=now - timedelta(days=8))
    JobHistory.record_once(uid="deleted-yesterday", namespace="research", kind="TFJob",
                           name="tf-gone", outcome="Failed", finished=now - timedelta(days=1))
    html = admin.get(URL).content.decode()
    assert text_of(html, "success-tfjob") == "TFJob 1 1 50% (1 of 2)"


def test_an_htmx_refresh_gets_only_the_numbers(admin):
    response = admin.get(URL, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="cluster-numbers"') and "<html" not in html
    for part in ("cluster-pressure", "cluster-capacity", "cluster-projects", "cluster-jobs",
                 "cluster-waiting", "cluster-success", "cluster-chart-data"):
        assert f'id="{part}"' in html


@pytest.mark.parametrize("who", ["alice", "bob", "charlie"])
def test_people_who_may_not_list_quotas_everywhere_get_the_403_page(who, client, db,
                                                                    demo_cluster):
    sign_in(client, demo_cluster, who)
    for url in (URL, reverse("training-cluster-audit"), reverse("training-cluster-audit-export")):
        response = client.get(url)
        assert response.status_code == 403
        html = response.content.decode()
        assert "You don&#x27;t have access to this" in html or "You don't have access" in html
        assert "cluster administrators" in html
    assert_valid(html)


def test_the_cluster_link_is_shown_to_admins_only_and_asked_once(admin, client, demo_cluster,
                                                                 monkeypatch):
    from odh.training.cluster.client import ClusterClient

    asked = []
    can_i = ClusterClient.can_i

    def counted(self, verb, resource, *args, **kwargs):
        asked.append((verb, resource))
        return can_i(self, verb, resource, *args, **kwargs)

    monkeypatch.setattr(ClusterClient, "can_i", counted)
    page = admin.get(reverse("training-job-list")).content.decode()
    assert f'href="{URL}"' in page and ">Cluster overview</a>" in page
    other = Client()
    sign_in(other, demo_cluster, "alice")
    page = other.get(reverse("training-job-list")).content.decode()
    assert f'href="{URL}"' not in page
    assert asked.count(("list", "resourcequotas")) == 2  # once for each of them
    # the answers are kept: no second review for the next pages, nor for the page itself
    other.get(reverse("training-job-list"))
    assert admin.get(URL).status_code == 200
    assert asked.count(("list", "resourcequotas")) == 2


def test_the_pages_answer_serves_the_cluster_socket_too(admin, monkeypatch):
    """One cache of access answers (training/permissions.py): the socket that the overview
    opens asks the cluster nothing the page has just asked."""
    from odh.training.cluster.client import ClusterClient
    from training.accounts import session
    from training.live import subscriptions
    assert admin.get(URL).status_code == 200
    asked = []
    can_i = ClusterClient.can_i

    def counted(self, *args, **kwargs):
        asked.append(args)
        return can_i(self, *args, **kwargs)

    monkeypatch.setattr(ClusterClient, "can_i", counted)
    token = session.token_in(admin.session[session.KEY])
    subscriptions.check_access(token, [subscriptions.parse("cluster", "overview")])
    assert asked == []


def test_the_cluster_link_is_current_on_the_overview(admin):
    html = admin.get(URL).content.decode()
    assert f'pf-m-current" aria-current="page" href="{URL}">Cluster overview</a>' in html


def test_a_created_gpu_job_moves_the_numbers(admin, demo_cluster):
    """alice starts a one-GPU Worker in team-nlp; the overview counts it once it is placed."""
    name = f"overview-{uuid.uuid4().hex[:6]}"
    manifest = one_gpu_job(name, {"opendatahub.io/username": "alice"})
    with demo_cluster.api_client("alice") as api:
        custom = k8s.CustomObjectsApi(api)
        custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp",
                                               "mpijobs", manifest)
        try:
            def counted():
                response, cluster = _page_and_cluster(admin, demo_cluster)
                placed = [p for p in _team_pods(demo_cluster) if p.spec.node_name
                          and p.metadata.name == f"{name}-worker-0"]
                if not placed:
                    return False
                html = response.content.decode()
                quota_used = parse_quantity(
                    cluster["quota_used"]["team-nlp"].get(QUOTA_KEYS["GPUs"], "0"))
                row = text_of(html, "project-team-nlp")
                in_use = number("gpu", cluster["gpus_by_ns"]["team-nlp"])
                total = number("gpu", cluster["gpus_used"])
                return (f"GPUs {number('gpu', quota_used)}/24" in row
                        and in_use in row.split()
                        and text_of(html, "capacity-gpu").startswith(f"GPUs {total} /"))

            wait_until(counted, 60, message="the new Worker's GPU in the overview")
        finally:
            custom.delete_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp",
                                                   "mpijobs", name,
                                                   body={"propagationPolicy": "Background"})


def _team_pods(sim):
    with sim.api_client("admin") as api:
        return k8s.CoreV1Api(api).list_namespaced_pod("team-nlp").items


# -- Kueue --------------------------------------------------------------------------------------
KUEUE_SCENARIO = {
    "name": "kueue", "description": "The empty cluster with Kueue installed.",
    "apis": ["kueue"],
    "users": [{"name": "admin", "password": "admin", "fullName": "Cluster Admin",
               "groups": ["cluster-admins"]}],
    "namespaces": [{"name": "team-nlp", "displayName": "NLP team"}],
    "nodes": [{"name": "gpu-{i}", "count": 2, "cpu": 64, "memory": "512Gi", "gpus": 4,
               "gpuProduct": "NVIDIA-H100-80GB-HBM3"}],
    "access": [{"user": "admin", "clusterRole": "cluster-admin"}],
    "serviceAccounts": [{"namespace": "mpijob-dashboard", "name": "mpijob-dashboard",
                         "kubeconfig": "dashboard", "clusterRoles": ["view"]}],
    "oauth": {"clients": [{"name": "mpijob-dashboard",
                           "secret": "mpijob-dashboard-demo-secret", "grantMethod": "auto",
                           "redirectURIs": ["http://127.0.0.1:8000/oauth/callback/"]}]},
}


@pytest.fixture(scope="module")
def kueue_cluster(tmp_path_factory):
    cluster = simcluster_process.start_scenario(tmp_path_factory.mktemp("kueue"),
                                                KUEUE_SCENARIO, name="kueue.yaml")
    with cluster.api_client("admin") as api:
        custom = k8s.CustomObjectsApi(api)
        custom.create_cluster_custom_object("kueue.x-k8s.io", "v1beta1", "resourceflavors", {
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
            "metadata": {"name": "h100"}})
        custom.create_cluster_custom_object("kueue.x-k8s.io", "v1beta1", "clusterqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
            "metadata": {"name": "gpu-queue"},
            "spec": {"cohort": "research", "namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu", "nvidia.com/gpu"], "flavors": [{
                    "name": "h100", "resources": [
                        {"name": "cpu", "nominalQuota": "96"},
                        {"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]}]}})
        custom.create_namespaced_custom_object("kueue.x-k8s.io", "v1beta1", "team-nlp",
                                               "localqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
            "metadata": {"name": "research-queue", "namespace": "team-nlp"},
            "spec": {"clusterQueue": "gpu-queue"}})
        # simcluster's Kueue admits two (6 GPUs and 24 CPUs of 8 and 96); the third waits
        for name, gpus in (("first", 4), ("second", 2), ("third", 4)):
            job = mpijob(name, workers=1, run_seconds=3600,
                         worker_resources={"limits": {"nvidia.com/gpu": gpus, "cpu": 12}})
            job["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "research-queue"}
            custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp",
                                                   "mpijobs", job)

        def counted() -> bool:
            status = custom.get_cluster_custom_object(
                "kueue.x-k8s.io", "v1beta1", "clusterqueues", "gpu-queue").get("status") or {}
            return (status.get("admittedWorkloads"), status.get("pendingWorkloads")) == (2, 1)
        wait_until(counted, 30, message="two jobs admitted, one waiting")
        core = k8s.CoreV1Api(api)
        wait_until(lambda: sum(p.status.phase == "Running" for p in core.list_namespaced_pod(
            "team-nlp").items) == 4, 60, message="the admitted jobs' pods to run")
    yield cluster
    cluster.stop()


def test_kueue_cluster_queues_when_the_api_is_there(client, db, kueue_cluster, settings):
    from training import cluster
    from training.accounts import oauth
    settings.CLUSTER_KUBECONFIG = str(kueue_cluster.kubeconfig("dashboard"))
    cluster.cluster_config.cache_clear()
    oauth.reset()
    sign_in(client, kueue_cluster, "admin")
    html = client.get(URL).content.decode()
    assert_valid(html)
    assert text_of(html, "queue-gpu-queue") == (
        "gpu-queue research 2 1 CPUs (h100) 24/96 (25%) GPUs (h100) 6/8 (75%) "
        "Change the nominal quota of gpu-queue")
    # the admitted jobs run: their Workers hold 6 of the 8 GPUs
    assert text_of(html, "capacity-gpu").startswith("GPUs 6 / 8 ")
    assert text_of(html, "gpu-model-1").startswith("NVIDIA-H100-80GB-HBM3 2 8 6 2")


def test_with_many_waiting_jobs_the_longest_waiting_are_shown_and_the_rest_counted(
        admin, monkeypatch):
    """Thousands of waiting jobs are not a page: the longest waiting are, with a count."""
    from training.views.cluster import overview as cluster_view
    everyone = [r for r in ids_starting(admin.get(URL).content.decode(), "waiting-")
                if r != "waiting-more"]
    assert len(everyone) > 2  # the demo has a few
    monkeypatch.setattr(cluster_view, "WAITING_SHOWN", 2)
    html = admin.get(URL).content.decode()
    assert [r for r in ids_starting(html, "waiting-") if r != "waiting-more"] == everyone[:2]
    more = len(everyone) - 2
    assert text_of(html, "waiting-more") == (
        f"And {more} more waiting job{'s' if more > 1 else ''}: the longest waiting are "
        "shown.")

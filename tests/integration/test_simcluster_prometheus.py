"""simcluster's Prometheus API over real HTTPS, as the dashboard's metrics code talks to it.

A simcluster of our own (a GPU node and a second namespace) runs for this module. Pods run
`sleep infinity`; once the kubelet has them Running (after which it writes nothing more),
their container states are rewritten through the API (an admin's PUT of pods/status),
dated ten minutes back, so the series have history without waiting and do not depend on
how long simulated workloads take.
"""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime

import pytest
import requests
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests import simcluster_process
from tests.waiting import wait_until

SCENARIO = {
    "name": "metrics",
    "users": [{"name": "alice", "password": "alice", "groups": ["data-scientists"]},
              {"name": "bob", "password": "bob", "groups": ["researchers"]},
              {"name": "admin", "password": "admin", "groups": ["cluster-admins"]}],
    "namespaces": [{"name": "team-nlp"}, {"name": "research"}],
    "nodes": [{"name": "worker-0", "cpu": 16, "memory": "64Gi"},
              {"name": "gpu-0", "cpu": 64, "memory": "512Gi", "gpus": 8,
               "gpuProduct": "NVIDIA-A100-SXM4-80GB"}],
    "access": [{"user": "alice", "role": "edit", "namespaces": ["team-nlp"]},
               {"user": "bob", "role": "view", "namespaces": ["research"]},
               {"user": "admin", "clusterRole": "cluster-admin"}],
}
STARTED_AGO = 600


def rfc3339(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def put_state(core: client.CoreV1Api, namespace: str, name: str, state: dict,
              phase: str) -> None:
    def write() -> bool:
        pod = core.read_namespaced_pod(name, namespace)
        pod.status = client.V1PodStatus(phase=phase, container_statuses=[
            client.V1ContainerStatus(name=c.name, image=c.image, image_id="", ready=True,
                                     restart_count=0, state=state)
            for c in pod.spec.containers])
        try:
            core.replace_namespaced_pod_status(name, namespace, pod)
        except ApiException as e:
            if e.status == 409:
                return False
            raise
        return True

    wait_until(write, 10, message=f"status of {namespace}/{name} written")


def run_pod(core: client.CoreV1Api, namespace: str, name: str, node: str, gpus: int = 0,
            finished_ago: float | None = None) -> None:
    limits = {"cpu": "2", "memory": "8Gi"}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    core.create_namespaced_pod(namespace, client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(node_name=node, containers=[client.V1Container(
            name="main", image="quay.io/example/train:1", command=["sleep", "infinity"],
            resources=client.V1ResourceRequirements(limits=limits))])))

    def kubelet_ran_it() -> bool:
        status = core.read_namespaced_pod_status(name, namespace).status
        return status.phase == "Running" and all(
            c.state.running for c in status.container_statuses or [])

    wait_until(kubelet_ran_it, 30, message=f"{namespace}/{name} Running")
    started = time.time() - STARTED_AGO
    if finished_ago is None:
        state = client.V1ContainerState(running=client.V1ContainerStateRunning(
            started_at=rfc3339(started)))
        put_state(core, namespace, name, state, "Running")
    else:
        state = client.V1ContainerState(terminated=client.V1ContainerStateTerminated(
            started_at=rfc3339(started), finished_at=rfc3339(time.time() - finished_ago),
            exit_code=0, reason="Completed"))
        put_state(core, namespace, name, state, "Succeeded")


@pytest.fixture(scope="module")
def prom(tmp_path_factory):
    cluster = simcluster_process.start_scenario(tmp_path_factory.mktemp("prometheus"),
                                                SCENARIO, name="metrics.yaml")
    core = client.CoreV1Api(cluster.api_client("admin"))
    run_pod(core, "team-nlp", "gpu-pod", "gpu-0", gpus=2)
    run_pod(core, "team-nlp", "cpu-pod", "worker-0")
    run_pod(core, "research", "research-pod", "worker-0")
    run_pod(core, "team-nlp", "finished-pod", "worker-0", finished_ago=120)
    core.delete_namespaced_pod("finished-pod", "team-nlp")
    yield cluster
    cluster.stop()


def get(prom, path: str, user: str | None = "admin", method: str = "GET",
        **params) -> requests.Response:
    headers = {"Authorization": f"Bearer {prom.token(user)}"} if user else {}
    if method == "POST":
        return requests.post(prom.prometheus_url + path, data=params, headers=headers,
                             verify=str(prom.ca_file), timeout=30)
    return requests.get(prom.prometheus_url + path, params=params, headers=headers,
                        verify=str(prom.ca_file), timeout=30)


def query(prom, q: str, user: str = "admin", **params) -> list[dict]:
    r = get(prom, "/api/v1/query", user, query=q, **params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "success"
    assert body["data"]["resultType"] == "vector"
    return body["data"]["result"]


def pods_of(result: list[dict]) -> set[tuple[str, str]]:
    return {(s["metric"].get("namespace", ""), s["metric"].get("pod", "")) for s in result}


# -- tenancy -------------------------------------------------------------------------------
def test_alice_in_her_namespace_sees_only_her_pods(prom):
    result = wait_until(lambda: query(prom, "container_memory_working_set_bytes", "alice",
                                      namespace="team-nlp"), 30, message="alice's series")
    assert {("team-nlp", "gpu-pod"), ("team-nlp", "cpu-pod")} <= pods_of(result)
    assert {ns for ns, _ in pods_of(result)} == {"team-nlp"}
    # asking for another namespace in the query does not widen what the token may read
    result = query(prom, 'container_memory_working_set_bytes{namespace="research"}', "alice",
                   namespace="team-nlp")
    assert {ns for ns, _ in pods_of(result)} == {"team-nlp"}
    # node series have no namespace: a tenant never sees them
    assert query(prom, "kube_node_status_allocatable", "alice", namespace="team-nlp") == []


def test_admin_queries_the_whole_cluster(prom):
    result = wait_until(lambda: query(prom, "container_memory_working_set_bytes"), 30,
                        message="admin's series")
    assert {("team-nlp", "gpu-pod"), ("team-nlp", "cpu-pod"),
            ("research", "research-pod")} <= pods_of(result)
    nodes = query(prom, 'kube_node_status_allocatable{resource="nvidia_com_gpu"}')
    assert [(s["metric"]["node"], s["value"][1]) for s in nodes] == [("gpu-0", "8")]


def test_bob_in_team_nlp_is_forbidden(prom):
    r = get(prom, "/api/v1/query", "bob", query="container_memory_working_set_bytes",
            namespace="team-nlp")
    assert r.status_code == 403
    assert r.text.strip() == "Forbidden (user=bob, verb=get, resource=pods, subresource=)"
    r = get(prom, "/api/v1/query", "bob", query="container_memory_working_set_bytes",
            namespace="research")
    assert r.status_code == 200


def test_alice_without_a_namespace_is_forbidden(prom):
    r = get(prom, "/api/v1/query", "alice", query="container_memory_working_set_bytes")
    assert r.status_code == 403
    assert "user=alice" in r.text and "resource=namespaces" in r.text


def test_no_or_unknown_token_is_unauthorized(prom):
    r = get(prom, "/api/v1/query", None, query="up")
    assert r.status_code == 401 and r.text.strip() == "Unauthorized"
    r = requests.get(prom.prometheus_url + "/api/v1/query", params={"query": "up"},
                     headers={"Authorization": "Bearer not-a-token"},
                     verify=str(prom.ca_file), timeout=30)
    assert r.status_code == 401


# -- series -------------------------------------------------------------------------------
@pytest.mark.parametrize("metric", ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                                    "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"])
def test_gpu_pod_has_one_dcgm_series_per_gpu(prom, metric):
    result = wait_until(lambda: query(prom, f'{metric}{{pod="gpu-pod"}}', "alice",
                                      namespace="team-nlp"), 30, message=f"{metric} series")
    assert len(result) == 2
    assert len({s["metric"]["gpu"] for s in result}) == 2
    assert len({s["metric"]["UUID"] for s in result}) == 2
    for s in result:
        m = s["metric"]
        assert m["namespace"] == "team-nlp" and m["container"] == "main"
        assert m["modelName"] == "NVIDIA A100-SXM4-80GB"
        assert m["Hostname"] == "gpu-0"
        assert m["device"] == f"nvidia{m['gpu']}"
        float(s["value"][1])
    # CPU-only pods have no GPU series
    assert query(prom, f'{metric}{{pod="cpu-pod"}}') == []


def test_gpu_memory_fraction_with_vector_arithmetic(prom):
    result = wait_until(lambda: query(
        prom, 'DCGM_FI_DEV_FB_USED{pod="gpu-pod"} / (DCGM_FI_DEV_FB_USED{pod="gpu-pod"} + '
              'DCGM_FI_DEV_FB_FREE{pod="gpu-pod"})'), 30, message="FB fraction")
    assert len(result) == 2
    for s in result:
        assert "__name__" not in s["metric"]
        assert 0 <= float(s["value"][1]) <= 1


def test_cpu_rate_and_requests(prom):
    result = wait_until(lambda: query(
        prom, 'sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="team-nlp", '
              'pod=~".*-pod"}[5m]))'),
        30, message="cpu rates")
    rates = {s["metric"]["pod"]: float(s["value"][1]) for s in result}
    # like Prometheus, a rate still reads the last 5 minutes of a pod that just finished
    assert set(rates) == {"gpu-pod", "cpu-pod", "finished-pod"}
    assert all(0 < r < 3 for r in rates.values())
    result = query(prom, 'kube_pod_container_resource_requests{pod="gpu-pod"}', "alice",
                   namespace="team-nlp")
    units = {(s["metric"]["resource"], s["metric"]["unit"]): s["value"][1] for s in result}
    assert units == {("cpu", "core"): "2", ("memory", "byte"): str(8 * 1024 ** 3),
                     ("nvidia_com_gpu", "integer"): "2"}


def test_query_range_returns_points_spaced_by_step(prom):
    end = time.time()
    start = end - 300
    r = get(prom, "/api/v1/query_range", query="count(kube_node_status_allocatable)",
            start=str(start), end=str(end), step="30s")
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    assert data["resultType"] == "matrix"
    [series] = data["result"]
    stamps = [p[0] for p in series["values"]]
    assert len(stamps) == 11
    assert stamps[0] == pytest.approx(start, abs=0.001)
    assert all(b - a == pytest.approx(30) for a, b in itertools.pairwise(stamps))
    assert {p[1] for p in series["values"]} == {"9"}  # 4 resources + 5 on the GPU node


def test_query_range_keeps_pods_that_finished_and_were_deleted(prom):
    end = time.time()
    r = get(prom, "/api/v1/query_range", "alice", namespace="team-nlp",
            query='container_memory_working_set_bytes{pod="finished-pod"}',
            start=str(end - STARTED_AGO - 60), end=str(end), step="15")
    assert r.status_code == 200, r.text
    [series] = r.json()["data"]["result"]
    stamps = [p[0] for p in series["values"]]
    assert min(stamps) >= end - STARTED_AGO - 60
    assert max(stamps) <= end - 100  # it stopped two minutes ago
    assert len(stamps) > 20
    assert query(prom, 'container_memory_working_set_bytes{pod="finished-pod"}') == []


def test_query_range_resolution_limit(prom):
    end = time.time()
    r = get(prom, "/api/v1/query_range", query="kube_node_status_allocatable",
            start=str(end - 86400), end=str(end), step="1")
    assert r.status_code == 400
    assert r.json() == {"status": "error", "errorType": "bad_data", "error":
                        "exceeded maximum resolution of 11,000 points per timeseries. Try "
                        "decreasing the query resolution (?step=XX)"}


def test_oom_worker_of_a_real_mpijob_reaches_its_memory_limit(prom):
    """The MPI operator, scheduler and kubelet run this one; the metrics follow them."""
    jobs = client.CustomObjectsApi(prom.api_client("alice"))
    limits = {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}
    jobs.create_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs", {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": "oomjob", "annotations": {
            "simcluster.io/failure": "oom", "simcluster.io/failure-worker": "1",
            "simcluster.io/run-seconds": "600", "simcluster.io/failure-after-seconds": "300"}},
        "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{
                "name": "launcher", "image": "mpioperator/mpi-pi",
                "command": ["mpirun", "-n", "2", "/home/mpiuser/pi"],
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}},
            "Worker": {"replicas": 2, "template": {"spec": {"containers": [{
                "name": "worker", "image": "mpioperator/mpi-pi",
                "resources": {"limits": limits}}]}}}}}})

    def failed() -> bool:
        job = jobs.get_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp",
                                                "mpijobs", "oomjob")
        return any(c["type"] == "Failed" and c["status"] == "True"
                   for c in (job.get("status") or {}).get("conditions") or [])

    wait_until(failed, 90, message="oomjob Failed")

    def peak(metric: str, pod: str) -> float:
        [series] = query(prom, f'max_over_time({metric}{{pod="{pod}"}}[10m])', "alice",
                         namespace="team-nlp")
        return float(series["value"][1])

    limit = 4 * 1024 ** 3
    assert peak("container_memory_working_set_bytes", "oomjob-worker-1") == limit
    assert peak("container_memory_working_set_bytes", "oomjob-worker-0") < 0.9 * limit
    assert peak("DCGM_FI_DEV_GPU_UTIL", "oomjob-worker-0") >= 80


# -- what is refused -------------------------------------------------------------------------
@pytest.mark.parametrize("q", ["histogram_quantile(0.9, DCGM_FI_DEV_GPU_UTIL)",
                               "topk(3, DCGM_FI_DEV_GPU_UTIL)",
                               "DCGM_FI_DEV_GPU_UTIL offset 5m"])
def test_unsupported_query_is_a_clear_400(prom, q):
    r = get(prom, "/api/v1/query", query=q)
    assert r.status_code == 400
    body = r.json()
    assert body["status"] == "error" and body["errorType"] == "bad_data"
    assert "simcluster's PromQL subset does not support" in body["error"]


def test_malformed_parameters_are_bad_data(prom):
    for params in ({"query": "sum("}, {"query": "up", "time": "yesterday"}, {}):
        r = get(prom, "/api/v1/query", **params)
        assert r.status_code == 400, params
        assert r.json()["errorType"] == "bad_data"
    r = get(prom, "/api/v1/query_range", query="up", start="10", end="5", step="1")
    assert r.status_code == 400 and "end timestamp must not be before start" in r.text


# -- the rest of the API ---------------------------------------------------------------------
def test_post_form_and_scalar_result(prom):
    r = get(prom, "/api/v1/query", method="POST", query="2 * 21", time="1700000000")
    assert r.status_code == 200
    assert r.json() == {"status": "success", "data": {"resultType": "scalar",
                                                      "result": [1700000000, "42"]}}


def test_labels_values_and_series_respect_the_namespace(prom):
    r = get(prom, "/api/v1/label/namespace/values", "alice", namespace="team-nlp")
    assert r.status_code == 200 and r.json()["data"] == ["team-nlp"]
    r = get(prom, "/api/v1/label/namespace/values")
    assert {"team-nlp", "research"} <= set(r.json()["data"])
    r = get(prom, "/api/v1/labels", "alice", namespace="team-nlp",
            **{"match[]": "DCGM_FI_DEV_GPU_UTIL"})
    assert {"gpu", "UUID", "modelName", "namespace", "pod"} <= set(r.json()["data"])
    r = get(prom, "/api/v1/series", "alice", namespace="team-nlp",
            **{"match[]": 'container_memory_working_set_bytes{namespace="research"}'})
    assert r.status_code == 200
    assert {s["namespace"] for s in r.json()["data"]} <= {"team-nlp"}
    r = get(prom, "/api/v1/series")
    assert r.status_code == 400 and r.json()["error"] == "no match[] parameter provided"
    r = get(prom, "/api/v1/status/buildinfo")
    assert r.json()["data"]["version"]


# -- a Pushgateway beside it ---------------------------------------------------------------
def push(prom, path: str, body: str, method: str = "PUT") -> requests.Response:
    return requests.request(method, prom.prometheus_url + path, data=body,
                            verify=str(prom.ca_file), timeout=30)


def test_what_a_script_pushes_is_scraped_into_series_of_its_namespace(prom):
    group = "/metrics/job/bert/namespace/team-nlp"
    pushed = []
    for step, loss in ((10, 2.5), (20, 1.75)):
        body = ("# TYPE training_loss gauge\n"
                f"training_loss {loss}\ntraining_step {step}\n")
        assert push(prom, group, body).status_code == 200
        pushed.append(loss)
        wait_until(lambda step=step: [s["value"][1] for s in query(
            prom, 'training_step{job="bert"}', "alice", namespace="team-nlp")] == [str(step)],
            30, message=f"step {step} scraped")
    [loss] = query(prom, "training_loss", "alice", namespace="team-nlp")
    assert loss["metric"] == {"__name__": "training_loss", "job": "bert",
                              "namespace": "team-nlp", "instance": "pushgateway"}
    assert float(loss["value"][1]) == 1.75
    # over time: the values pushed, in order, at the instants Prometheus scraped them
    now = time.time()
    r = get(prom, "/api/v1/query_range", "alice", query="training_loss", namespace="team-nlp",
            start=now - 60, end=now, step="0.1")
    values = [float(v) for _t, v in r.json()["data"]["result"][0]["values"]]
    assert values == sorted(values, reverse=True) and set(values) == set(pushed)
    # tenancy holds: bob's namespace does not see it
    assert query(prom, "training_loss", "bob", namespace="research") == []
    # a body that is not the text format is refused; a deleted group's series end
    bad = push(prom, group, "training_loss one\n")
    assert bad.status_code == 400 and "line 1" in bad.text
    assert push(prom, group, "", method="DELETE").status_code == 202
    wait_until(lambda: query(prom, "training_loss", "alice", namespace="team-nlp") == [], 30,
               message="the deleted group's series ended")

"""A job's TensorBoard against the demo cluster: alice starts one for a finished
run of hers from its Artifacts tab; through the dashboard it lists the scalars the
simulated program wrote in its event file, equal to the losses its log printed; bob, who
cannot see team-nlp, is refused both the start and the proxy; unused, it stops and says so;
with TENSORBOARD_RUNNER=pod, alice's start creates a Pod and a Service in the project that
mount the claim read-only, and a person who may not create pods is told so in plain words."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.core.cache import cache
from django.urls import reverse

from tests.html_checks import assert_valid
from tests.waiting import wait_until

pytestmark = pytest.mark.xdist_group("tensorboard")

RUN = "tensorboard-run"
RESNET = ("team-nlp", "mpijob", RUN)  # alice's; bob cannot see team-nlp
IMAGE = "quay.io/opendatahub/horovod:0.28.1-pytorch2.1"


def _mpijob(name: str, run_seconds: int, epochs: int) -> dict:
    return {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "team-nlp", "annotations": {
            "simcluster.io/run-seconds": str(run_seconds),
            "simcluster.io/epochs": str(epochs)}},
        "spec": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "None"},
                 "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{
                "name": "launcher", "image": IMAGE,
                "command": ["mpirun", "-np", "1", "python", "train.py",
                            "--output_dir", f"/mnt/checkpoints/{name}"],
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}},
            "Worker": {"replicas": 1, "template": {"spec": {
                "containers": [{"name": "worker", "image": IMAGE,
                                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                                "volumeMounts": [{"name": "c", "mountPath": "/mnt/checkpoints"}]}],
                "volumes": [{"name": "c",
                             "persistentVolumeClaim": {"claimName": "checkpoints"}}]}}}}}}


@pytest.fixture(scope="module", autouse=True)
def alices_run(demo_cluster):
    """A short MPIJob of alice's that writes checkpoints and an event file, succeeded; its
    Launcher's pod (and log) kept."""
    from kubernetes import client as k8s

    api = k8s.CustomObjectsApi(demo_cluster.api_client("alice"))
    api.create_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs",
                                        _mpijob(RUN, 60, 4))
    wait_until(lambda: any(c["type"] == "Succeeded" and c["status"] == "True" for c in (
        api.get_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs",
                                         RUN).get("status") or {}).get("conditions", [])),
               90, message=f"{RUN} to succeed")
    yield
    api.delete_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs", RUN)


def _text(body: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


@pytest.fixture
def boards(settings):
    from training.tensorboards.boards import BOARDS

    settings.TENSORBOARD_RUNNER = "local"
    cache.clear()
    yield BOARDS
    BOARDS.stop_all()
    BOARDS.boards.clear()


def _status(client, ref) -> str:
    """The Artifacts tab's TensorBoard part, as htmx asks for it."""
    r = client.get(reverse("training-job-tensorboard", args=ref), headers={"HX-Request": "true"})
    assert r.status_code == 200
    return r.content.decode()


def _start(client, ref) -> str:
    """Start it and wait until it runs or fails: the text of the tab's TensorBoard part."""
    r = client.post(reverse("training-job-tensorboard", args=ref), follow=True)
    assert r.status_code == 200

    def settled():
        text = _text(_status(client, ref))
        return text if "Starting TensorBoard" not in text else None
    return wait_until(settled, 90, interval=0.5, message="TensorBoard to start or fail")


def _get(client, ref, rest: str, **params):
    url = reverse("training-job-tensorboard-proxy", args=[*ref, rest]) if rest else \
        reverse("training-job-tensorboard-root", args=ref)
    r = client.get(url, params)
    body = b"".join(r.streaming_content) if r.streaming else r.content
    return r, body


def _logged_losses(demo_cluster) -> dict[int, float]:
    """{global step: loss} as the Launcher's log printed them at each epoch's end."""
    from kubernetes import client as k8s

    core = k8s.CoreV1Api(demo_cluster.api_client("alice"))
    pod = next(p for p in core.list_namespaced_pod(
        "team-nlp", label_selector=f"training.kubeflow.org/job-name={RUN}").items
        if p.metadata.name.startswith(f"{RUN}-launcher"))
    log = core.read_namespaced_pod_log(pod.metadata.name, "team-nlp")
    steps = int(re.search(r"Epoch \d+/\d+ step \d+/(\d+)", log).group(1))
    return {int(k) * steps: float(loss)
            for k, loss in re.findall(r"Epoch (\d+)/\d+: loss ([0-9.]+)", log)}


def test_alice_opens_tensorboard_and_sees_the_losses_her_run_printed(alice, boards,
                                                                      demo_cluster):
    page = alice.get(reverse("training-job-detail", args=RESNET) + "?tab=artifacts")
    body = page.content.decode()
    assert_valid(body)
    assert "Open TensorBoard" in _text(body)
    assert 'aria-live="polite"' in body
    text = _start(alice, RESNET)
    assert "TensorBoard for tensorboard-run" in text, text
    status = _status(alice, RESNET)
    link = re.search(r'href="([^"]+)" target="_blank" rel="noopener" id="job-tensorboard-link"',
                     status).group(1)
    assert link == reverse("training-job-tensorboard-root", args=RESNET)
    # TensorBoard's own page, under the job's path
    r, index = _get(alice, RESNET, "")
    assert r.status_code == 200 and b"TensorBoard" in index
    assert "Set-Cookie" not in r.headers
    r, tags = _get(alice, RESNET, "data/plugin/scalars/tags")
    assert r.status_code == 200
    runs = json.loads(tags)
    run = next(name for name, found in runs.items() if "train/loss" in found)
    assert {"train/loss", "train/accuracy", "train/learning_rate"} <= set(runs[run])
    r, values = _get(alice, RESNET, "data/plugin/scalars/scalars", run=run, tag="train/loss")
    points = {step: value for _wall, step, value in json.loads(values)}
    logged = _logged_losses(demo_cluster)
    assert sorted(points) == sorted(logged)
    for step, loss in logged.items():
        assert points[step] == pytest.approx(loss, abs=5e-5)


def test_the_proxy_passes_only_reads(alice, boards):
    assert "TensorBoard for tensorboard-run" in _start(alice, RESNET)
    url = reverse("training-job-tensorboard-proxy", args=[*RESNET, "data/plugin/scalars/tags"])
    assert alice.delete(url).status_code == 405
    posted = reverse("training-job-tensorboard-proxy",
                     args=[*RESNET, "data/plugin/timeseries/timeSeries"])
    # a form of another site cannot send TensorBoard's header
    assert alice.post(posted, {"requests": "[]"}).status_code == 403
    r = alice.post(posted, {"requests": json.dumps([{"plugin": "scalars", "tag": "train/loss"}])},
                   headers={"X-XSRF-Protected": "1"})
    assert r.status_code == 200
    assert "train/loss" in b"".join(r.streaming_content).decode()


def test_bob_is_refused_both_the_start_and_the_proxy(alice, boards, client, demo_cluster):
    from tests.dashboard_support import sign_in

    assert "TensorBoard for tensorboard-run" in _start(alice, RESNET)
    sign_in(client, demo_cluster, "bob")
    r = client.post(reverse("training-job-tensorboard", args=RESNET))
    assert r.status_code in (403, 404)
    r, body = _get(client, RESNET, "data/plugin/scalars/tags")
    assert r.status_code in (403, 404)
    assert b"train/loss" not in body


def test_unused_it_stops_and_says_so_and_starts_again(alice, boards, settings):
    settings.TENSORBOARD_IDLE_SECONDS = 1
    assert "TensorBoard for tensorboard-run" in _start(alice, RESNET)
    text = wait_until(lambda: (lambda t: t if "stopped after" in t else None)(
        _text(_status(alice, RESNET))), 30, interval=0.5, message="the idle stop")
    assert "TensorBoard stopped after 1 minute unused." in text
    assert "Start TensorBoard again" in text
    r, body = _get(alice, RESNET, "data/plugin/scalars/tags")
    assert r.status_code == 404
    assert "TensorBoard stopped after 1 minute unused." in _text(body.decode())
    settings.TENSORBOARD_IDLE_SECONDS = 1800
    assert "TensorBoard for tensorboard-run" in _start(alice, RESNET)


def test_a_running_jobs_tensorboard_gets_its_new_epochs_while_used(alice, boards, settings,
                                                                  demo_cluster):
    from kubernetes import client as k8s

    settings.TENSORBOARD_REFRESH_SECONDS = 1
    name = "tensorboard-live"
    ref = ("team-nlp", "mpijob", name)
    api = k8s.CustomObjectsApi(demo_cluster.api_client("alice"))
    api.create_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs",
                                        _mpijob(name, 1200, 12))
    try:
        def started() -> str | None:
            cache.clear()  # the listing of a running job is kept a little while
            text = _start(alice, ref)
            return text if f"TensorBoard for {name}" in text else None
        wait_until(started, 90, interval=1, message="a TensorBoard with the first epoch")

        def steps() -> set[int]:
            r, body = _get(alice, ref, "data/plugin/scalars/scalars", run=".", tag="train/loss")
            return {step for _wall, step, _value in json.loads(body)} if r.status_code == 200 \
                else set()
        first = wait_until(steps, 30, interval=0.5, message="the first epoch's loss")
        more = wait_until(lambda: (lambda now: now if len(now) > len(first) else None)(steps()),
                          60, interval=0.5, message="a later epoch's loss")
        assert first < more
    finally:
        api.delete_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs",
                                            name)


def test_a_job_without_event_files_says_so(alice, boards):
    ref = ("team-nlp", "mpijob", "bert-large-pretrain")  # names no output directory
    r = alice.post(reverse("training-job-tensorboard", args=ref), follow=True)
    assert r.status_code == 200
    assert_valid(r.content.decode())  # the page without JavaScript
    text = _text(r.content.decode())
    assert "no TensorBoard event files" in text and "Open TensorBoard" not in text


def test_pod_runner_creates_a_pod_and_service_as_alice(alice, boards, settings, demo_cluster):
    from kubernetes import client as k8s

    settings.TENSORBOARD_RUNNER = "pod"
    alice.post(reverse("training-job-tensorboard", args=RESNET))
    core = k8s.CoreV1Api(demo_cluster.api_client("alice"))
    selector = "opendatahub.io/tensorboard-for=tensorboard-run"
    pods = wait_until(lambda: core.list_namespaced_pod("team-nlp",
                                                       label_selector=selector).items,
                      30, message="the TensorBoard pod")
    pod = pods[0]
    container = pod.spec.containers[0]
    prefix = reverse("training-job-tensorboard-root", args=RESNET).rstrip("/")
    assert container.image == settings.TENSORBOARD_IMAGE
    assert container.command[:3] == ["tensorboard", "--logdir",
                                     f"/logs/0/{RUN}"]
    assert container.command[container.command.index("--path_prefix") + 1] == prefix
    claim = next(v for v in pod.spec.volumes if v.persistent_volume_claim)
    assert claim.persistent_volume_claim.claim_name == "checkpoints"
    assert claim.persistent_volume_claim.read_only is True
    assert all(m.read_only for m in container.volume_mounts if m.name.startswith("logs"))
    # the Service is made right after its Pod (which owns it)
    services = wait_until(lambda: core.list_namespaced_service(
        "team-nlp", label_selector=selector).items, 30, message="the TensorBoard service")
    assert [s.metadata.name for s in services] == [pod.metadata.name]
    assert services[0].spec.ports[0].port == 6006
    boards.stop_all()
    wait_until(lambda: not core.list_namespaced_pod("team-nlp", label_selector=selector).items
               and not core.list_namespaced_service("team-nlp", label_selector=selector).items,
               30, message="the TensorBoard pod and service deleted")


def test_pod_runner_tells_a_person_who_may_not_create_pods(demo_cluster):
    from odh.training.artifacts.outputs import OutputDir
    from odh.training.artifacts.tensorboard import LogDir, TensorBoardRefused, start_board_pod
    from odh.training.cluster.client import ClusterClient

    logdirs = [LogDir(0, OutputDir("checkpoints", "bert-classifier-ddp",
                                   "/mnt/checkpoints/bert-classifier-ddp", "--output_dir"), "")]
    with ClusterClient(demo_cluster.api_client("bob")) as client, \
            pytest.raises(TensorBoardRefused) as refused:
        start_board_pod(client, "research", "bert-classifier-ddp", "bobhash", logdirs, "/tb",
                        "example/tensorboard")
    assert refused.value.reason == "forbidden"
    assert "You may not start pods and services in research" in refused.value.message

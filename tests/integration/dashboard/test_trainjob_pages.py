"""The demo's TrainJobs on the job pages as an MPIJob is shown: the Queue card of one
waiting in a Kueue queue (qwen-7b-sft), and the progress of a running one, read from its
log (the MPI runtime's launcher, a torch runtime's node 0, with the totals its trainer's
command names) or, where the Trainer reports it, from upstream's `status.trainerStatus`."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

import pytest
from django.urls import reverse
from kubernetes import client as k8s

from tests.html_checks import assert_valid
from tests.page_text import text_of
from tests.waiting import wait_until

TRAINER = ("trainer.kubeflow.org", "v1alpha1")


def _detail(project: str, kind: str, name: str) -> str:
    return reverse("training-job-detail", args=[project, kind, name])


def _bar(body: str, dom_id: str) -> str:
    m = re.search(rf'<div class="pf-v6-c-progress[^"]*" id="{dom_id}">.*?(?:</div>\s*){{2}}'
                  r'(?:<div class="pf-v6-c-progress__helper-text">.*?</div>)?', body, re.S)
    assert m, f"no progress bar #{dom_id}"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", m.group(0))).strip()


# -- the Queue card ------------------------------------------------------------------------------
def test_a_queued_trainjob_has_the_queue_card_of_a_queued_mpijob(alice):
    lines = {}
    for kind, name in (("mpijob", "mistral-7b-dpo"), ("trainjob", "qwen-7b-sft")):
        html = alice.get(_detail("team-nlp", kind, name)).content.decode()
        assert_valid(html)
        lines[kind] = {part: text_of(html, f"job-queue-{part}")
                       for part in ("standing", "expected", "kueue")}
        assert text_of(html, "job-header-status").startswith("Pending")
        card = html[html.index('<section id="job-queue"'):].split(">", 1)[0]
        assert f'hx-get="{reverse("training-job-queue", args=["team-nlp", kind, name])}"' \
            in card
    tj = lines["trainjob"]
    # last, behind the MPIJobs queued before it, its 2 nodes x 4 GPUs counted (alice may not
    # read the ClusterQueue's pending list: the position counts her queue)
    standing = r"Queued in team-nlp-queue: position {} of (\d+) in this queue \(ClusterQueue " \
        r"team-nlp-a100\), needs {} GPUs, 0 free now"
    mpi = re.fullmatch(standing.format(r"\d+", 4), lines["mpijob"]["standing"])
    assert mpi, lines["mpijob"]
    assert re.fullmatch(standing.format(mpi.group(1), 8), tj["standing"]), tj
    assert tj["expected"] == lines["mpijob"]["expected"] == (
        "unknown: it must wait for jobs ahead of it to finish, which have not started yet")
    assert tj["kueue"] == ("couldn't assign flavors to pod set node: insufficient unused "
                           "quota for nvidia.com/gpu in flavor a100, 8 more needed")
    # the card alone, as it fetches itself while the job waits
    card = alice.get(reverse("training-job-queue", args=["team-nlp", "trainjob", "qwen-7b-sft"]))
    assert text_of(card.content.decode(), "job-queue-standing") == tj["standing"]
    rows = alice.get(reverse("training-job-list"), {"project": "team-nlp"}).content.decode()
    assert re.fullmatch(r"Queued: \d+ of \d+ in team-nlp-queue",
                        text_of(rows, "row-queue-team-nlp-trainjob-qwen-7b-sft"))


# -- progress ------------------------------------------------------------------------------------
@pytest.fixture
def admin_api(demo_cluster):
    with demo_cluster.api_client("admin") as api:
        yield k8s.CustomObjectsApi(api)


@pytest.fixture
def trainer_status(admin_api):
    """`trainer_status(ns, name, {...})` writes the TrainJob's status.trainerStatus as the
    Trainer's progress endpoint does; taken away after the test."""
    written: list[tuple[str, str]] = []

    def write(ns: str, name: str, status: dict) -> None:
        admin_api.patch_namespaced_custom_object_status(
            *TRAINER, ns, "trainjobs", name, {"status": {"trainerStatus": status}})
        written.append((ns, name))

    yield write
    for ns, name in written:
        admin_api.patch_namespaced_custom_object_status(
            *TRAINER, ns, "trainjobs", name, {"status": {"trainerStatus": None}})


def test_a_running_mpi_trainjob_shows_its_launchers_progress(admin):
    body = admin.get(_detail("research", "trainjob", "xgboost-mpi-bench")).content.decode()
    assert re.match(r"Epoch \d+ of 10 \d+% About (\d+[hms] ?)+ left$",
                    _bar(body, "job-progress"))


def test_the_trainers_own_status_is_its_progress_where_it_reports_one(admin, trainer_status):
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    trainer_status("research", "xgboost-mpi-bench", {
        "progressPercentage": 40, "estimatedRemainingSeconds": 5400, "lastUpdatedTime": now,
        "metrics": [{"name": "loss", "value": "0.42"}]})
    body = admin.get(_detail("research", "trainjob", "xgboost-mpi-bench")).content.decode()
    assert_valid(body)
    assert re.fullmatch(r"Progress reported by the trainer 40% About 1h (29m \d+s|30m) left",
                        _bar(body, "job-progress")), _bar(body, "job-progress")
    rows = admin.get(reverse("training-job-list"), {"project": "research"}).content.decode()
    assert _bar(rows, "job-progress-research-trainjob-xgboost-mpi-bench").startswith(
        "Progress reported by the trainer 40%")


def test_a_torch_trainjob_shows_node_0s_progress_with_its_commands_totals(admin, admin_api,
                                                                        demo_cluster):
    """A torch runtime's nodes print "Train Epoch: 1 [0/60000 (0%)]" (no total) long before
    the epoch's summary line: the total is the trainer's `--epochs 10`."""
    name = f"torch-progress-{uuid.uuid4().hex[:4]}"
    admin_api.create_namespaced_custom_object(*TRAINER, "research", "trainjobs", {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": name, "annotations": {"simcluster.io/run-seconds": "72000",
                                                   "simcluster.io/epochs": "10"}},
        "spec": {"runtimeRef": {"name": "torch-distributed"},
                 "trainer": {"image": "quay.io/opendatahub/pytorch:2.7.1-cuda12.8",
                             "command": ["torchrun", "/workspace/train.py"],
                             "args": ["--epochs", "10"], "numNodes": 2,
                             "resourcesPerNode": {"limits": {"cpu": "1", "memory": "1Gi"}}}}})
    try:
        def bar() -> str | None:
            body = admin.get(_detail("research", "trainjob", name)).content.decode()
            return _bar(body, "job-progress") if 'id="job-progress"' in body else None
        shown = wait_until(bar, 60, message=f"{name}'s progress bar")
        assert shown == "Epoch 1 of 10 0%", shown
        with demo_cluster.api_client("admin") as api:
            pods = k8s.CoreV1Api(api).list_namespaced_pod(
                "research", label_selector=f"jobset.sigs.k8s.io/jobset-name={name}").items
        assert sorted(p.metadata.labels["batch.kubernetes.io/job-completion-index"]
                      for p in pods) == ["0", "1"]
    finally:
        admin_api.delete_namespaced_custom_object(*TRAINER, "research", "trainjobs", name)

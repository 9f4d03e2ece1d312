"""Kueue in the browser, on a demo cluster of its own (its queue is drained here): alice
submits a job that queues behind segformer-sweep in team-cv-queue and is told position 2
and an expected start on the review, the confirmation and the job page; jobs ahead of it
end, and without a reload her position becomes 1, then her job runs; an administrator
watches the queue drain on /cluster/queues/."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from tests import simcluster_process
from tests.e2e.conftest import dashboard_on, sign_in

NS = "team-cv"
QUEUE = "team-cv-queue"


@pytest.fixture(scope="module")
def queue_cluster(tmp_path_factory):
    cluster = simcluster_process.start(tmp_path_factory.mktemp("e2e-queues") / "state",
                                       scenario="demo", speed=20)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def queue_dashboard(queue_cluster, tmp_path_factory):
    with dashboard_on(queue_cluster, tmp_path_factory.mktemp("queue-dashboard")) as url:
        yield url


def _delete(cluster, name: str) -> None:
    from kubernetes import client

    with cluster.api_client("admin") as api:
        client.CustomObjectsApi(api).delete_namespaced_custom_object(
            "kubeflow.org", "v2beta1", NS, "mpijobs", name)


def test_a_queued_job_moves_up_and_runs_while_alice_and_the_admin_watch(
        browser, queue_cluster, queue_dashboard, screenshot):
    alice = browser.new_context().new_page()
    sign_in(alice, queue_dashboard, "alice", next_path="/jobs/new/")
    alice.get_by_role("button", name="Create an MPIJob").click()
    name = f"e2e-queued-{uuid.uuid4().hex[:5]}"
    alice.get_by_label("Project").select_option(NS)
    alice.get_by_label("Job name").fill(name)
    alice.get_by_label("Training image").fill("quay.io/opendatahub/horovod:0.28.1-pytorch2.1")
    alice.get_by_label("Command").fill("horovodrun -np 4 python /workspace/train.py --epochs 3")
    alice.get_by_role("button", name="Next").click()

    expect(alice.get_by_role("heading", name="Resources")).to_be_visible()
    alice.get_by_label("Number of workers").fill("2")
    alice.get_by_label("GPUs per worker").fill("2")
    alice.get_by_text("Advanced options").click()
    alice.get_by_label("Kueue queue").select_option(QUEUE)
    # simcluster's launcher: train for hours once it runs (not a few simulated seconds)
    alice.get_by_label("Annotations").fill("simcluster.io/run-seconds=36000")
    # the live resource check: team-cv-a100's 8 GPUs are held, segformer-sweep waits
    forecast = alice.locator("#queue-forecast-text")
    expect(forecast).to_have_text(
        "Queued in team-cv-queue: position 2 of 2 (ClusterQueue team-cv-a100), "
        "needs 4 GPUs, 0 free now", timeout=15_000)
    alice.get_by_role("button", name="Next").click()

    expect(alice.get_by_role("heading", name="Review")).to_be_visible()
    expect(alice.locator("#queue-forecast-text")).to_contain_text("position 2 of 2")
    expect(alice.locator("#queue-forecast-expected")).to_contain_text("Expected start: in about")
    screenshot("queue-review")
    alice.get_by_role("button", name="Create job").click()

    # the confirmation and the job page say where it stands
    expect(alice.get_by_role("heading", name=name)).to_be_visible(timeout=20_000)
    expect(alice.get_by_text("position 2 of 2 (ClusterQueue team-cv-a100)").first).to_be_visible()
    standing = alice.locator("#job-queue-standing")
    expect(standing).to_contain_text("position 2 of 2 in this queue", timeout=20_000)
    expect(alice.locator("#job-queue-expected")).not_to_be_empty()
    expect(alice.locator("#job-queue-ahead")).to_have_text("segformer-sweep")
    screenshot("queue-job-page")

    admin = browser.new_context().new_page()
    sign_in(admin, queue_dashboard, "admin", next_path="/cluster/queues/")
    pending = admin.locator("#cluster-queue-team-cv-a100-pending tbody tr")
    expect(pending).to_have_count(2)
    expect(pending.nth(1)).to_contain_text(name)

    # yolo-urgent ends: segformer-sweep is admitted, alice is first, without a reload
    _delete(queue_cluster, "yolo-urgent")
    expect(standing).to_contain_text("position 1 of 1 in this queue", timeout=30_000)
    expect(pending).to_have_count(1, timeout=20_000)
    expect(pending.first).to_contain_text(name)

    # mask-rcnn-ft ends: alice's job is admitted and runs
    _delete(queue_cluster, "mask-rcnn-ft")
    expect(standing).to_have_text("Admitted by the ClusterQueue team-cv-a100 (queue "
                                  "team-cv-queue).", timeout=30_000)
    expect(alice.locator("#job-header-status")).to_contain_text("Running", timeout=60_000)
    expect(admin.locator("#cluster-queue-team-cv-a100-pending-none")).to_be_visible(
        timeout=20_000)
    expect(admin.locator("#cluster-queue-team-cv-a100-admitted")).to_contain_text(name)
    screenshot("queue-drained")

"""A new volume claim asked for in the browser: found by its labels, the storage class
chosen among the cluster's (the default marked), shown on the review, created with the
job and mounted by it."""

from __future__ import annotations

import uuid

import pytest
from kubernetes import client as k8s
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.wizard_cluster import ClusterJobs

NS = "team-nlp"


@pytest.fixture
def cluster(e2e_cluster):
    with e2e_cluster.api_client("admin") as api:
        jobs = ClusterJobs(api)
        jobs.claims = []  # type: ignore[attr-defined]
        yield jobs
        jobs.cleanup()
        for name in jobs.claims:  # type: ignore[attr-defined]
            try:
                k8s.CoreV1Api(api).delete_namespaced_persistent_volume_claim(name, NS)
            except k8s.ApiException as e:
                if e.status != 404:  # a test that stopped before Create made none
                    raise


def test_alice_asks_for_a_new_claim_with_her_job(page, live_dashboard, cluster, screenshot):
    suffix = uuid.uuid4().hex[:5]
    name, claim = f"e2e-claim-{suffix}", f"data-{suffix}"
    cluster.track(NS, name)
    cluster.claims.append(claim)
    sign_in(page, live_dashboard, "alice", next_path="/jobs/new/")
    page.get_by_role("button", name="Create an MPIJob").click()
    if page.get_by_role("button", name="Show all the options").count():
        page.get_by_role("button", name="Show all the options").click()
    page.get_by_label("Project").select_option(NS)
    page.get_by_label("Job name").fill(name)
    page.get_by_label("Training image").fill("quay.io/opendatahub/horovod:0.28.1-pytorch2.1")
    page.get_by_label("Command").fill("horovodrun -np 2 python /workspace/train.py")
    page.get_by_role("button", name="Next").click()

    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    # the claim asked for first, on the step as it loaded: a press of its button while the
    # resource check answers a field just typed (an htmx swap) was lost under load
    page.get_by_text("Advanced options").click()
    page.get_by_role("button", name="Ask for a new volume claim").click()
    page.get_by_label("Claim name").fill(claim)
    page.get_by_label("Size").fill("100Gi")
    storage_class = page.get_by_label("Storage class")
    expect(storage_class).to_have_value("standard")
    expect(storage_class.locator("option").first).to_have_text("standard (default)")
    storage_class.select_option("nfs-shared")
    expect(page.get_by_label("Access mode")).to_have_value("ReadWriteMany")
    expect(page.get_by_text("Several Workers on different nodes need ReadWriteMany")) \
        .to_be_visible()
    page.locator("#claims").get_by_label("Mount path").fill("/data")
    page.get_by_label("Number of workers").fill("2")
    screenshot("wizard-new-claim")
    page.get_by_role("button", name="Next").click()

    expect(page.get_by_role("heading", name="Review")).to_be_visible()
    expect(page.get_by_text(f"New volume claim {claim}: 100Gi, ReadWriteMany, storage class "
                            "nfs-shared")).to_be_visible()
    expect(page.get_by_role("region", name="YAML")).to_contain_text(
        "kind: PersistentVolumeClaim")
    page.get_by_role("button", name="Create job").click()
    expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=20_000)
    pod = cluster.get(NS, name)["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert {"name": f"pvc-{claim}", "persistentVolumeClaim": {"claimName": claim}} \
        in pod["volumes"]

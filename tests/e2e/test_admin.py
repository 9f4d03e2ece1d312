"""What a cluster administrator does: read capacity and quota use, then who did what."""

from __future__ import annotations

import csv
import io
import re
import uuid
from decimal import Decimal

import pytest
from kubernetes import client as k8s
from playwright.sync_api import expect

from odh.training.manifests.totals import number
from odh.training.quantity import parse_quantity
from tests.e2e.conftest import sign_in
from tests.overview_support import one_gpu_job, placed_pods_and_quota_use, requested
from tests.waiting import wait_until
from tests.wizard_cluster import ClusterJobs

GPU = "nvidia.com/gpu"
DEMO_GPU_QUOTAS = {"team-nlp": "24", "team-cv": "56", "research": "8"}


def _cluster(sim) -> dict:
    """GPUs held by placed pods, and each project's GPU quota use, as the cluster says."""
    pods, quotas = placed_pods_and_quota_use(sim)
    return {"gpus": number("gpu", sum((requested(p, GPU) for p in pods), Decimal(0))),
            "quota": {ns: number("gpu", parse_quantity(used.get("requests.nvidia.com/gpu", "0")))
                      for ns, used in quotas.items()},
            "pods": {p.metadata.name for p in pods}}


def _start_one_gpu_job(custom: k8s.CustomObjectsApi, name: str) -> None:
    """alice's long MPIJob in team-nlp: a Launcher without GPUs, one Worker with one."""
    custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs",
                                           one_gpu_job(name))


def _delete_job(custom: k8s.CustomObjectsApi, name: str) -> None:
    custom.delete_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs",
                                           name, body={"propagationPolicy": "Background"})


def _shows_the_cluster(page, sim, reload: bool = True) -> dict | None:
    """The page (reloaded) shows what the cluster holds right now, or None."""
    before = _cluster(sim)
    if reload:
        page.reload()
    gpu_card = page.locator("#capacity-gpu").inner_text()
    rows = {ns: page.locator(f"#project-{ns}").inner_text() for ns in DEMO_GPU_QUOTAS}
    if _cluster(sim) != before:
        return None  # a job started or finished meanwhile: look again
    if f"{before['gpus']} / 40" not in " ".join(gpu_card.split()):
        return None
    for ns, hard in DEMO_GPU_QUOTAS.items():
        if f"GPUs {before['quota'][ns]}/{hard}" not in " ".join(rows[ns].split()):
            return None
    return before


@pytest.fixture
def alice_api(e2e_cluster):
    with e2e_cluster.api_client("alice") as api:
        yield api


def test_the_admin_sees_gpu_capacity_and_quota_use_exactly(page, live_dashboard, e2e_cluster,
                                                          alice_api, screenshot):
    sign_in(page, live_dashboard, "admin", next_path="/cluster/")
    expect(page.get_by_role("heading", name="Cluster overview")).to_be_visible()
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Cluster overview")).to_have_attribute(
        "aria-current", "page")
    expect(nav.get_by_role("link", name="Audit trail")).to_be_visible()
    models = page.get_by_role("table", name="GPUs by model")
    expect(models).to_contain_text("NVIDIA-A100-SXM4-80GB")
    expect(models.get_by_role("row").nth(1)).to_contain_text("40")  # 5 nodes x 8 A100
    seen = wait_until(lambda: _shows_the_cluster(page, e2e_cluster), 30,
                      message="the overview to show the cluster's GPUs and quotas")
    projects = page.get_by_role("table", name="Quota use per project")
    for ns, hard in DEMO_GPU_QUOTAS.items():
        expect(projects.get_by_role("row").filter(has_text=ns).first).to_contain_text(
            f"/{hard}")
    expect(page.locator("#chart-gpu-models .main-svg").first).to_be_visible()  # Plotly drew
    expect(page.locator("#chart-quota-use .main-svg").first).to_be_visible()
    waiting = page.get_by_role("table", name="Pending and suspended jobs, longest waiting first")
    # why it waits: the story its page tells (odh/training/diagnosis/story.py)
    expect(waiting.get_by_role("row").filter(has_text="vit-huge-pretrain")).to_contain_text(
        "This job can never start: each Worker asks for 12 GPUs and no node has that many")
    screenshot("cluster-overview")

    # alice starts a one-GPU Worker in team-nlp: after a reload the numbers have moved
    name = f"e2e-overview-{uuid.uuid4().hex[:5]}"
    custom = k8s.CustomObjectsApi(alice_api)
    _start_one_gpu_job(custom, name)
    try:
        def moved():
            now = _shows_the_cluster(page, e2e_cluster)
            return now if now and f"{name}-worker-0" in now["pods"] else None

        after = wait_until(moved, 60, message="the new Worker's GPU on the overview")
        assert after["gpus"] != seen["gpus"] or after["quota"] != seen["quota"]
        expect(page.get_by_role("table", name="Quota use per project").get_by_role(
            "row").filter(has_text="team-nlp").first).to_contain_text(
            f"GPUs {after['quota']['team-nlp']}/24")
    finally:
        _delete_job(custom, name)


def test_alice_gets_the_403_page_and_no_cluster_link(page, live_dashboard):
    sign_in(page, live_dashboard, "alice")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Training jobs")).to_be_visible()
    expect(nav.get_by_role("link", name="Cluster overview")).to_have_count(0)
    expect(nav.get_by_role("link", name="Audit trail")).to_have_count(0)
    response = page.goto(live_dashboard + "/cluster/")
    assert response.status == 403
    expect(page.get_by_role("heading", name="You don't have access to this")).to_be_visible()
    expect(page.get_by_text("cluster administrators")).to_be_visible()
    assert page.goto(live_dashboard + "/cluster/audit/").status == 403


def test_the_audit_page_lists_alices_create_and_exports_it(page, browser, live_dashboard,
                                                           e2e_cluster, screenshot):
    # alice creates a job through the wizard
    ns = "team-cv"
    name = f"e2e-audit-{uuid.uuid4().hex[:5]}"
    with e2e_cluster.api_client("admin") as api:
        jobs = ClusterJobs(api)
        jobs.track(ns, name)
        alice_context = browser.new_context()
        try:
            alice = alice_context.new_page()
            sign_in(alice, live_dashboard, "alice", next_path="/jobs/new/")
            alice.get_by_role("button", name="Create an MPIJob").click()
            alice.get_by_label("Project").select_option(ns)
            alice.get_by_label("Job name").fill(name)
            alice.get_by_label("Training image").fill(
                "quay.io/opendatahub/horovod:0.28.1-pytorch2.1")
            alice.get_by_label("Command").fill("horovodrun -np 1 python /workspace/train.py")
            alice.get_by_role("button", name="Next").click()
            expect(alice.get_by_role("heading", name="Resources")).to_be_visible()
            alice.get_by_label("Number of workers").fill("1")
            alice.get_by_role("button", name="Next").click()
            expect(alice.get_by_role("heading", name="Review")).to_be_visible()
            alice.get_by_role("button", name="Create job").click()
            expect(alice.get_by_role("heading", name=name)).to_be_visible(timeout=20_000)
        finally:
            alice_context.close()

        # the administrator finds it in the audit trail and exports it
        sign_in(page, live_dashboard, "admin", next_path="/cluster/audit/")
        expect(page.get_by_role("heading", name="Audit trail")).to_be_visible()
        page.get_by_label("User").fill("alice")
        page.get_by_label("Action").select_option("create")
        page.get_by_role("button", name="Filter").click()
        expect(page).to_have_url(re.compile(r"user=alice.*verb=create"))
        table = page.get_by_role("table", name="Audit trail, newest first")
        row = table.get_by_role("row").filter(has_text=name)
        expect(row).to_contain_text("alice")
        expect(row).to_contain_text("Create")  # the action, translated
        expect(row).to_contain_text("Success")
        expect(row.get_by_role("link", name=name)).to_have_attribute(
            "href", f"/jobs/{ns}/mpijob/{name}/")
        screenshot("audit")

        with page.expect_download() as download:
            page.get_by_role("link", name="Export CSV").click()
        path = download.value.path()
        rows = list(csv.DictReader(io.StringIO(open(path, encoding="utf-8").read())))
        assert download.value.suggested_filename.startswith("audit-trail-")
        assert rows and all(r["user"] == "alice" and r["verb"] == "create" for r in rows)
        [mine] = [r for r in rows if r["name"] == name]
        assert (mine["project"], mine["kind"], mine["outcome"]) == (ns, "MPIJob", "success")
        jobs.cleanup()


def test_the_numbers_move_live_as_a_job_starts(page, live_dashboard, e2e_cluster, alice_api):
    """No reload: the watch hub says the cluster changed, the page reads its numbers again."""
    sign_in(page, live_dashboard, "admin", next_path="/cluster/")
    expect(page.locator("#live-socket")).to_have_attribute("data-live-state", "live",
                                                           timeout=20_000)
    wait_until(lambda: _shows_the_cluster(page, e2e_cluster, reload=False), 30,
               message="the overview to match the cluster")
    name = f"e2e-live-{uuid.uuid4().hex[:5]}"
    custom = k8s.CustomObjectsApi(alice_api)
    _start_one_gpu_job(custom, name)
    try:
        def moved():
            now = _shows_the_cluster(page, e2e_cluster, reload=False)
            return now if now and f"{name}-worker-0" in now["pods"] else None

        wait_until(moved, 60, message="the overview to follow the new Worker without a reload")
    finally:
        _delete_job(custom, name)
    # and back when it is gone
    wait_until(lambda: (now := _shows_the_cluster(page, e2e_cluster, reload=False))
               and f"{name}-worker-0" not in now["pods"], 60,
               message="the overview to follow the deleted job without a reload")

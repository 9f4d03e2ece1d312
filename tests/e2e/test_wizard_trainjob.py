"""A TrainJob in the browser: alice creates one on mpi-distributed (2 nodes x 1 GPU) through
the wizard, watches it run live with its nodes in Topology and its logs, suspends and
resumes it and clones it; bob sees research's TrainJob and may change nothing of it. On
the demo cluster serving Kubeflow Trainer (tests/trainer_scenario.py)."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests import simcluster_process
from tests.e2e.conftest import dashboard_on, sign_in
from tests.trainer_scenario import demo_with_trainer
from tests.wizard_cluster import ClusterJobs, give_limit_range_a_gpu_default

NS = "team-nlp"
SLOW = 60_000
MUTATIONS = ("Suspend", "Resume", "Clone", "Retry", "Delete")


@pytest.fixture(scope="module")
def trainer_cluster(tmp_path_factory):
    scenario = demo_with_trainer()
    cluster = simcluster_process.start_scenario(tmp_path_factory.mktemp("e2e-trainer"),
                                                scenario, speed=20,
                                                name=f"{scenario['name']}.yaml")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def trainer_dashboard(trainer_cluster, tmp_path_factory):
    with dashboard_on(trainer_cluster, tmp_path_factory.mktemp("trainer-dashboard")) as url:
        yield url


@pytest.fixture
def trainjobs(trainer_cluster):
    """team-nlp with a GPU default on its LimitRange (the runtime's launcher asks for
    none); TrainJobs made by a test are deleted afterwards."""
    with trainer_cluster.api_client("admin") as api:
        restore = give_limit_range_a_gpu_default(api, NS)
        jobs = ClusterJobs(api, "trainer.kubeflow.org", "v1alpha1", "trainjobs")
        yield jobs
        jobs.cleanup()
        restore()


def test_alice_creates_watches_suspends_resumes_and_clones_a_trainjob(
        page, trainer_dashboard, trainjobs, screenshot):
    sign_in(page, trainer_dashboard, "alice", next_path="/jobs/new/")
    expect(page.get_by_role("heading", name="TrainJob (Kubeflow Trainer)")).to_be_visible()
    page.get_by_role("button", name="Create a TrainJob").click()

    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    name = f"e2e-tj-{uuid.uuid4().hex[:5]}"
    trainjobs.track(NS, name)
    page.get_by_label("Project").select_option(NS)
    expect(page.get_by_label("Runtime")).to_have_value("ClusterTrainingRuntime/mpi-distributed")
    page.get_by_label("Job name").fill(name)
    page.get_by_label("Training image").fill("mpioperator/mpi-pi:openmpi")
    page.get_by_label("Command").fill("mpirun -n 2 /home/mpiuser/pi")
    screenshot("wizard-trainjob-configuration")
    page.get_by_role("button", name="Next").click()

    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    page.get_by_label("Nodes", exact=True).fill("2")
    page.get_by_label("GPUs per node").fill("1")
    expect(page.get_by_label("Launcher CPUs")).to_have_count(0)
    page.get_by_text("Advanced options").click()
    expect(page.get_by_label("Processes per node")).to_be_visible()
    expect(page.get_by_label("MPI implementation")).to_be_visible()  # an MPI runtime
    queue = page.get_by_label("Kueue queue")
    if queue.count():
        queue.select_option("")  # started at once, not queued
    # simcluster runs it for an hour (three minutes at speed 20): time to suspend it
    page.get_by_label("Annotations").fill("simcluster.io/run-seconds=3600")
    screenshot("wizard-trainjob-resources")
    page.get_by_role("button", name="Next").click()

    expect(page.get_by_role("heading", name="Review")).to_be_visible()
    expect(page.get_by_role("region", name="YAML")).to_contain_text("kind: TrainJob")
    expect(page.get_by_role("region", name="YAML")).to_contain_text("numNodes: 2")
    expect(page.get_by_role("region", name="Python SDK")).to_contain_text("TrainJob(")
    screenshot("wizard-trainjob-review")
    page.get_by_role("button", name="Create job").click()

    expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=20_000)
    expect(page.get_by_text(f"The TrainJob “{name}” was created in {NS}")).to_be_visible()
    expect(page.get_by_text("Clone and Retry are for MPIJobs")).to_have_count(0)
    job = trainjobs.get(NS, name)
    assert job["spec"]["runtimeRef"]["name"] == "mpi-distributed"
    assert job["spec"]["trainer"]["numNodes"] == 2

    # live: Running without a reload, its nodes in Topology ("Node 0": upstream's word), a
    # node's log
    status = page.locator("#job-header-status")
    expect(status).to_have_text("Running", timeout=SLOW)
    page.get_by_role("link", name="Topology").click()
    topology = page.locator("#job-topology")
    expect(topology.get_by_role("link", name=re.compile(r"^Node \d+ "))).to_have_count(
        2, timeout=SLOW)
    screenshot("trainjob-topology")
    topology.get_by_role("link", name=re.compile(r"^Node \d+ ")).first.click()
    expect(page).to_have_url(re.compile(r"tab=logs&pod="))
    expect(page.get_by_role("log")).to_have_accessible_name(re.compile(r"^Log of Node \d+$"))

    # suspended and resumed from its page
    actions = page.get_by_role("group", name="Job actions")
    actions.get_by_role("button", name="Suspend").click()
    expect(status).to_have_text("Suspended", timeout=SLOW)
    assert trainjobs.get(NS, name)["spec"]["suspend"] is True
    actions.get_by_role("button", name="Resume").click()
    expect(status).not_to_have_text("Suspended", timeout=SLOW)
    assert not trainjobs.get(NS, name)["spec"].get("suspend")

    # cloned: the wizard opens with its spec
    actions.get_by_text("Actions", exact=True).click()
    actions.get_by_role("link", name="Clone").click()
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    expect(page.get_by_text(f"Cloned “{name}”")).to_be_visible()
    expect(page.get_by_label("Runtime")).to_have_value("ClusterTrainingRuntime/mpi-distributed")
    expect(page.get_by_label("Job name")).to_have_value(re.compile(rf"^{name}-"))
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_label("Nodes", exact=True)).to_have_value("2")
    expect(page.get_by_label("GPUs per node")).to_have_value("1")


def test_bob_sees_researchs_trainjob_and_may_change_nothing(page, trainer_dashboard):
    sign_in(page, trainer_dashboard, "bob")
    page.get_by_role("link", name="xgboost-mpi-bench").click()
    expect(page.get_by_role("heading", name="xgboost-mpi-bench")).to_be_visible()
    actions = page.get_by_role("group", name="Job actions")
    expect(actions).to_be_visible()
    for action in MUTATIONS:
        expect(actions.get_by_role("button", name=action)).to_have_count(0)
        expect(actions.get_by_role("link", name=action)).to_have_count(0)
    actions.get_by_text("Actions", exact=True).click()
    expect(actions.get_by_role("link", name="Export YAML")).to_be_visible()

"""Creating an MPIJob in the browser: through labels and roles, with the mouse and without."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.wizard_cluster import ClusterJobs, give_limit_range_a_gpu_default

NS = "team-nlp"


@pytest.fixture
def cluster(e2e_cluster):
    """team-nlp as the wizard asks an administrator to set it up (a GPU default on its
    LimitRange); jobs made by a test are deleted afterwards."""
    with e2e_cluster.api_client("admin") as api:
        restore = give_limit_range_a_gpu_default(api, NS)
        jobs = ClusterJobs(api)
        yield jobs
        jobs.cleanup()
        restore()


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:5]}"


def _configure(page, name: str, namespace: str = NS) -> None:
    page.get_by_label("Project").select_option(namespace)
    page.get_by_label("Job name").fill(name)
    page.get_by_label("Training image").fill("quay.io/opendatahub/horovod:0.28.1-pytorch2.1")
    page.get_by_label("Command").fill("horovodrun -np 2 python /workspace/train.py")


def test_alice_creates_a_two_worker_job(page, live_dashboard, cluster, screenshot):
    sign_in(page, live_dashboard, "alice")
    page.get_by_role("link", name="Create job").first.click()
    expect(page.get_by_role("heading", name="Job type")).to_be_visible()
    screenshot("wizard-step-1")

    page.get_by_role("button", name="Create an MPIJob").click()
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    name = _name("e2e-wizard")
    cluster.track(NS, name)
    _configure(page, name)
    screenshot("wizard-step-2")
    page.get_by_role("button", name="Next").click()

    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    page.get_by_label("Number of workers").fill("2")
    expect(page.get_by_text("2 workers x 1 CPU = 2 CPUs, 4Gi")).to_be_visible()
    page.get_by_text("Advanced options").click()
    expect(page.get_by_label("Slots per worker")).to_be_visible()
    screenshot("wizard-step-3")
    page.get_by_role("button", name="Next").click()

    expect(page.get_by_role("heading", name="Review")).to_be_visible()
    expect(page.get_by_text("2 Workers, each with 1 CPU, 2Gi")).to_be_visible()
    expect(page.get_by_role("region", name="YAML")).to_contain_text("kind: MPIJob")
    expect(page.get_by_role("region", name="Python SDK")).to_contain_text("TrainingClient")
    screenshot("wizard-step-4")
    page.get_by_role("button", name="Create job").click()

    expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=20_000)
    expect(page.get_by_text(f"The MPIJob “{name}” was created in {NS}")).to_be_visible()
    assert cluster.get(NS, name)["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    screenshot("wizard-created")


def test_an_invalid_name_is_explained_while_typing(page, live_dashboard, cluster, screenshot):
    sign_in(page, live_dashboard, "alice", next_path="/jobs/new/")
    page.get_by_role("button", name="Create an MPIJob").click()
    field = page.get_by_label("Job name")
    field.fill("Bad_Name")
    # the message is the field's accessible description (aria-describedby)
    expect(field).to_have_accessible_description(re.compile('Job name "Bad_Name" is not valid'))
    expect(field).to_have_attribute("aria-invalid", "true")
    screenshot("wizard-invalid-name")
    field.fill("good-name-" + uuid.uuid4().hex[:4])
    expect(field).not_to_have_accessible_description(re.compile("not valid"))
    expect(field).not_to_have_attribute("aria-invalid", "true")


def test_too_many_gpus_then_the_suggested_fix(page, live_dashboard, cluster, screenshot):
    sign_in(page, live_dashboard, "alice", next_path="/jobs/new/")
    page.get_by_role("button", name="Create an MPIJob").click()
    name = _name("e2e-fix")
    # team-cv's jobs hold 38 of its 56 GPUs (vit-huge-pretrain's waiting Workers hold 24)
    cluster.track("team-cv", name)
    _configure(page, name, "team-cv")
    page.get_by_label("Command").fill("horovodrun -np 20 python /workspace/train.py")
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    page.get_by_label("Number of workers").fill("5")
    page.get_by_label("GPUs per worker").fill("4")
    check = page.get_by_role("region", name="Resource check")
    expect(check).to_contain_text("Requested 20 GPUs but only 18 available under the "
                                  "team-cv quota (38/56 in use)")
    expect(check.get_by_role("table", name="Quota use")).to_contain_text("GPUs")
    screenshot("wizard-quota-check")
    check.get_by_role("button", name="Reduce workers to 4").click()
    expect(page.get_by_label("Number of workers")).to_have_value("4")
    # the quota holds it now; whether the nodes have room for all four Workers right now
    # depends on the other tests' jobs, and is said either way
    check = page.get_by_role("region", name="Resource check")
    expect(check).not_to_contain_text("under the team-cv quota")
    expect(check).to_contain_text(re.compile("Fits|Right now"))
    expect(page.get_by_label("Command", exact=True)).to_have_count(0)  # on another step
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Review")).to_be_visible()
    expect(page.get_by_text("horovodrun -np 16 python /workspace/train.py")).to_be_visible()
    page.get_by_role("button", name="Create job").click()
    expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=20_000)


def _tab_to(page, target, limit: int = 80) -> None:
    """Press Tab until `target` (a locator by role, label or text) has the focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if target.evaluate("el => el === document.activeElement"):
            return
    raise AssertionError(f"Tab never reached {target}")


def test_the_wizard_works_from_the_keyboard_alone(page, live_dashboard, cluster, screenshot):
    sign_in(page, live_dashboard, "alice", next_path="/jobs/new/")
    name = _name("e2e-keys")
    cluster.track("team-cv", name)
    _tab_to(page, page.get_by_role("button", name="Create an MPIJob"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    # the first of alice's projects is preselected
    expect(page.get_by_label("Project")).to_have_value("team-cv")
    _tab_to(page, page.get_by_label("Job name"))
    page.keyboard.type(name)
    _tab_to(page, page.get_by_label("Training image"))
    page.keyboard.type("quay.io/opendatahub/horovod:0.28.1-pytorch2.1")
    _tab_to(page, page.get_by_label("Command"))
    page.keyboard.type("horovodrun -np 1 python /workspace/train.py")
    _tab_to(page, page.get_by_role("button", name="Next"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    launcher_cpus = page.get_by_label("Launcher CPUs")
    expect(launcher_cpus).to_be_hidden()  # among the advanced options, closed
    _tab_to(page, page.get_by_text("Advanced options"))
    page.keyboard.press("Space")
    expect(launcher_cpus).to_be_visible()
    _tab_to(page, launcher_cpus)
    _tab_to(page, page.get_by_role("button", name="Next"))
    screenshot("wizard-keyboard-resources")
    page.keyboard.press("Space")
    expect(page.get_by_role("heading", name="Review")).to_be_visible()
    _tab_to(page, page.get_by_role("button", name="Create job"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=20_000)


MISSPELT = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: {name}
  namespace: team-cv
spec:
  runPolicy:
    cleanPodPolice: All
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: quay.io/opendatahub/horovod:0.28.1-pytorch2.1
            command: [horovodrun, -np, "1", python, /workspace/train.py]
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: worker
            image: quay.io/opendatahub/horovod:0.28.1-pytorch2.1
"""


def test_an_imported_misspelt_field_is_named(page, live_dashboard, cluster, screenshot):
    sign_in(page, live_dashboard, "alice", next_path="/jobs/new/")
    page.get_by_label("Paste an MPIJob manifest (YAML)").fill(
        MISSPELT.format(name=_name("e2e-import")))
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_role("heading", name="Configuration")).to_be_visible()
    expect(page.get_by_role("status").filter(
        has_text="The cluster's MPIJob API has no field “spec.runPolicy.cleanPodPolice”"
    )).to_contain_text("import the manifest again")
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Review")).to_be_visible()
    warning = page.get_by_role("region", name="The cluster would drop 1 field of this manifest")
    expect(warning).to_contain_text("“spec.runPolicy.cleanPodPolice”")
    screenshot("wizard-import-unknown-field")
    # still a warning: the job can be created (without the field)
    expect(page.get_by_role("button", name="Create job")).to_be_enabled()


def test_a_newcomers_first_gpu_job_runs_in_the_fresh_demo(page, live_dashboard, cluster,
                                                          screenshot):
    """The demo leaves room: alice's 8-GPU job in team-nlp (2 Workers x 4 GPUs) runs at
    once, and says so live on its page."""
    sign_in(page, live_dashboard, "alice")
    page.get_by_role("link", name="Create job").first.click()
    page.get_by_role("button", name="Create an MPIJob").click()
    name = _name("e2e-first")
    cluster.track(NS, name)
    _configure(page, name)
    page.get_by_label("Command").fill("horovodrun -np 8 python /workspace/train.py")
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    page.get_by_label("Number of workers").fill("2")
    page.get_by_label("GPUs per worker").fill("4")
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Review")).to_be_visible()
    page.get_by_role("button", name="Create job").click()
    expect(page.get_by_role("heading", name=name)).to_be_visible(timeout=20_000)
    header = page.locator("#job-header-status")
    expect(header).to_contain_text("Running", timeout=60_000)
    expect(page.locator("[id^=job-story-]")).to_contain_text("Training (2/2 Workers running)")
    screenshot("first-gpu-job-running")


def test_a_job_that_can_never_start_is_told_so_with_a_fix_that_keeps_its_gpus(
        page, live_dashboard, cluster, screenshot):
    """32 GPUs: over team-nlp's quota of 24 in all, it can never start there; in team-cv, as
    2 Workers x 16 GPUs on 8-GPU nodes, the fix keeps the 32 GPUs as 4 Workers x 8."""
    sign_in(page, live_dashboard, "alice", next_path="/jobs/new/")
    page.get_by_role("button", name="Create an MPIJob").click()
    name = _name("e2e-never")
    cluster.track("team-cv", name)
    _configure(page, name)
    page.get_by_role("button", name="Next").click()
    expect(page.get_by_role("heading", name="Resources")).to_be_visible()
    page.get_by_label("Number of workers").fill("4")
    page.get_by_label("GPUs per worker").fill("8")
    check = page.get_by_role("region", name="Resource check")
    never = check.get_by_role("alert")
    expect(never).to_contain_text("This job can never start as it is.")
    expect(never).to_contain_text("This job can never fit the team-nlp quota of 24 GPUs: it "
                                  "asks for 32 GPUs.")
    # the fixes keep as many GPUs as the quota holds in all: 24
    expect(check.get_by_role("button", name="Reduce workers to 3")).to_be_visible()
    expect(check.get_by_role("button", name="Reduce GPUs per worker to 6")).to_be_visible()
    screenshot("wizard-never-fits-quota")

    page.get_by_role("button", name="Back").click()
    page.get_by_label("Project").select_option("team-cv")
    page.get_by_role("button", name="Next").click()
    page.get_by_label("Number of workers").fill("2")
    page.get_by_label("GPUs per worker").fill("16")
    never = page.get_by_role("region", name="Resource check").get_by_role("alert")
    expect(never).to_contain_text("This job can never start as it is.")
    expect(never).to_contain_text("No node can run a Worker with 16 GPUs: the largest GPU "
                                  "node has 8")
    screenshot("wizard-never-fits-node")
    page.get_by_role("region", name="Resource check").get_by_role(
        "button", name="Use 8 GPUs per worker and 4 workers").click()
    expect(page.get_by_label("Number of workers")).to_have_value("4")
    expect(page.get_by_label("GPUs per worker")).to_have_value("8")
    expect(page.get_by_role("region", name="Resource check")).not_to_contain_text("can never")
    expect(page.get_by_role("region", name="Resource check")).to_contain_text(
        "4 workers x 8 GPUs = 32 GPUs")

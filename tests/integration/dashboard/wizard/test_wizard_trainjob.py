"""A TrainJob through the wizard, as a browser without JavaScript would: the type step
offers it where the cluster serves Kubeflow Trainer, the Configuration step its runtimes
(the cluster's and the project's, with their framework), Resources asks for nodes in
upstream's words (MPI options only of an MPI runtime), Review shows its YAML and its
`TrainJob(...)` SDK code, and it is created through the one create path; each fault is a
sentence at its field saying what to do, with nothing typed lost."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import (
    NEW,
    _problems,
    create,
    draft,
    post_step,
    start,
    step_url,
    unique,
)
from training.models import AuditEvent

NS = "team-nlp"
MPI = "ClusterTrainingRuntime/mpi-distributed"
TORCH = "ClusterTrainingRuntime/torch-distributed"
IMAGE = "mpioperator/mpi-pi:openmpi"


@pytest.fixture(scope="module")
def demo_cluster(trainer_cluster):
    return trainer_cluster


def text(response) -> str:
    return html.unescape(response.content.decode())


def configure(client, key: str, name: str, runtime: str = MPI, **more):
    return post_step(client, key, "configuration", namespace=NS, runtime=runtime, name=name,
                     image=IMAGE, command="mpirun -n 2 /home/mpiuser/pi", **more)


def test_the_type_step_offers_a_trainjob_and_its_draft_records_the_kind(alice):
    page = text(alice.get(NEW))
    assert "TrainJob (Kubeflow Trainer)" in page
    assert 'name="start" value="trainjob"' in page
    key = start(alice, start="trainjob")
    assert draft(key).kind == "trainjob"
    config = alice.get(step_url(key, "configuration"))
    body = text(config)
    assert_valid(config.content.decode())
    # the cluster's runtimes, each with its framework, and the upstream runtime by default
    assert "mpi-distributed (mpi, the cluster's)" in body
    assert "torch-distributed (torch, the cluster's)" in body
    assert f'<option value="{MPI}" selected>' in config.content.decode()
    assert 'id="runtime-list"' in body


def test_a_trainjob_is_created_through_the_wizard_and_its_page_opens(alice, trainjobs):
    key = start(alice, start="trainjob")
    name = unique("wiz-tj")
    r = configure(alice, key, name)
    assert r.status_code == 302, _problems(r)
    page = alice.get(step_url(key, "resources"))
    body = text(page)
    assert_valid(page.content.decode())
    for label in ("Nodes", "Processes per node", "CPUs per node", "Memory per node",
                  "GPUs per node", "MPI implementation"):
        assert f">{label}<" in body, label
    for launcher_only in ("Launcher CPUs", "Launcher memory", "Clean-pod policy",
                          "Priority class", "Number of workers"):
        assert launcher_only not in body, launcher_only
    r = post_step(alice, key, "resources", workers="2", gpus_per_worker="1")
    assert r.status_code == 302, _problems(r)
    review = alice.get(step_url(key, "review"))
    body = text(review)
    assert "apiVersion: trainer.kubeflow.org/v1alpha1" in body
    assert "numNodes: 2" in body and "name: mpi-distributed" in body
    assert "job = TrainJob(" in body and "num_nodes=2" in body
    assert f"TrainJob {name}" in body.replace("<strong>", "").replace("</strong>", "")
    trainjobs.track(NS, name)
    r = create(alice, key)
    assert r.status_code == 302, _problems(r)
    assert r["Location"] == reverse("training-job-detail", args=[NS, "trainjob", name])
    job = trainjobs.get(NS, name)
    assert job["spec"]["runtimeRef"]["name"] == "mpi-distributed"
    assert job["spec"]["trainer"]["numNodes"] == 2
    assert job["metadata"]["annotations"]["opendatahub.io/username"] == "alice"
    event = AuditEvent.objects.get(name=name)
    assert (event.verb, event.outcome, event.kind) == ("create", "success", "TrainJob")
    detail = alice.get(r["Location"])
    assert detail.status_code == 200
    assert f"The TrainJob “{name}” was created in {NS}" in text(detail)


def test_a_runtime_that_does_not_exist_is_said_at_the_runtime(alice):
    key = start(alice, start="trainjob")
    name = unique("wiz-tj")
    r = configure(alice, key, name, runtime="ClusterTrainingRuntime/no-such-runtime")
    assert r.status_code == 200
    body = text(r)
    assert 'There is no runtime "no-such-runtime"' in body
    assert "mpi-distributed" in body and "ask your administrator to add it" in body
    assert draft(key).data["runtime"] == "ClusterTrainingRuntime/no-such-runtime"
    assert draft(key).data["name"] == name


def test_mpi_asked_of_a_torch_runtime_says_what_to_do(alice):
    key = start(alice, start="trainjob")
    r = configure(alice, key, unique("wiz-tj"), runtime=TORCH)
    assert r.status_code == 302, _problems(r)
    # a torch runtime: no MPI implementation asked
    assert "MPI implementation" not in text(alice.get(step_url(key, "resources")))
    r = post_step(alice, key, "resources", workers="1", mpi_implementation="OpenMPI")
    assert r.status_code == 200
    body = text(r)
    assert ('Runtime "torch-distributed" runs torch, not MPI, so it takes no MPI '
            "implementation") in body
    # the field is shown, so that it can be cleared
    assert 'name="mpi_implementation"' in r.content.decode()
    r = post_step(alice, key, "resources", mpi_implementation="")
    assert r.status_code == 302, _problems(r)


def test_zero_nodes_is_refused_with_the_fix(alice):
    key = start(alice, start="trainjob")
    configure(alice, key, unique("wiz-tj"))
    r = post_step(alice, key, "resources", workers="0", cpu_per_worker="3")
    assert r.status_code == 200
    assert "A TrainJob needs at least 1 node" in text(r)
    assert draft(key).data["workers"] == "0"
    assert draft(key).data["cpu_per_worker"] == "3"


def test_switching_kinds_keeps_what_both_ask(alice):
    key = start(alice)
    post_step(alice, key, "configuration", namespace=NS, name="kept-name", image=IMAGE,
              action="back")
    r = alice.post(step_url(key, "type"), {"start": "trainjob"})
    assert r.status_code == 302
    d = draft(key)
    assert d.kind == "trainjob"
    assert (d.data["name"], d.data["image"], d.data["runtime"]) == ("kept-name", IMAGE, MPI)
    assert d.data["launcher_cpu"] == "" and d.data["mpi_implementation"] == ""


@pytest.fixture
def team_cv_runtime(demo_cluster):
    """A TrainingRuntime of team-cv's own (the upstream torch runtime's template)."""
    import yaml
    from kubernetes import client as k8s

    from tests.trainer_scenario import SCENARIOS
    upstream = yaml.safe_load((SCENARIOS / "trainer-runtimes.yaml").read_text())
    torch = next(r for r in upstream if r["metadata"]["name"] == "torch-distributed")
    body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
            "metadata": {"name": "cv-torch", "namespace": "team-cv",
                         "labels": {"trainer.kubeflow.org/framework": "torch"}},
            "spec": torch["spec"]}
    with demo_cluster.api_client("admin") as api:
        custom = k8s.CustomObjectsApi(api)
        custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", "team-cv",
                                               "trainingruntimes", body)
        yield "TrainingRuntime/cv-torch"
        custom.delete_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", "team-cv",
                                               "trainingruntimes", "cv-torch")


def test_the_runtime_select_follows_the_project_chosen(alice, team_cv_runtime):
    """Choosing another project on the Configuration step (htmx asks the project field's
    check) swaps in that project's runtimes: its own TrainingRuntimes beside the cluster's."""
    key = start(alice, start="trainjob")
    page = alice.get(step_url(key, "configuration")).content.decode()
    select = page[page.index('<div id="runtime-choice"'):]
    assert 'name="runtime"' in select and 'hx-post="' in select

    def choose(project: str) -> str:
        r = alice.post(reverse("training-job-new-validate", args=[key]),
                       {"step": "configuration", "namespace": project, "runtime": MPI},
                       HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="namespace")
        assert r.status_code == 200
        return html.unescape(r.content.decode())

    body = choose(NS)
    assert '<div id="runtime-choice" hx-swap-oob="true">' in body
    assert "mpi-distributed (mpi, the cluster's)" in body
    assert team_cv_runtime not in body
    body = choose("team-cv")
    assert '<div id="runtime-choice" hx-swap-oob="true">' in body
    assert f'<option value="{team_cv_runtime}">cv-torch (torch, this project\'s)</option>' \
        in body
    assert f'<option value="{MPI}" selected>' in body  # what was chosen stays chosen
    assert "This project's TrainingRuntime" in body  # the list beside it
    assert draft(key).data["namespace"] == "team-cv"
    # a reload shows the same
    assert team_cv_runtime in alice.get(step_url(key, "configuration")).content.decode()
    assert team_cv_runtime not in choose(NS)
    # another field's check leaves the runtimes alone
    r = alice.post(reverse("training-job-new-validate", args=[key]),
                   {"step": "configuration", "namespace": NS, "name": "x"},
                   HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="name")
    assert "runtime-choice" not in r.content.decode()

def test_a_node_over_the_project_s_limitrange_is_refused_as_the_create_path_says(alice,
                                                                                 demo_cluster):
    # team-cv's LimitRange allows at most 64 CPUs per container: a node of 96 is refused,
    # at its field, in the words of the one create path (which the SDK and CLI use too)
    from odh.training import TrainJob, creating
    from odh.training.sdk import TrainingClient

    name = unique("wiz-tj-lr")
    with TrainingClient(kubeconfig=str(demo_cluster.kubeconfig("alice"))) as sdk:
        job = TrainJob(name, runtime="torch-distributed", num_nodes=1, namespace="team-cv",
                       image=IMAGE, resources_per_node={"cpu": "96", "memory": "8Gi"},
                       client=sdk)
        with pytest.raises(creating.CreateRefused) as refused:
            creating.check(sdk.cluster, job.spec)
    assert refused.value.reason == creating.INVALID
    said = [f.message for f in refused.value.findings if f.field == "cpu_per_worker"]
    # in the wizard's own words for a TrainJob's field
    assert said == ["CPUs per node (96) is above the maximum of 64 per container in team-cv "
                    "(LimitRange container-defaults): use at most 64."]
    key = start(alice, start="trainjob")
    r = post_step(alice, key, "configuration", namespace="team-cv", runtime=TORCH, name=name,
                  image=IMAGE, command="torchrun /workspace/train.py")
    assert r.status_code == 302, _problems(r)
    r = post_step(alice, key, "resources", workers="1", cpu_per_worker="96",
                  memory_per_worker="8Gi")
    assert r.status_code == 200
    assert said[0] in text(r)
    assert draft(key).data["cpu_per_worker"] == "96"

"""A TrainJob copied through the wizard: Clone opens the wizard with its spec, Retry
starts it again under a new name, a saved template and a pasted manifest open as TrainJob
drafts, and two TrainJobs compare in upstream's words (runtime, nodes, processes per
node)."""

from __future__ import annotations

import copy
import html
import re

import pytest
import yaml
from django.urls import reverse

from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import (
    NEW,
    _problems,
    create,
    draft,
    key_of,
    post_step,
    start,
    step_url,
    unique,
)
from training.models import AuditEvent, JobTemplate

NS = "team-nlp"
MPI = "ClusterTrainingRuntime/mpi-distributed"


def source(name: str, nodes: int = 2) -> dict:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": name, "namespace": NS,
                     "annotations": {"opendatahub.io/username": "alice",
                                     "simcluster.io/run-seconds": "3600"}},
        "spec": {"runtimeRef": {"name": "mpi-distributed"},
                 "trainer": {"image": "mpioperator/mpi-pi:openmpi",
                             "command": ["mpirun", "-n", "2", "/home/mpiuser/pi"],
                             "numNodes": nodes,
                             "resourcesPerNode": {"limits": {"cpu": "1", "memory": "2Gi"}}}}}


@pytest.fixture(scope="module")
def demo_cluster(trainer_cluster):
    return trainer_cluster


@pytest.fixture
def made(trainjobs):
    """Two TrainJobs of alice's in team-nlp (2 and 3 nodes), created as the admin."""
    names = [unique("tj-src"), unique("tj-src")]
    for name, nodes in zip(names, (2, 3), strict=True):
        trainjobs.custom.create_namespaced_custom_object(
            "trainer.kubeflow.org", "v1alpha1", NS, "trainjobs", source(name, nodes))
        trainjobs.track(NS, name)
    return names


def _comparable(job: dict) -> dict:
    spec = copy.deepcopy(job["spec"])
    spec.pop("suspend", None)
    return spec


def test_cloning_a_trainjob_opens_the_wizard_with_its_spec(alice, made, trainjobs):
    name = made[0]
    r = alice.get(NEW, {"clone": f"{NS}/trainjob/{name}"})
    assert r.status_code == 302
    key = key_of(r)
    d = draft(key)
    assert (d.kind, d.source) == ("trainjob", f"clone:{NS}/trainjob/{name}")
    assert (d.data["runtime"], d.data["workers"]) == (MPI, "2")
    assert d.data["name"].startswith(f"{name}-")
    page = alice.get(step_url(key, "resources"))
    assert ">Nodes<" in html.unescape(page.content.decode())
    assert post_step(alice, key, "configuration").status_code == 302
    r = post_step(alice, key, "resources")
    assert r.status_code == 302, _problems(r)
    trainjobs.track(NS, d.data["name"])
    r = create(alice, key)
    assert r.status_code == 302, _problems(r)
    assert r["Location"] == reverse("training-job-detail",
                                    args=[NS, "trainjob", d.data["name"]])
    assert _comparable(trainjobs.get(NS, d.data["name"])) == \
        _comparable(trainjobs.get(NS, name))
    assert AuditEvent.objects.get(name=d.data["name"]).verb == "clone"
    detail = alice.get(reverse("training-job-detail", args=[NS, "trainjob", name]))
    assert f"clone={NS}/trainjob/{name}" in detail.content.decode()


def test_retrying_a_trainjob_starts_it_again_under_a_new_name(alice, made, trainjobs):
    name = made[0]
    url = reverse("training-job-retry", args=[NS, "trainjob", name])
    page = alice.get(url)
    body = page.content.decode()
    assert page.status_code == 200, body[:2000]
    assert_valid(body)
    text = html.unescape(body)
    assert "A new TrainJob starts with exactly the same configuration" in text
    assert "2 nodes, each with" in text and "mpi-distributed" in text
    new_name = re.search(r'name="new_name" value="([^"]+)"', body).group(1)
    trainjobs.track(NS, new_name)
    r = alice.post(url, {"new_name": new_name, "suspend_original": ""})
    assert r.status_code == 302, html.unescape(r.content.decode())[:3000]
    assert r["Location"] == reverse("training-job-detail", args=[NS, "trainjob", new_name])
    assert _comparable(trainjobs.get(NS, new_name)) == _comparable(trainjobs.get(NS, name))
    assert AuditEvent.objects.get(name=new_name).detail == f"retry_of={name}"


def test_a_trainjob_manifest_is_imported_into_the_wizard(alice):
    manifest = source("imported-tj", 3)
    manifest["spec"]["trainer"]["numProcPerNode"] = 2
    r = alice.post(NEW, {"import": "1", "manifest": yaml.safe_dump(manifest)})
    assert r.status_code == 302, html.unescape(r.content.decode())[:2000]
    d = draft(key_of(r))
    assert (d.kind, d.source) == ("trainjob", "import")
    assert (d.data["name"], d.data["workers"], d.data["slots_per_worker"]) == \
        ("imported-tj", "3", "2")
    review = html.unescape(alice.get(step_url(d.key, "review")).content.decode())
    assert "numNodes: 3" in review, review[-6000:]
    assert "TrainJob" in review and "slots_per_worker=2" in review, review[-3000:]


def test_a_trainjob_saved_as_a_template_starts_a_trainjob(alice):
    key = start(alice, start="trainjob")
    post_step(alice, key, "configuration", namespace=NS, runtime=MPI, name=unique("tj"),
              image="mpioperator/mpi-pi:openmpi", command="mpirun /home/mpiuser/pi")
    post_step(alice, key, "resources", workers="4")
    r = alice.post(reverse("training-job-new-save-template", args=[key]),
                   {"template_name": "Four MPI nodes", "share": "personal"})
    assert r.status_code == 302
    template = JobTemplate.objects.get(name="Four MPI nodes")
    assert template.spec["kind"] == "TrainJob"
    new_key = start(alice, saved=str(template.pk))
    d = draft(new_key)
    assert (d.kind, d.data["workers"], d.data["runtime"], d.data["name"]) == \
        ("trainjob", "4", MPI, "")


def test_two_trainjobs_compare_in_upstreams_words(alice, made):
    r = alice.get(reverse("training-job-compare"),
                  {"job": [f"{NS}/trainjob/{made[0]}", f"{NS}/trainjob/{made[1]}"]})
    body = r.content.decode()
    assert r.status_code == 200, body[:2000]
    assert_valid(body)
    text = html.unescape(body)
    for label in ("Runtime", "Nodes", "Processes per node", "CPUs per node"):
        assert label in text, label
    assert "Launcher CPUs" not in text and "Slots per worker" not in text
    assert "mpi-distributed (ClusterTrainingRuntime)" in text

"""One way to create (odh/training/creating.py): the same refusal, with the same fixes, from
the wizard, the SDK and the CLI. Each case is refused by `creating.check` as the person
(the reference), then tried the three ways; each must say the reference's words."""

from __future__ import annotations

import html
import os
import subprocess
import sys
from pathlib import Path

import pytest

from odh.training import creating
from odh.training.jobs import MPIJob
from odh.training.sdk import TrainingClient
from tests.integration.dashboard.wizard.wizard_flow import create, post_step, start, unique

IMAGE = "quay.io/opendatahub/horovod:0.28.1-pytorch2.1"
BIN = Path(sys.executable).parent

# (project, Workers, per-Worker resources as the wizard's fields, the CLI's flags and the
# SDK's worker_resources, the reason), each refused before anything is sent
CASES = {
    "more than the quota holds": ("team-nlp", 4, {"gpus_per_worker": 8},
                                  "--gpu-per-worker 8", {"gpus": 8}, creating.NEVER_FITS),
    "outside the LimitRange": ("team-cv", 1, {"cpu_per_worker": "96"},
                               "--cpu-per-worker 96", {"cpu": "96"}, creating.INVALID),
    "a name taken": ("team-cv", 1, {}, "", {}, creating.INVALID),
}


def _said(refused: creating.CreateRefused) -> list[str]:
    """What every way must say: the problems (or the fields' findings) and the fixes."""
    if refused.reason == creating.NEVER_FITS:
        return refused.problems + [fix.label for fix in refused.checked.fit.fixes]
    return [finding.message for finding in refused.findings]


@pytest.fixture
def taken(cluster_jobs):
    """A job that exists in team-cv: its name is taken."""
    name = unique("taken")
    cluster_jobs.custom.create_namespaced_custom_object(
        "kubeflow.org", "v2beta1", "team-cv", "mpijobs", {
            "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": name},
            "spec": {"mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "launcher", "image": IMAGE}]}}},
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "worker", "image": IMAGE}]}}}}}})
    cluster_jobs.track("team-cv", name)
    return name


@pytest.mark.parametrize("case", list(CASES))
def test_the_wizard_the_sdk_and_the_cli_refuse_alike(case, alice, demo_cluster, cluster_jobs,
                                                    taken, gpu_default):
    project, workers, fields, flags, worker_resources, reason = CASES[case]
    name = taken if case == "a name taken" else unique("one-way")
    command = f"horovodrun -np {workers} python /workspace/train.py"
    kubeconfig = str(demo_cluster.kubeconfig("alice"))
    with TrainingClient(kubeconfig=kubeconfig) as sdk:
        job = MPIJob(name=name, namespace=project, workers=workers, image=IMAGE,
                     command=command.split(), worker_resources=worker_resources, client=sdk)
        # the reference: the one function every create goes through
        with pytest.raises(creating.CreateRefused) as refused:
            creating.check(sdk.cluster, job.spec)
        assert refused.value.reason == reason, refused.value
        expected = _said(refused.value)
        assert expected and all(expected)

        # the SDK
        with pytest.raises(Exception) as raised:
            job.create()
        sdk_words = str(raised.value) + " " + " ".join(getattr(raised.value, "suggestions",
                                                               []) or [])
        sdk_words += " " + " ".join(str(p) for p in getattr(raised.value, "problems", []) or [])

    # the CLI
    env = dict(os.environ, KUBECONFIG=kubeconfig, PATH=f"{BIN}:{os.environ.get('PATH', '')}")
    cli = subprocess.run(
        ["bash", "-c", f"odh training create mpijob {name} -n {project} --image {IMAGE} "
                       f"--workers {workers} {flags} --command '{command}'"],
        env=env, capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2, cli.stderr

    # the wizard: the step that shows the field refuses it there, else the create does
    key = start(alice)
    page = post_step(alice, key, "configuration", namespace=project, name=name, image=IMAGE,
                     command=command)
    if page.status_code == 302:
        page = post_step(alice, key, "resources", workers=str(workers),
                         **{k: str(v) for k, v in fields.items()})
    if page.status_code == 302:
        page = create(alice, key)
    wizard_words = html.unescape(page.content.decode())

    for words in expected:
        assert words in sdk_words, (words, sdk_words)
        assert words in cli.stderr, (words, cli.stderr)
        assert words in wizard_words, words
    if name != taken:
        assert name not in cluster_jobs.names(project)  # nothing was created, any way

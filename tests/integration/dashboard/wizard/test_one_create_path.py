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

from odh.training import creating, errors
from odh.training.jobs import MPIJob
from odh.training.sdk import TrainingClient
from odh.training.spec import build_manifest
from tests.integration.dashboard.wizard.wizard_flow import create, post_step, start, unique

IMAGE = "quay.io/opendatahub/horovod:0.28.1-pytorch2.1"
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[4]

# (project, Workers, per-Worker resources as the wizard's fields, the CLI's flags and the
# SDK's worker_resources, the reason), each refused before anything is sent
CASES = {
    "more than the quota holds": ("team-nlp", 4, {"gpus_per_worker": 8},
                                  "--gpu-per-worker 8", {"gpus": 8}, creating.NEVER_FITS),
    "outside the LimitRange": ("team-cv", 1, {"cpu_per_worker": "96"},
                               "--cpu-per-worker 96", {"cpu": "96"}, creating.INVALID),
    "a name taken": ("team-cv", 1, {}, "", {}, creating.INVALID),
}


def _cli_create(kubeconfig: str, name: str, project: str, workers: int, flags: str,
                command: str) -> subprocess.CompletedProcess:
    """`odh training create mpijob ...` as alice (this checkout's code, not another the
    virtualenv's install points at), refused: exit code 2."""
    env = dict(os.environ, KUBECONFIG=kubeconfig, PATH=f"{BIN}:{os.environ.get('PATH', '')}",
               PYTHONPATH=str(ROOT))
    cli = subprocess.run(
        ["bash", "-c", f"odh training create mpijob {name} -n {project} --image {IMAGE} "
                       f"--workers {workers} {flags} --command '{command}'"],
        env=env, capture_output=True, text=True, timeout=120)
    assert cli.returncode == 2, cli.stderr
    return cli


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
    cli = _cli_create(kubeconfig, name, project, workers, flags, command)

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


def test_a_full_count_of_jobs_is_refused_alike_in_plain_words(alice, demo_cluster,
                                                              cluster_jobs, tight_mpijob_quota):
    """A quota on the number of MPIJobs is full (finished jobs fill it): the wizard, the
    SDK and the CLI say that finished jobs count and to delete them or ask for a larger
    quota, not to wait for other jobs to finish, and not the cluster's raw refusal."""
    name = unique("count-full")
    command = "horovodrun -np 1 python /workspace/train.py"
    kubeconfig = str(demo_cluster.kubeconfig("alice"))
    with TrainingClient(kubeconfig=kubeconfig) as sdk:
        job = MPIJob(name=name, namespace="team-cv", workers=1, image=IMAGE,
                     command=command.split(), client=sdk)
        with pytest.raises(creating.CreateRefused) as refused:
            creating.check(sdk.cluster, job.spec, force=True)  # no force gets past it
        assert refused.value.reason == creating.COUNT_QUOTA_FULL
        expected = str(refused.value)
        assert "finished jobs count" in expected and "larger quota" in expected
        with pytest.raises(errors.ResourceQuotaExceeded) as raised:
            job.create(force=True)
        assert str(raised.value) == expected
        assert not any("force" in s for s in raised.value.suggestions)
        # the cluster's own refusal (a job created elsewhere meanwhile) says the same, its
        # words kept in details
        with pytest.raises(errors.CountQuotaExceeded) as by_cluster:
            sdk.cluster.create_job(job.spec.kind, "team-cv", build_manifest(job.spec))
        assert "finished jobs count" in by_cluster.value.message
        assert "exceeded quota" not in by_cluster.value.message
        assert "exceeded quota" in by_cluster.value.details

    cli = _cli_create(kubeconfig, name, "team-cv", 1, "", command)
    assert expected in cli.stderr
    assert "exceeded quota" not in cli.stderr and "--force" not in cli.stderr

    key = start(alice)
    post_step(alice, key, "configuration", namespace="team-cv", name=name, image=IMAGE,
              command=command)
    resources = html.unescape(post_step(alice, key, "resources", workers="1").content.decode())
    assert "Queue it in" not in resources  # a queued job is a job object too
    wizard_words = html.unescape(create(alice, key).content.decode())
    assert expected in wizard_words
    assert "until other jobs" not in wizard_words and "exceeded quota" not in wizard_words
    assert name not in cluster_jobs.names("team-cv")

"""Every diagnosis scenario, run in simcluster end to end (scenario.yaml: one job each,
failed, running or waiting at start-up), read back as alice through the SDK
(`TrainingClient.diagnose`, a failed `wait`) and the CLI (`odh-training describe`, `wait`).

Preemption has no simcluster reproduction (it takes Kueue or a scheduler's preemption,
which simcluster does not run yet): its rule is tested from captured objects
(tests/unit/test_diagnosis_failures.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from odh.training.diagnosis import Action, Culprit
from odh.training.errors import JobFailedError
from odh.training.sdk import TrainingClient
from tests import simcluster_process

ROOT = Path(__file__).resolve().parents[3]
SCENARIO = Path(__file__).with_name("scenario.yaml")

# job, project, scenario, headline (a regular expression), class
CASES = [
    ("oom", "team-b", "oom-killed",
     r"^Worker 1 ran out of memory and was killed \(exit code 137\)$", Culprit.CONFIGURATION),
    ("cuda-oom", "team-b", "cuda-out-of-memory",
     r"^Worker 1 ran out of GPU memory \(CUDA out of memory\)$", Culprit.CONFIGURATION),
    ("typo", "team-b", "command-not-found",
     r"^Launcher could not start its program: “pyhton” was not found \(exit code 127\)$",
     Culprit.CONFIGURATION),
    ("crash", "team-b", "segfault",
     r"^Worker 1 crashed with a segmentation fault \(exit code 139\)$", Culprit.CODE),
    ("plain-error", "team-b", "exit-code",
     r"^Launcher failed with exit code 1: RuntimeError: CUDA error: an illegal memory access",
     Culprit.CODE),
    ("blocked", "locked", "mpi-communication",
     r"^The Launcher could not reach Worker 0 over SSH \(connection timed out\)$",
     Culprit.CONFIGURATION),
    ("meshed", "team-b", "mpi-communication", r"^The Launcher's SSH connection to .* was reset$",
     Culprit.CONFIGURATION),
    ("evicted", "team-b", "evicted", r"^Worker 1 was evicted: the node ran low on memory$",
     Culprit.PLATFORM),
    ("lost", "team-b", "node-lost", r"^Worker 1's node \S+ stopped responding$",
     Culprit.PLATFORM),
    ("too-slow", "team-b", "deadline-exceeded",
     r"^The job ran longer than its deadline of 5m 0s and was stopped$", Culprit.CONFIGURATION),
    ("9lives", "team-b", "invalid-job", r"^The MPI Operator refused the job: ",
     Culprit.CONFIGURATION),
    ("hung", "team-b", "possible-hang",
     r"^Possible hang: no new log line for \d+m \d+s and the GPUs are idle$", Culprit.CODE),
    ("restarted", "team-b", "worker-restarting",
     r"^Worker 1 crashed and restarted \(retry 1 of 1\)$", Culprit.CODE),
    ("slow-gpus", "team-b", "low-gpu-utilization",
     r"^GPU utilization is 2\d% over the last 10m 0s$", Culprit.CODE),
    ("wants-gpus", "team-b", "waiting-for-capacity",
     r"^Waiting for GPUs: 4 GPUs needed, not enough free on any node$", Culprit.CAPACITY),
    ("never", "team-b", "never-fits",
     r"^This job can never start: each Worker asks for 12 GPUs and no node has that many$",
     Culprit.CONFIGURATION),
    ("pull-denied", "team-b", "image-pull",
     r"^The image quay.io/private/train:2.0 cannot be pulled: the registry refused access "
     r"\(unauthorized\)$", Culprit.CONFIGURATION),
    ("no-claim", "team-b", "volume",
     r"^The volume claim “squad-data” does not exist in team-b$", Culprit.CONFIGURATION),
    ("no-secret", "team-b", "volume",
     r"^The Secret “wandb-credentials” that (Worker 0|Launcher) needs does not exist in "
     r"team-b$", Culprit.CONFIGURATION),
    ("over-quota", "team-a", "quota",
     r"^Waiting for quota: the project uses \d+ of its 16 CPUs and this job needs \d+ more$",
     Culprit.CAPACITY),
    ("too-many-cpus", "locked", "admission-refused",
     r"^The project's LimitRange refuses the Workers: at most 64 CPUs per container, each "
     r"asks for 96 CPUs$", Culprit.CONFIGURATION),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("diagnosis") / "state",
                                   scenario=str(SCENARIO), speed=50, timeout=60)
    yield sim
    sim.stop()


@pytest.fixture(scope="module")
def training(cluster):
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        yield client


@pytest.fixture(scope="module")
def diagnoses(cluster, training):
    """Each case's diagnosis, read once (Prometheus asked as alice, as the SDK would)."""
    found = {}
    with training.prometheus(cluster.prometheus_url) as prometheus:
        for name, project, *_rest in CASES:
            found[name] = training.diagnose(name, project, prometheus=prometheus)
    return found


@pytest.fixture(scope="module")
def cli(cluster, tmp_path_factory):
    home = tmp_path_factory.mktemp("cli-home")

    def run(*args: str, module: bool = True) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=str(cluster.kubeconfig("alice")), HOME=str(home),
                   PYTHONPATH=str(ROOT), ODH_PROMETHEUS_URL=cluster.prometheus_url)
        prefix = ["-m", "odh.training.cli"] if module else []
        return subprocess.run([sys.executable, *prefix, *args], env=env,
                              capture_output=True, text=True, timeout=120)
    return run


@pytest.mark.parametrize(("name", "project", "scenario", "headline", "culprit"), CASES,
                         ids=[case[0] for case in CASES])
def test_the_sdk_reads_each_scenarios_diagnosis(diagnoses, name, project, scenario, headline,
                                                culprit):
    found = diagnoses[name]
    assert found is not None, f"{name}: no diagnosis"
    assert (found.scenario, found.culprit) == (scenario, culprit), found.text()
    assert re.search(headline, found.headline), found.headline
    assert found.evidence, found.text()
    # at least one working suggestion, and the guide's page about it
    assert found.suggestions and found.suggestions[-1].action == Action.GUIDE
    assert found.suggestions[-1].guide == scenario


def test_fixes_fit_and_name_what_they_change(diagnoses):
    oom = diagnoses["oom"].fixes[0]
    assert oom.changes == {"memory_per_worker": "64Gi"}
    typo = diagnoses["typo"].fixes[0]
    assert typo.changes["command"][3] == "python"
    never = diagnoses["never"].fixes[0]
    assert never.changes["gpus_per_worker"] <= 8
    assert never.changes["workers"] * never.changes["gpus_per_worker"] >= 24
    assert diagnoses["meshed"].fixes[0].changes == {"disable_sidecar_injection": True}
    assert any(f.focus == "image" for f in diagnoses["pull-denied"].fixes)


def test_the_evidence_quotes_what_it_rests_on(diagnoses):
    assert any("Tried to allocate" in line for line in diagnoses["cuda-oom"].log_lines)
    assert any("deny-all-ingress" in e.text for e in diagnoses["blocked"].evidence)
    assert any("Istio sidecar" in e.text for e in diagnoses["meshed"].evidence)
    assert any("The project team-b has no image pull secret." == e.text
               for e in diagnoses["pull-denied"].evidence)
    assert any("Volume claims in team-b: datasets" == e.text
               for e in diagnoses["no-claim"].evidence)
    waiting = [e.text for e in diagnoses["wants-gpus"].evidence]
    assert any(re.fullmatch(r"big-runner holds 8 GPUs, about .* left", t) for t in waiting)
    assert any(t.startswith("Estimated start: in about") for t in waiting)


def test_a_healthy_running_job_has_no_diagnosis(training):
    assert training.diagnose("quota-holder", "team-a") is None


def test_a_failed_wait_raises_with_the_diagnosis(training):
    with pytest.raises(JobFailedError) as failed:
        training.wait("cuda-oom", "team-b", timeout=30)
    error = failed.value
    assert error.message == "Worker 1 ran out of GPU memory (CUDA out of memory)"
    assert error.culprit == "configuration"
    assert error.suggestions[0].startswith("Clone with --batch-size 32")
    assert any("CUDA out of memory" in line for line in error.logs)
    assert error.status.phase == "Failed"
    assert error.summary.status == "Failed"


def test_describe_prints_the_same_diagnosis_for_every_scenario(cli, diagnoses):
    """One run of the command for all the jobs (`describe` takes several names is not a
    thing: a shell loop is what a person would write, and one process per job is what
    costs): each job's Diagnosis section says what the SDK said."""
    script = "; ".join(f"odh.training.cli.main(['describe', {name!r}, '-n', {project!r}])"
                       for name, project, *_rest in CASES)
    shown = cli("-c", f"import odh.training.cli; {script}", module=False)
    assert shown.returncode == 0, shown.stderr
    sections = re.split(r"^ *Name: ", shown.stdout, flags=re.M)[1:]
    assert len(sections) == len(CASES)

    def words(headline: str) -> str:  # a silence grows, a GPU's use moves, between reads
        return re.sub(r"\d+", "N", headline)
    for (name, *_rest), text in zip(CASES, sections, strict=True):
        assert "Diagnosis:" in text, name
        lines = text.split("Diagnosis:", 1)[1].splitlines()
        assert words(lines[1].strip()) == words(diagnoses[name].headline), name
        assert f"Cause: {diagnoses[name].culprit_title}" in text, name
        assert "What to do:" in text, name


def test_wait_on_a_failed_job_says_why_and_what_to_do(cli):
    waited = cli("wait", "oom", "-n", "team-b", "--timeout", "30")
    assert waited.returncode == 1
    assert waited.stderr.startswith(
        "error: Worker 1 ran out of memory and was killed (exit code 137)\n")
    assert "Cause: Your configuration" in waited.stderr
    assert "Clone with 64Gi of memory per Worker (now 48Gi)" in waited.stderr
    assert "Traceback" not in waited.stderr

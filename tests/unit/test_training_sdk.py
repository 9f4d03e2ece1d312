"""The SDK without a cluster: the generated SDK code, and what TrainingClient checks itself."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client as k8s

import odh.training
from odh.training import MPIJobSpec, sdk
from odh.training.kinds import MPIJOB, PYTORCHJOB
from odh.training.manifests.templates import BUILTIN_TEMPLATES
from odh.training.sdk import ConfigurationError, InvalidSpec, TrainingClient, sdk_code
from odh.training.spec import (
    EnvVar,
    PVCVolume,
    Toleration,
    build_manifest,
    read_manifest,
)
from tests import reference

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = reference.EXAMPLES


def full_spec() -> MPIJobSpec:
    return MPIJobSpec(
        name="bert-finetune", namespace="team-nlp", image="quay.io/team-nlp/bert:1.0",
        command=["horovodrun", "-np", "8", "--hostfile", "/etc/mpi/hostfile", "python",
                 "/workspace/train.py", "--epochs", "3", "--message", 'say "hi" \\ there'],
        workers=4, cpu_per_worker="8", memory_per_worker="32Gi", gpus_per_worker=2,
        env=[EnvVar("NCCL_DEBUG", "INFO"),
             EnvVar("TOKEN", value_from={"secretKeyRef": {"name": "hf", "key": "token"}})],
        volumes=[PVCVolume("datasets", "/data", read_only=True),
                 PVCVolume("ckpt", "/ckpt", name="checkpoints", sub_path="bert")],
        node_selector={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        tolerations=[Toleration("nvidia.com/gpu", "Exists", effect="NoSchedule")],
        priority_class="high", queue_name="team-nlp-queue", ttl_seconds_after_finished=3600,
        backoff_limit=0, labels={"team": "nlp"}, annotations={"note": "üñíçødé ✓"})


class Recorder:
    """Stands in for TrainingClient inside generated programs."""

    created: list[MPIJobSpec] = []

    def create_mpijob(self, spec: MPIJobSpec, dry_run: bool = False) -> dict:
        Recorder.created.append(spec)
        return {"metadata": {"name": spec.name, "namespace": spec.namespace}}


def run_generated(code: str, monkeypatch) -> MPIJobSpec:
    import odh.training.jobs

    Recorder.created = []
    monkeypatch.setattr(sdk, "TrainingClient", Recorder)
    monkeypatch.setattr(odh.training.jobs, "TrainingClient", Recorder)  # odh.training's
    exec(compile(code, "<sdk_code>", "exec"), {"__name__": "__main__"})  # noqa: S102
    [spec] = Recorder.created
    return spec


def test_generated_code_lists_only_what_differs_from_the_defaults():
    code = sdk_code(MPIJobSpec(name="pi", namespace="team-nlp", image="mpi/pi:1",
                               command=["mpirun", "/pi"], workers=2))
    assert code == '''"""Create the MPIJob team-nlp/pi with the training SDK."""

from odh.training import MPIJobSpec, TrainingClient

spec = MPIJobSpec(
    name="pi",
    namespace="team-nlp",
    image="mpi/pi:1",
    command=["mpirun", "/pi"],
    workers=2,
)

job = TrainingClient().create_mpijob(spec)
print("Created MPIJob", job["metadata"]["namespace"] + "/" + job["metadata"]["name"])
'''


def test_generated_code_recreates_a_spec_with_every_kind_of_setting(monkeypatch, capsys):
    spec = full_spec()
    code = sdk_code(spec)
    assert "from odh.training import EnvVar, MPIJobSpec, PVCVolume, Toleration, TrainingClient" \
        in code
    assert all(len(line) <= 99 for line in code.splitlines())
    assert 'PVCVolume(claim_name="datasets", mount_path="/data", read_only=True)' in code
    again = run_generated(code, monkeypatch)
    assert again == spec
    assert build_manifest(again) == build_manifest(spec)
    assert capsys.readouterr().out == "Created MPIJob team-nlp/bert-finetune\n"


@pytest.mark.parametrize("template", BUILTIN_TEMPLATES, ids=lambda t: t.slug)
def test_generated_code_for_templates_builds_the_same_manifest(template, monkeypatch):
    spec = template.new_spec("demo", "team-nlp")
    again = run_generated(sdk_code(spec), monkeypatch)
    assert build_manifest(again) == build_manifest(spec)
    assert ("BASE = " in sdk_code(spec)) == (spec.base is not None)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("**/*.yaml")), ids=lambda p: p.name)
def test_generated_code_for_imported_examples_keeps_their_unknown_fields(path, monkeypatch):
    spec = read_manifest(yaml.safe_load(path.read_text()))
    spec.namespace = "team-nlp"
    again = run_generated(sdk_code(spec), monkeypatch)
    assert build_manifest(again) == build_manifest(spec)


def test_generated_code_passes_the_projects_linter(tmp_path):
    program = tmp_path / "create_job.py"
    program.write_text(sdk_code(full_spec()) + "\n# and a template with a base manifest\n")
    (tmp_path / "template_job.py").write_text(sdk_code(BUILTIN_TEMPLATES[3].new_spec("pi", "ns")))
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated",
                             "--line-length", "100", "--select", "E,F,W,I,B,UP", str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_odd_names_cannot_break_out_of_the_docstring(monkeypatch):
    spec = dataclasses.replace(full_spec(), name='x"""; import os; """', namespace="a\\b")
    code = sdk_code(spec)
    compile(code, "<sdk_code>", "exec")
    assert run_generated(code, monkeypatch).name == spec.name


# --- TrainingClient without a cluster ----------------------------------------------------------

def unreachable_client() -> TrainingClient:
    configuration = k8s.Configuration()
    configuration.host = "https://127.0.0.1:9"
    return TrainingClient(k8s.ApiClient(configuration))


def test_the_package_exports_the_sdk_lazily():
    # the jobs' client: the sdk's, with the MPIJobs as MPIJob objects (get_mpijob...)
    from odh.training.jobs import spellings
    assert odh.training.TrainingClient is spellings.TrainingClient
    assert issubclass(spellings.TrainingClient, TrainingClient)
    assert odh.training.InvalidSpec is InvalidSpec
    with pytest.raises(AttributeError):
        _ = odh.training.NoSuchThing


def test_an_invalid_spec_is_refused_before_anything_is_sent():
    with unreachable_client() as training, pytest.raises(InvalidSpec) as info:
        training.create_mpijob(MPIJobSpec(name="Bad_Name", namespace="team-nlp", image="a:1",
                                          command=["mpirun"]))
    assert [e.field for e in info.value.errors] == ["name"]
    assert str(info.value).startswith('name: Job name "Bad_Name" is not valid')


def test_kinds_by_slug_or_name():
    assert sdk._kind("mpijob") is MPIJOB and sdk._kind("PyTorchJob") is PYTORCHJOB
    assert sdk._kind(MPIJOB) is MPIJOB
    with pytest.raises(ValueError, match='Unknown job kind "JaxJob": use one of mpijob'):
        sdk._kind("JaxJob")


def test_an_unreachable_cluster_is_a_cluster_error():
    with unreachable_client() as training, pytest.raises(
            odh.training.errors.ClusterUnavailable):
        training.get_job("x", "team-nlp")


def test_a_missing_kubeconfig_is_a_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError, match="The kubeconfig could not be used"):
        TrainingClient(kubeconfig=str(tmp_path / "nope"))


def test_no_kubeconfig_and_no_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigurationError, match='log in with "oc login"'):
        TrainingClient()


def test_the_kubeconfig_contexts_namespace_is_the_default(tmp_path):
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "alice",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "alice", "user": {"token": "t"}}],
        "contexts": [{"name": "alice", "context": {"cluster": "c", "user": "alice",
                                                   "namespace": "team-nlp"}},
                     {"name": "other", "context": {"cluster": "c", "user": "alice",
                                                   "namespace": "team-cv"}}]}))
    assert TrainingClient(kubeconfig=str(kubeconfig)).default_namespace == "team-nlp"
    assert TrainingClient(kubeconfig=str(kubeconfig), context="other").default_namespace == \
        "team-cv"
    with pytest.raises(ConfigurationError):
        TrainingClient(kubeconfig=str(kubeconfig), context="missing")

"""Built-in job templates: valid specs, realistic images and commands, translatable text."""

from __future__ import annotations

import pytest

from odh.training.checks.images import parse_image
from odh.training.i18n import LazyText, set_translator
from odh.training.manifests.templates import BUILTIN_TEMPLATES, JobTemplate, template_by_slug
from odh.training.spec import build_manifest, read_manifest
from odh.training.validation import validate_spec


def test_the_four_frameworks_the_issue_names():
    assert [t.title for t in BUILTIN_TEMPLATES] == [
        "Horovod + PyTorch", "Horovod + TensorFlow", "DeepSpeed (MPI backend)", "Intel MPI"]
    assert len({t.slug for t in BUILTIN_TEMPLATES}) == 4


@pytest.mark.parametrize("template", BUILTIN_TEMPLATES, ids=lambda t: t.slug)
def test_a_template_is_a_valid_job_once_named(template):
    assert template.spec.name == "" and template.spec.namespace == ""
    spec = template.new_spec("demo", "team-nlp")
    assert validate_spec(spec) == []


@pytest.mark.parametrize("template", BUILTIN_TEMPLATES, ids=lambda t: t.slug)
def test_a_template_pins_its_image_and_builds_a_manifest_that_reads_back(template):
    assert parse_image(template.spec.image).tag
    spec = template.new_spec("demo", "team-nlp")
    manifest = build_manifest(spec)
    assert manifest["metadata"] == {"name": "demo", "namespace": "team-nlp"}
    assert read_manifest(manifest) == spec


def test_new_spec_is_a_fresh_copy():
    template = template_by_slug("intel-mpi")
    assert template is not None
    first = template.new_spec("a", "team-nlp")
    first.env.append(first.env[0])
    first.base["spec"]["sshAuthMountPath"] = "/changed"
    second = template.new_spec("b", "team-nlp")
    assert len(second.env) == 3 and second.base["spec"]["sshAuthMountPath"] != "/changed"
    assert template.spec.name == ""


def test_horovod_templates_use_horovodrun_with_the_operators_hostfile():
    for slug in ("horovod-pytorch", "horovod-tensorflow"):
        spec = template_by_slug(slug).spec
        assert spec.image == "docker.io/horovod/horovod:0.28.1"
        assert spec.command[:5] == ["horovodrun", "-np", "2", "--hostfile", "/etc/mpi/hostfile"]
        assert spec.workers * spec.effective_slots == 2


def test_deepspeed_uses_its_mpi_launcher_and_one_slot_per_gpu():
    spec = template_by_slug("deepspeed-mpi").spec
    assert spec.command[:3] == ["deepspeed", "--launcher", "openmpi"]
    assert spec.effective_slots == spec.gpus_per_worker == 4
    assert spec.base["spec"]["sshAuthMountPath"] == "/home/mpiuser/.ssh"


def test_intel_mpi_sets_intel_and_its_environment():
    spec = template_by_slug("intel-mpi").spec
    assert spec.mpi_implementation == "Intel"
    assert {e.name for e in spec.env} >= {"I_MPI_FABRICS", "FI_PROVIDER"}
    manifest = build_manifest(spec)
    worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert worker["command"] == ["/usr/sbin/sshd"]
    assert worker["securityContext"] == {"runAsUser": 1000}


def test_templates_start_the_launcher_when_workers_are_ready_and_skip_the_mesh():
    for template in BUILTIN_TEMPLATES:
        assert template.spec.launcher_creation_policy == "WaitForWorkersReady"
        assert template.spec.disable_sidecar_injection


def test_unknown_slug():
    assert template_by_slug("nope") is None


def test_descriptions_are_translated_when_shown():
    template = BUILTIN_TEMPLATES[0]
    assert isinstance(template.description, LazyText)
    english = str(template.description)
    try:
        set_translator(lambda message: message.upper())
        assert str(template.description) == english.upper()
        assert f"{template.description}" == english.upper()
    finally:
        set_translator(lambda message: message)
    assert template.description == english


def test_a_saved_template_can_be_a_plain_jobtemplate():
    saved = JobTemplate("mine", "Mine", "my own", BUILTIN_TEMPLATES[0].spec)
    assert saved.new_spec("x", "team-nlp").name == "x"

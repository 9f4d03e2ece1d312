"""The wizard's later fields in the spec and its manifests: the description (an annotation
of its own), the working directory (the containers' workingDir), and their checks."""

from __future__ import annotations

import pytest

from odh.training import MPIJobSpec
from odh.training.kinds import DESCRIPTION_ANNOTATION, TRAINJOB
from odh.training.spec import build_manifest, read_manifest
from odh.training.validation import validate_spec


def _spec(**fields) -> MPIJobSpec:
    return MPIJobSpec(name="bert", namespace="team-nlp", image="quay.io/x/y:1",
                      command=["python", "train.py"], **fields)


def _containers(manifest: dict) -> list[dict]:
    return [replica["template"]["spec"]["containers"][0]
            for replica in manifest["spec"]["mpiReplicaSpecs"].values()]


def test_the_description_is_an_annotation_and_reads_back():
    manifest = build_manifest(_spec(description="Fine-tune BERT on the\nlegal corpus",
                                    annotations={"team": "nlp"}))
    assert manifest["metadata"]["annotations"] == {
        "team": "nlp", DESCRIPTION_ANNOTATION: "Fine-tune BERT on the\nlegal corpus"}
    back = read_manifest(manifest)
    assert back.description == "Fine-tune BERT on the\nlegal corpus"
    assert back.annotations == {"team": "nlp"}  # the description is a field of its own


def test_an_edited_description_is_rewritten_and_a_cleared_one_removed():
    spec = read_manifest(build_manifest(_spec(description="first")))
    spec.description = "second"
    assert build_manifest(spec)["metadata"]["annotations"][DESCRIPTION_ANNOTATION] == "second"
    spec.description = ""
    assert DESCRIPTION_ANNOTATION not in build_manifest(spec)["metadata"].get("annotations", {})


def test_a_trainjob_carries_its_description_too():
    spec = TRAINJOB.new_spec(name="t", namespace="team-nlp", description="a TrainJob")
    manifest = build_manifest(spec)
    assert manifest["metadata"]["annotations"][DESCRIPTION_ANNOTATION] == "a TrainJob"
    assert read_manifest(manifest).description == "a TrainJob"


def test_the_working_directory_is_every_containers_and_reads_back():
    manifest = build_manifest(_spec(working_dir="/workspace/bert"))
    assert [c["workingDir"] for c in _containers(manifest)] == ["/workspace/bert"] * 2
    assert read_manifest(manifest).working_dir == "/workspace/bert"
    spec = read_manifest(manifest)
    spec.working_dir = ""
    assert all("workingDir" not in c for c in _containers(build_manifest(spec)))


@pytest.mark.parametrize(("fields", "field", "words"), [
    ({"working_dir": "workspace"}, "working_dir", 'start it with "/"'),
    ({"working_dir": "/a\nb"}, "working_dir", "one line"),
    ({"description": "x" * 2001}, "description", "shorten it to at most 2000"),
])
def test_a_wrong_value_is_refused_saying_how_to_fix_it(fields, field, words):
    found = [f for f in validate_spec(_spec(**fields)) if f.is_error]
    assert [f.field for f in found] == [field]
    assert words in found[0].message


def test_right_values_find_nothing():
    assert not [f for f in validate_spec(_spec(working_dir="/w", description="ok"))
                if f.is_error]


def test_a_person_who_may_not_list_secrets_types_the_pull_secret():
    from training.wizard.forms import ConfigurationForm

    form = ConfigurationForm(data={"image_pull_secret": "regcred"})
    form.offer_pull_secrets(None)
    field = form["image_pull_secret"]
    assert 'type="text"' in str(field) and 'value="regcred"' in str(field)
    assert "type it" in str(field.help_text)


def test_a_listed_pull_secret_is_a_choice_that_keeps_one_not_listed():
    from training.wizard.forms import ConfigurationForm

    form = ConfigurationForm(data={"image_pull_secret": "gone"})
    form.offer_pull_secrets(["regcred"])
    html = str(form["image_pull_secret"])
    assert "<select" in html and 'value="regcred"' in html
    assert "gone (not found in this project)" in html and 'value="gone" selected' in html


def test_a_variables_source_round_trips_through_the_select():
    from training.wizard.envsources import (
        KEPT,
        SourceKeys,
        source_choices,
        source_of,
        value_from_for,
    )

    secret = {"secretKeyRef": {"name": "hf", "key": "token"}}
    assert source_of(secret) == "secret/hf/token"
    assert value_from_for("secret/hf/token", None) == secret
    assert value_from_for("configmap/cfg/mode", None) == {
        "configMapKeyRef": {"name": "cfg", "key": "mode"}}
    field_ref = {"fieldRef": {"fieldPath": "metadata.name"}}
    assert source_of(field_ref) == KEPT and value_from_for(KEPT, field_ref) == field_ref
    assert value_from_for("", secret) is None  # back to the value typed
    choices = dict(source_choices(SourceKeys(secrets={}, configmaps=None), "secret/gone/k"))
    assert choices["secret/gone/k"] == "Secret gone: k (not found in this project)"


def test_whole_secrets_and_configmaps_read_back_and_others_are_kept():
    from odh.training.spec import EnvSource, SourceVolume

    spec = _spec(env_from=[EnvSource("secret", "hf")],
                 source_volumes=[SourceVolume("configmap", "cfg", "/etc/cfg")])
    manifest = build_manifest(spec)
    launcher = manifest["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    # what the wizard cannot show (a prefix, chosen items) is kept as it is
    launcher["containers"][0]["envFrom"].append({"prefix": "X_", "secretRef": {"name": "o"}})
    launcher["volumes"].append({"name": "keys", "secret": {"secretName": "k",
                                                           "items": [{"key": "a", "path": "a"}]}})
    back = read_manifest(manifest)
    assert back.env_from == spec.env_from and back.source_volumes == spec.source_volumes
    back.source_volumes = []
    back.env_from = [EnvSource("configmap", "other")]
    rebuilt = build_manifest(back)["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    assert rebuilt["containers"][0]["envFrom"] == [
        {"prefix": "X_", "secretRef": {"name": "o"}}, {"configMapRef": {"name": "other"}}]
    assert [v["name"] for v in rebuilt["volumes"]] == ["keys"]


def test_a_source_without_a_name_or_mounted_over_a_claim_is_refused():
    from odh.training.spec import EnvSource, PVCVolume, SourceVolume

    spec = _spec(env_from=[EnvSource("secret", "")],
                 volumes=[PVCVolume("data", "/data")],
                 source_volumes=[SourceVolume("configmap", "cfg", "/data/")])
    found = {f.field: f.message for f in validate_spec(spec) if f.is_error}
    assert found["env_from[0]"] == "Choose the Secret or ConfigMap, or remove this row."
    assert "Another volume is already mounted at /data/" in found[
        "source_volumes[0].mount_path"]


def test_node_affinity_is_read_from_lines_and_written_into_both_pod_templates():
    from odh.training.checks.affinity import node_affinity_text, read_node_affinity

    requirements, problems = read_node_affinity(
        "topology.kubernetes.io/zone in us-east-1a, us-east-1b\nnvidia.com/gpu.present Exists\n")
    assert problems == []
    manifest = build_manifest(_spec(node_selector={"pool": "gpu"}, node_affinity=requirements))
    for replica in manifest["spec"]["mpiReplicaSpecs"].values():
        pod = replica["template"]["spec"]
        assert pod["nodeSelector"] == {"pool": "gpu"}  # beside the node selector
        assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"] == [{"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In",
                 "values": ["us-east-1a", "us-east-1b"]},
                {"key": "nvidia.com/gpu.present", "operator": "Exists"}]}]
    back = read_manifest(manifest)
    assert node_affinity_text(back.node_affinity) == (
        "topology.kubernetes.io/zone In us-east-1a,us-east-1b\nnvidia.com/gpu.present Exists")


@pytest.mark.parametrize(("line", "words"), [
    ("zone", "is not a node requirement"),
    ("zone Near a", "is not a node requirement"),
    ("zone In", "needs values: add them after the operator"),
    ("zone Exists a", "takes no values"),
    ("-zone In a", 'Node label key "-zone" is not valid'),
])
def test_a_wrong_requirement_says_how_to_fix_it(line, words):
    from odh.training.checks.affinity import read_node_affinity

    requirements, problems = read_node_affinity(line)
    found = problems + [f.message for f in validate_spec(_spec(node_affinity=requirements))
                        if f.is_error and f.field == "node_affinity"]
    assert len(found) == 1 and words in found[0]


def test_the_sdk_code_of_the_new_fields_creates_the_same_manifest():
    from odh.training.checks.affinity import read_node_affinity
    from odh.training.sdk import sdk_code
    from odh.training.spec import EnvSource, SourceVolume

    spec = _spec(description="d", working_dir="/w", image_pull_secret="regcred",
                 env_from=[EnvSource("secret", "hf")],
                 source_volumes=[SourceVolume("configmap", "cfg", "/etc/cfg")],
                 node_affinity=read_node_affinity("zone In a,b")[0])
    code = sdk_code(spec).split("\njob = ")[0]  # up to where it creates the job
    scope: dict = {}
    exec(compile(code, "sdk", "exec"), scope)  # noqa: S102 (our own generated program)
    assert build_manifest(scope["spec"]) == build_manifest(spec)

"""Importing a pasted or uploaded MPIJob manifest: safely, and with a fix for every refusal."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from odh.training import errors
from odh.training.manifests.importing import (
    ManifestImportError,
    parse_manifest_text,
    unknown_fields,
    unknown_fields_message,
    without_fields,
)
from odh.training.spec import build_manifest, read_manifest
from odh.training.validation import validate_spec
from tests import reference

EXAMPLES = reference.EXAMPLES
EXAMPLE_FILES = sorted(EXAMPLES.glob("**/*.yaml"))

MINIMAL = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: bert
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: quay.io/team/bert:1.0
            command: [mpirun, python, train.py]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: quay.io/team/bert:1.0
"""


def refused(text: str | bytes, **kwargs) -> str:
    with pytest.raises(ManifestImportError) as info:
        parse_manifest_text(text, **kwargs)
    return str(info.value)


def test_the_upstream_examples_are_there():
    assert len(EXAMPLE_FILES) >= 5


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_every_upstream_example_imports_as_the_manifest_says(path):
    text = path.read_text()
    spec = parse_manifest_text(text)
    manifest = yaml.safe_load(text)
    assert spec == read_manifest(manifest)
    # Unknown fields (securityContext, readinessProbe, sshAuthMountPath...) are kept.
    assert build_manifest(spec) == manifest


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_every_upstream_example_opens_in_the_wizard_without_errors(path):
    spec = parse_manifest_text(path.read_bytes())
    spec.namespace = "team-nlp"
    assert [f for f in validate_spec(spec) if f.is_error] == []


def test_json_works_too():
    manifest = yaml.safe_load(MINIMAL)
    spec = parse_manifest_text(json.dumps(manifest, indent=2))
    assert (spec.name, spec.workers, spec.image) == ("bert", 2, "quay.io/team/bert:1.0")
    assert parse_manifest_text("  " + json.dumps(manifest)) == spec


def test_what_the_cluster_wrote_on_an_exported_job_is_dropped():
    manifest = yaml.safe_load(MINIMAL)
    manifest["metadata"].update(uid="123", resourceVersion="42", namespace="team-nlp",
                                creationTimestamp="2024-05-01T10:00:00Z",
                                annotations={"opendatahub.io/username": "alice"})
    manifest["spec"]["runPolicy"] = {"suspend": True}
    manifest["status"] = {"conditions": []}
    spec = parse_manifest_text(yaml.safe_dump(manifest))
    built = build_manifest(spec)
    assert "status" not in built
    assert set(built["metadata"]) == {"name", "namespace"}
    assert "suspend" not in built["spec"].get("runPolicy", {})
    assert spec.created_by == ""


def test_a_kubectl_list_with_one_mpijob_is_that_mpijob():
    manifest = yaml.safe_load(MINIMAL)
    wrapped = {"apiVersion": "v1", "kind": "List", "items": [manifest]}
    assert parse_manifest_text(yaml.safe_dump(wrapped)).name == "bert"


def test_unquoted_timestamps_stay_text():
    text = MINIMAL.replace("  name: bert\n", "  name: bert\n  annotations:\n    when: 2024-05-01\n")
    spec = parse_manifest_text(text)
    assert spec.annotations == {"when": "2024-05-01"}
    assert build_manifest(spec)["metadata"]["annotations"]["when"] == "2024-05-01"


def test_a_utf8_bom_and_utf16_files_are_read():
    assert parse_manifest_text(b"\xef\xbb\xbf" + MINIMAL.encode()).name == "bert"
    assert parse_manifest_text(MINIMAL.encode("utf-16")).name == "bert"


def test_a_few_aliases_are_fine():
    text = MINIMAL.replace("image: quay.io/team/bert:1.0\n            command",
                           "image: &image quay.io/team/bert:1.0\n            command")
    text = text.replace("            image: quay.io/team/bert:1.0\n", "            image: *image\n")
    assert parse_manifest_text(text).image == "quay.io/team/bert:1.0"


# --- refusals ---------------------------------------------------------------------------------

def test_several_documents():
    assert refused(MINIMAL + "---\n" + MINIMAL + "---\n" + MINIMAL) == (
        "This file holds 3 documents: paste a single MPIJob.")


def test_empty_documents_do_not_count():
    assert parse_manifest_text("---\n" + MINIMAL + "---\n").name == "bert"


def test_a_list_of_several_objects():
    manifest = yaml.safe_load(MINIMAL)
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [manifest, manifest]})
    assert refused(text) == ("This is a list of 2 objects: paste a single MPIJob (kubectl get "
                             "mpijob NAME -o yaml).")


def test_another_training_job_kind():
    text = MINIMAL.replace("kubeflow.org/v2beta1", "kubeflow.org/v1").replace(
        "kind: MPIJob", "kind: PyTorchJob")
    assert refused(text) == (
        "This is a PyTorchJob, which the wizard does not create: paste the manifest of one of "
        "MPIJob (kubeflow.org/v2beta1), TrainJob (trainer.kubeflow.org/v1alpha1), or create "
        "the PyTorchJob with kubectl.")


def test_something_else_entirely():
    assert refused("apiVersion: v1\nkind: ConfigMap\ndata: {}\n") == (
        "This is a ConfigMap, not a training job the wizard creates: paste the manifest of "
        "one of MPIJob (kubeflow.org/v2beta1), TrainJob (trainer.kubeflow.org/v1alpha1).")


def test_an_older_mpijob_version():
    assert "change apiVersion to kubeflow.org/v2beta1" in refused(
        MINIMAL.replace("kubeflow.org/v2beta1", "kubeflow.org/v1"))


def test_no_kind():
    assert refused("metadata: {name: x}\n") == (
        "The manifest has no kind: paste the manifest of one of MPIJob (kubeflow.org/v2beta1), "
        "TrainJob (trainer.kubeflow.org/v1alpha1), with its apiVersion and kind.")


def test_billion_laughs_fails_fast_with_a_clear_error():
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        name, previous = chr(ord("a") + level), chr(ord("a") + level - 1)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    assert refused("\n".join(lines)) == (
        "The YAML uses more than 20 aliases (*name): write the values out, or paste the manifest "
        "as kubectl prints it (kubectl get mpijob NAME -o yaml).")


def test_a_few_aliases_that_still_expand_hugely_are_refused():
    # 16 aliases doubling a 2,000-item list: tiny text, 65 million values expanded.
    lines = ["a0: &a0 [" + ", ".join(["x"] * 2000) + "]"]
    for level in range(1, 9):
        lines.append(f"a{level}: &a{level} [*a{level - 1}, *a{level - 1}]")
    assert "expand to more than 20000 values" in refused("\n".join(lines))


def test_deep_nesting_is_refused():
    assert "nested more than 64 levels" in refused("[" * 10000 + "]" * 10000)
    assert "nested more than 64 levels" in refused('{"a": ' * 5000 + "1" + "}" * 5000)
    assert "nested more than 64 levels" in refused("a:\n" + "".join(
        "  " * i + f"k{i}:\n" for i in range(1, 80)) + "  " * 80 + "v")


def test_a_huge_file_is_refused_before_it_is_parsed():
    assert refused("a: " + "x" * 300_000) == (
        "The file is 293 KiB, more than the 256 KiB a manifest may be here: paste only the MPIJob "
        "(one is usually a few KiB).")
    assert "more than the 256 KiB" in refused(b"a" * 300_000)
    assert "more than the 1 KiB" in refused(MINIMAL * 4, max_bytes=1024)
    assert "more than the 256 KiB" in refused("é" * 140_000)  # 280,000 bytes in UTF-8


@pytest.mark.parametrize(("text", "what"), [
    ("- a\n- b\n", "a list"), ("just some words", "plain text"), ("42", "a single value"),
    ("null", "nothing"),
])
def test_not_a_mapping(text, what):
    assert refused(text) == (
        "This is not a manifest: expected an object with apiVersion, kind, metadata and spec, "
        f"but the file holds {what}. Paste an MPIJob manifest.")


@pytest.mark.parametrize("junk", [
    "<!DOCTYPE html><html><body><h1>404</h1></body></html>",
    "\n  <html><script>alert(1)</script></html>", "<?xml version='1.0'?><a/>",
])
def test_html_junk(junk):
    assert refused(junk) == (
        'This looks like an HTML or XML page, not a manifest: copy the YAML itself (on GitHub, '
        'open the file with "Raw") and paste that.')


def test_empty():
    assert refused("") == "The file is empty: paste or upload an MPIJob manifest in YAML or JSON."
    assert refused("\n\n# only a comment\n") == refused("")


def test_yaml_syntax_errors_say_where():
    assert refused("apiVersion: v1\nkind: [MPIJob\nspec: x\n") == (
        "This is not valid YAML: expected ',' or ']', but got ':' at line 3, column 5. Check the "
        "indentation and quoting there.")
    assert "This is not valid YAML" in refused("a: b\n\tc: d\n")
    assert "This is not valid YAML" in refused("a: \x00")


def test_broken_json_is_tried_as_yaml_and_then_explained():
    assert "This is not valid YAML" in refused('{"apiVersion": "kubeflow.org/v2beta1",')


def test_duplicate_keys():
    assert refused(MINIMAL + "kind: MPIJob\n") == (
        'The key "kind" appears twice (line 22): keep one.')
    assert refused('{"kind": "MPIJob", "kind": "MPIJob"}') == (
        'The key "kind" appears twice: keep one.')


def test_not_utf8():
    assert refused(b"a: \xe9t\xe9\n") == (
        "The file is not UTF-8 text: save the manifest as UTF-8 YAML or JSON and upload it again.")


@pytest.mark.parametrize("text", ["a: " + "1" * 5000, '{"a": ' + "1" * 5000 + "}"])
def test_numbers_too_long_to_read(text):
    assert refused(text) == ("The file holds a number with thousands of digits, far more than "
                             "any setting takes: shorten it.")


@pytest.mark.parametrize("text", ["a: !!binary aGk=", "a: !!set {x}"])
def test_types_json_has_no_place_for(text):
    assert refused(text) == ("The YAML uses a type a manifest cannot hold (such as !!binary or "
                             "!!set): write plain text, numbers, lists and mappings.")


@pytest.mark.parametrize("text", ["a: .nan", "a: [-.inf]", '{"a": NaN}', '{"a": Infinity}'])
def test_not_a_number(text):
    assert refused(text) == ("The file holds .nan or .inf, which a manifest cannot: write a "
                             "number instead.")


def test_python_tags_are_refused_as_yaml_errors():
    assert "This is not valid YAML" in refused("a: !!python/object/apply:os.system ['ls']")


# --- structure --------------------------------------------------------------------------------

def replace(old: str, new: str) -> str:
    assert old in MINIMAL
    return MINIMAL.replace(old, new)


@pytest.mark.parametrize(("text", "expected"), [
    (MINIMAL.split("spec:")[0], "The manifest has no spec: an MPIJob needs spec.mpiReplicaSpecs "
                                "with a Launcher (and Workers)."),
    (MINIMAL.split("spec:")[0] + "spec: [1]\n",
     "spec must be a mapping (key: value lines), but it is a list: correct it and paste the "
     "manifest again."),
    (MINIMAL.split("spec:")[0] + "spec: {}\n",
     "spec.mpiReplicaSpecs is missing: an MPIJob needs a Launcher and Workers under it."),
    (replace("    Launcher:", "    Master:"),
     "spec.mpiReplicaSpecs.Master is not a replica type: an MPIJob has a Launcher and Workers "
     "(Launcher, Worker). spec.mpiReplicaSpecs has no Launcher: add one, it runs mpirun."),
    (replace("      replicas: 2", "      replicas: two"),
     "spec.mpiReplicaSpecs.Worker.replicas must be a whole number, but it is text: correct it "
     "and paste the manifest again."),
    (replace("      replicas: 2", "      replicas: -2"),
     "spec.mpiReplicaSpecs.Worker.replicas is -2: the number of Workers cannot be negative."),
    (replace("      replicas: 1", "      replicas: 2"),
     "spec.mpiReplicaSpecs.Launcher.replicas is 2: an MPIJob has exactly one Launcher; set it "
     "to 1."),
    (replace("  mpiReplicaSpecs:", "  slotsPerWorker: many\n  mpiReplicaSpecs:"),
     "spec.slotsPerWorker must be a whole number, but it is text: correct it and paste the "
     "manifest again."),
    (replace("  mpiReplicaSpecs:", "  runPolicy:\n    ttlSecondsAfterFinished: 1h\n"
                                   "  mpiReplicaSpecs:"),
     "spec.runPolicy.ttlSecondsAfterFinished must be a whole number, but it is text: correct it "
     "and paste the manifest again."),
    (replace("  name: bert\n", "  name: bert\n  labels:\n    version: 2\n"),
     "metadata.labels.version must be text, but it is a number: put it in quotes."),
    (replace("            command: [mpirun, python, train.py]",
             "            command: mpirun python train.py"),
     "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command must be a list, but it "
     "is text: correct it and paste the manifest again."),
    (replace("            command: [mpirun, python, train.py]",
             "            command: [mpirun, 4]"),
     "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command[1] must be text, but it "
     "is a number: put it in quotes."),
    (replace("            command: [mpirun, python, train.py]",
             "            env:\n            - name: EPOCHS\n              value: 3"),
     "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].env[0].value must be text, but "
     "it is a number: put it in quotes."),
    (replace("            command: [mpirun, python, train.py]",
             "            resources:\n              limits:\n                memory: 16GB"),
     'spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].resources.limits.memory: "16GB" '
     "is not a Kubernetes quantity: use a number with an optional suffix such as 500m, 2, 16Gi "
     "or 512Mi (did you mean 16Gi?)"),
    (replace("          containers:\n          - name: worker\n"
             "            image: quay.io/team/bert:1.0\n", "          containers: []\n"),
     "spec.mpiReplicaSpecs.Worker.template.spec.containers is empty: add the container that "
     "runs."),
    (replace("      template:\n        spec:\n          containers:\n          - name: worker\n"
             "            image: quay.io/team/bert:1.0\n", ""),
     "spec.mpiReplicaSpecs.Worker.template is missing: add the pod template with its "
     "containers."),
])
def test_structural_problems_name_the_field(text, expected):
    assert refused(text) == expected


def test_many_structural_problems_are_summed_up():
    text = replace("      replicas: 2", "      replicas: two\n      restartPolicy: 1").replace(
        "  mpiReplicaSpecs:", "  slotsPerWorker: x\n  mpiImplementation: 3\n  mpiReplicaSpecs:")
    assert refused(text).endswith("(and 1 more)")


# --- robustness -------------------------------------------------------------------------------

values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=400), st.binary(max_size=400),
                 values.map(yaml.safe_dump)))
def test_anything_pasted_ends_in_a_spec_or_a_clear_message(text):
    try:
        parse_manifest_text(text)
    except ManifestImportError as exc:
        assert 10 < len(str(exc)) < 1500


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, child in node.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from _paths(child, (*prefix, index))


MINIMAL_PATHS = list(_paths(yaml.safe_load(MINIMAL)))[1:]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(MINIMAL_PATHS), values), min_size=1, max_size=3))
def test_an_mpijob_with_odd_values_anywhere_never_breaks_the_import(changes):
    manifest = yaml.safe_load(MINIMAL)
    for path, value in changes:
        node = manifest
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    try:
        spec = parse_manifest_text(yaml.safe_dump(manifest))
    except ManifestImportError as exc:
        assert 10 < len(str(exc)) < 1500
    else:
        validate_spec(spec)
        build_manifest(spec)


# -- fields the cluster's MPIJob API does not have ------------------------------------------
class _StrictDryRun:
    """A ClusterClient's create_job answering as the API server would."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls: list[dict] = []

    def create_job(self, kind, namespace, manifest, dry_run=False, field_validation=None):
        self.calls.append({"namespace": namespace, "dry_run": dry_run,
                           "field_validation": field_validation})
        if self.error is not None:
            raise self.error
        return manifest


STRICT_ERROR = ('MPIJob in version "v2beta1" cannot be handled as a MPIJob: strict decoding '
                'error: unknown field "spec.runPolicy.cleanPodPolice", unknown field '
                '"spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resource"')


def test_unknown_fields_are_asked_of_the_api_server_with_a_strict_dry_run():
    client = _StrictDryRun(errors.ClusterError(STRICT_ERROR, status=400, reason="BadRequest"))
    found = unknown_fields(client, "team-cv", {"kind": "MPIJob"})
    assert found == ["spec.runPolicy.cleanPodPolice",
                     "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resource"]
    assert client.calls == [{"namespace": "team-cv", "dry_run": True,
                             "field_validation": "Strict"}]


@pytest.mark.parametrize("error", [
    None,
    errors.Forbidden("mpijobs is forbidden", status=403),
    errors.Invalid("metadata.name: Invalid value", status=422),
    errors.ClusterUnavailable("The cluster API server could not be reached."),
    errors.ClusterError("unsupported dry run value", status=400),
])
def test_nothing_is_said_of_the_fields_unless_the_api_server_names_them(error):
    assert unknown_fields(_StrictDryRun(error), "team-cv", {}) == []


def test_an_expired_sign_in_is_not_taken_for_an_answer():
    with pytest.raises(errors.Unauthorized):
        unknown_fields(_StrictDryRun(errors.Unauthorized("expired", status=401)), "team-cv", {})


def test_without_a_project_the_api_server_is_not_asked():
    client = _StrictDryRun()
    assert unknown_fields(client, "", {}) == []
    assert client.calls == []


def test_the_message_names_the_fields_and_says_what_to_do():
    one = unknown_fields_message(["spec.runPolicy.cleanPodPolice"])
    assert "has no field “spec.runPolicy.cleanPodPolice”: the cluster would drop it" in one
    assert "kubectl explain mpijobs.spec" in one and "import the manifest again" in one
    many = unknown_fields_message([f"spec.bogus{i}" for i in range(12)])
    assert "has no fields “spec.bogus0”" in many and "(and 2 more)" in many
    assert "spec.bogus11" not in many


def test_without_fields_removes_what_the_api_server_named():
    manifest = yaml.safe_load(MINIMAL)
    manifest["spec"]["runPolicy"] = {"cleanPodPolice": "All", "backoffLimit": 2}
    worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["resource"] = {"limits": {"cpu": "2"}}
    left = without_fields(manifest, [
        "spec.runPolicy.cleanPodPolice",
        "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resource",
        "spec.nothing.here", "spec.mpiReplicaSpecs.Worker.template.spec.containers[5].x"])
    assert left["spec"]["runPolicy"] == {"backoffLimit": 2}
    assert "resource" not in left["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"][
        "containers"][0]
    assert "resource" in worker  # the manifest given is left as it was

"""The wizard's drafts: text as typed <-> MPIJobSpec, rows, fixes, and where messages go."""

from __future__ import annotations

from django.http import QueryDict
from hypothesis import given, settings
from hypothesis import strategies as st

from odh.training import MPIJobSpec
from odh.training.spec import EnvVar, PVCVolume, Toleration, read_manifest
from training.wizard import changes, drafts, formfields, posting

MANIFEST = {
    "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
    "metadata": {"name": "gpt2-finetune", "namespace": "team-nlp",
                 "labels": {"team": "nlp"}, "annotations": {"simcluster.io/failure": "oom"}},
    "spec": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 2},
             "mpiReplicaSpecs": {
                 "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{
                     "name": "launcher", "image": "quay.io/x/deepspeed:0.14",
                     "command": ["mpirun", "-np", "4", "python", "/w/a b.py", "--x='y'"],
                     "env": [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {
                         "name": "hf", "key": "token"}}}, {"name": "A", "value": "1"}],
                     "resources": {"limits": {"cpu": "2", "memory": "8Gi"}}}]}}},
                 "Worker": {"replicas": 4, "template": {"spec": {
                     "nodeSelector": {"nvidia.com/gpu.product": "A100", "zone": "a"},
                     "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists",
                                      "effect": "NoSchedule"},
                                     {"key": "k", "operator": "Equal", "value": "v",
                                      "effect": "NoExecute", "tolerationSeconds": 30}],
                     "containers": [{"name": "worker", "image": "quay.io/x/deepspeed:0.14",
                                     "resources": {"limits": {"cpu": "8", "memory": "48Gi",
                                                              "nvidia.com/gpu": "1"}}}]}}}}},
}


def test_a_manifest_survives_the_text_of_the_forms():
    spec = read_manifest(MANIFEST)
    data = drafts.data_from_spec(spec)
    assert data["command"] == "mpirun -np 4 python '/w/a b.py' '--x='\"'\"'y'\"'\"''"
    assert data["gpu_product"] == "A100" and data["node_selector"] == "zone=a"
    assert data["tolerations"] == "nvidia.com/gpu:NoSchedule\nk=v:NoExecute for 30s"
    read = drafts.spec_from_data(data, spec.base)
    assert read.errors == {}
    assert read.spec == spec


def test_text_that_cannot_be_read_is_named_by_field():
    read = drafts.spec_from_data({**drafts.data_from_spec(MPIJobSpec()), "workers": "two",
                                  "command": "python 'unclosed", "labels": "a=b\nnonsense",
                                  "tolerations": "=:", "ttl_seconds_after_finished": "9" * 30})
    assert set(read.errors) == {"workers", "command", "labels", "tolerations",
                                "ttl_seconds_after_finished"}
    assert "Line 2" in read.errors["labels"][0]
    assert read.spec.workers == 1  # the default stands in; the message says what to fix


def test_posted_rows_keep_what_the_form_cannot_show():
    data = drafts.data_from_spec(read_manifest(MANIFEST))
    post = QueryDict(mutable=True)
    post.update({"workers": "2", "env-0-name": "TOKEN", "env-0-value": "", "env-0-from": "1",
                 "env-1-name": "", "env-1-value": "",  # an empty row is dropped
                 "env-2-name": "B", "env-2-value": " 2 ",
                 "volume-0-claim_name": "datasets", "volume-0-mount_path": "/data",
                 "volume-0-read_only": "1"})
    merged = posting.merge_post(data, post, "resources")
    assert merged["env"] == [
        {"name": "TOKEN", "value": "", "value_from": {"secretKeyRef": {"name": "hf",
                                                                       "key": "token"}}},
        {"name": "B", "value": " 2 ", "value_from": None}]
    assert merged["volumes"] == [{"claim_name": "datasets", "mount_path": "/data",
                                  "sub_path": "", "read_only": True, "name": ""}]
    assert merged["disable_sidecar_injection"] == ""  # an unticked box is not posted
    spec = drafts.spec_from_data(merged).spec
    assert spec.env[0] == EnvVar("TOKEN", "", {"secretKeyRef": {"name": "hf", "key": "token"}})
    assert spec.volumes == [PVCVolume("datasets", "/data", read_only=True)]


def test_a_fix_changes_the_text_the_forms_show():
    data = drafts.data_from_spec(read_manifest(MANIFEST))
    changed = changes.apply_changes(data, {"workers": 3, "cpu_per_worker": "4",
                                          "command": ["mpirun", "-np", "3", "x"],
                                          "node_selector": {}, "not_a_field": 1})
    assert changed["workers"] == "3" and changed["cpu_per_worker"] == "4"
    assert changed["command"] == "mpirun -np 3 x"
    assert changed["gpu_product"] == "" and changed["node_selector"] == ""
    assert "not_a_field" not in changed


def test_messages_find_their_fields():
    assert formfields.form_field_for("env[2].name") == "env-2-name"
    assert formfields.form_field_for("volumes[0].mount_path") == "volume-0-mount_path"
    assert formfields.form_field_for("tolerations[1].effect") == "tolerations"
    assert formfields.form_field_for("workers") == "workers"
    assert formfields.form_field_for("manifest") == "manifest"
    assert formfields.step_of("name") == "configuration"
    assert formfields.step_of("env-2-name") == "resources"
    assert formfields.step_of("manifest") == "review"


_key = st.from_regex(r"[a-z][a-z0-9.-]{0,10}(/[a-z]{1,5})?", fullmatch=True)
_value = st.from_regex(r"[A-Za-z0-9_.-]{0,10}", fullmatch=True)
_word = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(command=st.lists(_word, max_size=5), labels=st.dictionaries(_key, _value, max_size=3),
       selector=st.dictionaries(_key, _value, max_size=3),
       tolerations=st.lists(st.builds(
           Toleration, key=_key, operator=st.sampled_from(["Equal", "Exists"]),
           value=_value, effect=st.sampled_from(["", "NoSchedule", "NoExecute"]),
           seconds=st.none() | st.integers(0, 10**6)), max_size=3),
       workers=st.integers(1, 100), gpus=st.integers(0, 8),
       slots=st.none() | st.integers(1, 16), ttl=st.none() | st.integers(0, 10**6))
def test_any_spec_comes_back_from_its_text(command, labels, selector, tolerations, workers,
                                           gpus, slots, ttl):
    tolerations = [t for t in tolerations if not (t.operator == "Exists" and t.value)]
    spec = MPIJobSpec(name="x", namespace="ns", image="i:1", command=command, workers=workers,
                      gpus_per_worker=gpus, slots_per_worker=slots, labels=labels,
                      node_selector=selector, tolerations=tolerations,
                      ttl_seconds_after_finished=ttl)
    read = drafts.spec_from_data(drafts.data_from_spec(spec))
    assert read.errors == {}
    assert read.spec == spec

"""Export: a job as a manifest to keep or apply again."""

from __future__ import annotations

from odh.training.manifests import export

LIVE = {
    "spec": {"slotsPerWorker": 1},
    "status": {"conditions": []},
    "kind": "MPIJob",
    "metadata": {
        "name": "gpt2-finetune", "namespace": "team-nlp", "uid": "u-1",
        "resourceVersion": "42", "generation": 3, "creationTimestamp": "2026-01-01T00:00:00Z",
        "managedFields": [{"manager": "kubectl"}],
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        "labels": {"team": "nlp"},
    },
    "apiVersion": "kubeflow.org/v2beta1",
}


def test_exportable_leaves_out_what_the_cluster_added():
    out = export.exportable(LIVE)
    assert list(out) == ["apiVersion", "kind", "metadata", "spec"]
    assert out["metadata"] == {"name": "gpt2-finetune", "namespace": "team-nlp",
                               "labels": {"team": "nlp"}}
    assert LIVE["metadata"]["uid"] == "u-1"  # the live object is untouched


def test_the_configuration_tab_keeps_status_but_not_managed_fields():
    out = export.without_managed_fields(LIVE)
    assert list(out) == ["apiVersion", "kind", "metadata", "spec", "status"]
    assert "managedFields" not in out["metadata"]
    assert out["metadata"]["uid"] == "u-1"


def test_yaml_and_json_read_back_the_same():
    import json

    import yaml

    out = export.exportable(LIVE)
    assert yaml.safe_load(export.to_yaml(out)) == out == json.loads(export.to_json(out))

"""StorageClasses and PersistentVolumeClaims as a real API server has them: classes served
(storage.k8s.io/v1), a claim without a class given the default class, claims bound, and a
ResourceQuota counting requests.storage and persistentvolumeclaims."""

from __future__ import annotations

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

DEFAULT = "storageclass.kubernetes.io/is-default-class"


@pytest.fixture
def classes(admin_api):
    storage = client.StorageV1Api(admin_api)
    for name, default in (("sim-standard", "true"), ("sim-shared", None)):
        metadata: dict = {"name": name}
        if default:
            metadata["annotations"] = {DEFAULT: default}
        storage.create_storage_class({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                      "metadata": metadata, "provisioner": "example.com/x",
                                      "reclaimPolicy": "Delete"})
    yield storage
    for name in ("sim-standard", "sim-shared"):
        storage.delete_storage_class(name)


def _claim(name: str, size: str, storage_class: str | None = None) -> dict:
    spec: dict = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": size}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": spec}


def test_classes_are_listed_and_a_claim_gets_the_default_and_binds(classes, admin_api,
                                                                   alice_api):
    listed = {c.metadata.name: c for c in classes.list_storage_class().items}
    assert listed["sim-standard"].metadata.annotations == {DEFAULT: "true"}
    assert listed["sim-shared"].provisioner == "example.com/x"
    core = client.CoreV1Api(alice_api)
    try:
        plain = core.create_namespaced_persistent_volume_claim("team-nlp",
                                                               _claim("sim-plain", "1Gi"))
        chosen = core.create_namespaced_persistent_volume_claim(
            "team-nlp", _claim("sim-chosen", "2Gi", "sim-shared"))
        assert plain.spec.storage_class_name == "sim-standard"
        assert chosen.spec.storage_class_name == "sim-shared"
        assert plain.status.phase == chosen.status.phase == "Bound"
        assert chosen.status.capacity == {"storage": "2Gi"}
    finally:
        for name in ("sim-plain", "sim-chosen"):
            client.CoreV1Api(admin_api).delete_namespaced_persistent_volume_claim(name,
                                                                                  "team-nlp")


def test_a_quota_counts_the_storage_claims_ask_for(admin_api, alice_api):
    core = client.CoreV1Api(admin_api)
    core.create_namespaced_resource_quota("team-nlp", {
        "metadata": {"name": "sim-storage"},
        "spec": {"hard": {"requests.storage": "10Gi", "persistentvolumeclaims": "5"}}})
    try:
        mine = client.CoreV1Api(alice_api)
        mine.create_namespaced_persistent_volume_claim("team-nlp", _claim("sim-q1", "8Gi"))
        with pytest.raises(ApiException) as refused:
            mine.create_namespaced_persistent_volume_claim("team-nlp", _claim("sim-q2", "4Gi"))
        assert refused.value.status == 403
        assert "exceeded quota: sim-storage, requested: requests.storage=4Gi, used: " \
            "requests.storage=8Gi, limited: requests.storage=10Gi" in refused.value.body
    finally:
        core.delete_namespaced_resource_quota("sim-storage", "team-nlp")
        core.delete_namespaced_persistent_volume_claim("sim-q1", "team-nlp")

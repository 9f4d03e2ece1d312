"""odh.training.cluster.compact: objects kept long are the same to read, with shared strings."""

from __future__ import annotations

import json

from odh.training.cluster.compact import INTERN_MAX_LENGTH, compact

EVENT = {"apiVersion": "v1", "kind": "Event",
         "metadata": {"name": "bert-worker-0.17a", "namespace": "team-nlp",
                      "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:count": {}}}]},
         "involvedObject": {"kind": "Pod", "name": "bert-worker-0", "uid": "u-1"},
         "reason": "Started", "message": "Started container worker", "count": 1,
         "lastTimestamp": "2026-11-27T10:00:00Z", "eventTime": None,
         "note": "x" * (INTERN_MAX_LENGTH + 1), "series": [{"count": 2}, "a"]}


def decoded():
    return json.loads(json.dumps(EVENT))  # as a watch decodes each event: its own strings


def test_it_reads_the_same_without_managed_fields():
    original = decoded()
    kept = compact(original)
    expected = decoded()
    del expected["metadata"]["managedFields"]
    assert kept == expected
    assert "managedFields" in original["metadata"]  # the object given is not changed


def test_it_keeps_managed_fields_when_asked():
    assert compact(decoded(), keep_managed_fields=True) == decoded()


def test_objects_read_separately_share_their_keys_and_short_values():
    one, two = compact(decoded()), compact(decoded())
    assert one["involvedObject"]["name"] is two["involvedObject"]["name"]
    assert one["lastTimestamp"] is two["lastTimestamp"]
    assert next(k for k in one if k == "reason") is next(k for k in two if k == "reason")
    # a long text rarely repeats: left as it is
    assert one["note"] == two["note"] and one["note"] is not two["note"]

"""The three patch formats, with what kubectl and the Python client actually send."""

from __future__ import annotations

import copy

import pytest

from simcluster import errors
from simcluster.apiserver import patch

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"

POD = {
    "metadata": {"name": "p", "labels": {"app": "web", "tier": "front"},
                 "finalizers": ["a.example.com/x"]},
    "spec": {
        "containers": [
            {"name": "main", "image": "img:1", "env": [{"name": "A", "value": "1"},
                                                      {"name": "B", "value": "2"}],
             "ports": [{"containerPort": 80}]},
            {"name": "sidecar", "image": "side:1"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "a", "operator": "Exists"}],
    },
}


def test_merge_patch_follows_rfc_7386():
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "list": [1, 2]}
    out = patch.merge_patch(target, {"a": "z", "c": {"f": None}, "list": [3], "new": {"x": 1}})
    assert out == {"a": "z", "c": {"d": "e"}, "list": [3], "new": {"x": 1}}
    assert target["c"] == {"d": "e", "f": "g"}  # the input is left alone
    assert patch.merge_patch({"a": 1}, "scalar") == "scalar"
    assert patch.merge_patch({"a": {"b": 1}}, {"a": None}) == {}


def test_json_patch_operations():
    doc = {"metadata": {"labels": {"a": "1"}}, "list": ["x", "y"]}
    out = patch.json_patch(doc, [
        {"op": "add", "path": "/metadata/labels/b", "value": "2"},
        {"op": "add", "path": "/list/-", "value": "z"},
        {"op": "add", "path": "/list/0", "value": "w"},
        {"op": "replace", "path": "/metadata/labels/a", "value": "one"},
        {"op": "remove", "path": "/list/1"},
        {"op": "copy", "from": "/metadata/labels/b", "path": "/copied"},
        {"op": "move", "from": "/copied", "path": "/moved"},
        {"op": "test", "path": "/moved", "value": "2"},
        {"op": "add", "path": "/metadata/annotations", "value": {"k~1x": "v"}},
        {"op": "add", "path": "/metadata/annotations/a~1b", "value": "slash"},
    ])
    assert out == {"metadata": {"labels": {"a": "one", "b": "2"},
                                "annotations": {"k~1x": "v", "a/b": "slash"}},
                   "list": ["w", "y", "z"], "moved": "2"}
    assert doc == {"metadata": {"labels": {"a": "1"}}, "list": ["x", "y"]}


@pytest.mark.parametrize("ops,message", [
    ([{"op": "replace", "path": "/nope", "value": 1}], 'doc is missing path: "/nope"'),
    ([{"op": "remove", "path": "/nope"}], "Unable to remove nonexistent key: nope"),
    ([{"op": "add", "path": "/a/b/c", "value": 1}], 'doc is missing path: "/a/b/c"'),
    ([{"op": "test", "path": "/a", "value": 2}], "testing value /a failed: test failed"),
    ([{"op": "frobnicate", "path": "/a"}], "Unexpected kind: frobnicate"),
    ([{"op": "move", "path": "/b"}], "move operation does not apply"),
    ([{"op": "add", "value": 1}], 'add operation does not apply: doc is missing path: ""'),
    ([{"op": "add", "path": "a", "value": 1}], 'doc is missing path: "a"'),
])
def test_json_patch_that_does_not_apply_is_unprocessable(ops, message):
    with pytest.raises(errors.ApiError) as e:
        patch.json_patch({"a": 1}, ops)
    assert e.value.code == 422 and e.value.reason == "Invalid"
    assert e.value.message == "the server rejected our request due to an error in our request"
    assert message in e.value.details["causes"][0]["message"]


def test_json_patch_must_be_a_list_of_operations():
    for body in ({"op": "add"}, ["not an operation"]):
        with pytest.raises(errors.ApiError) as e:
            patch.json_patch({}, body)
        assert e.value.code == 400


def test_strategic_merge_merges_lists_by_their_keys():
    out = patch.strategic_merge_patch(POD, {"spec": {"containers": [
        {"name": "main", "image": "img:2", "env": [{"name": "B", "value": "two"},
                                                   {"name": "C", "value": "3"}]},
        {"name": "new", "image": "new:1"}]}})
    containers = out["spec"]["containers"]
    assert [c["name"] for c in containers] == ["main", "sidecar", "new"]
    assert containers[0]["image"] == "img:2"
    assert containers[0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "two"},
                                    {"name": "C", "value": "3"}]
    assert containers[0]["ports"] == [{"containerPort": 80}]
    # a list without a merge key is replaced
    assert patch.strategic_merge_patch(POD, {"spec": {"tolerations": []}})["spec"][
        "tolerations"] == []
    assert POD["spec"]["containers"][0]["image"] == "img:1"


def test_strategic_merge_directives_kubectl_sends():
    out = patch.strategic_merge_patch(POD, {
        "metadata": {"labels": {"tier": None},
                     "$deleteFromPrimitiveList/finalizers": ["a.example.com/x"]},
        "spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "main"}],
                 "containers": [{"name": "sidecar", "$patch": "delete"}],
                 "volumes": [{"$patch": "replace"},
                             {"name": "cfg", "configMap": {"name": "c"}}]}})
    assert out["metadata"]["labels"] == {"app": "web"}
    assert out["metadata"]["finalizers"] == []
    assert [c["name"] for c in out["spec"]["containers"]] == ["main"]
    assert out["spec"]["volumes"] == [{"name": "cfg", "configMap": {"name": "c"}}]
    replaced = patch.strategic_merge_patch(POD, {"spec": {"$patch": "replace",
                                                          "containers": []}})
    assert replaced["spec"] == {"containers": []}
    retained = patch.strategic_merge_patch({"a": 1, "b": 2, "c": 3},
                                           {"$retainKeys": ["a", "c"], "c": 4})
    assert retained == {"a": 1, "c": 4}


def test_finalizers_merge_as_a_set():
    out = patch.strategic_merge_patch(POD, {"metadata": {"finalizers": ["b", "a.example.com/x"]}})
    assert out["metadata"]["finalizers"] == ["a.example.com/x", "b"]


def test_service_ports_merge_on_port_container_ports_on_container_port():
    service = {"spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}
    out = patch.strategic_merge_patch(service, {"spec": {"ports": [
        {"port": 80, "targetPort": 9090}, {"name": "https", "port": 443}]}})
    assert out["spec"]["ports"] == [{"name": "http", "port": 80, "targetPort": 9090},
                                    {"name": "https", "port": 443}]
    pod = patch.strategic_merge_patch(POD, {"spec": {"containers": [
        {"name": "main", "ports": [{"containerPort": 80, "name": "http"}]}]}})
    assert pod["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "name": "http"}]


def test_apply_chooses_by_content_type():
    target = copy.deepcopy(POD)
    assert patch.apply(MERGE + "; charset=utf-8", target, {"metadata": {"labels": None}},
                       custom=True)["metadata"] == {"name": "p",
                                                   "finalizers": ["a.example.com/x"]}
    out = patch.apply(JSON_PATCH, target, [{"op": "add", "path": "/metadata/labels/x",
                                            "value": "y"}], custom=False)
    assert out["metadata"]["labels"]["x"] == "y"
    with pytest.raises(errors.ApiError) as e:
        patch.apply(STRATEGIC, target, {}, custom=True)
    assert e.value.code == 415 and e.value.reason == "UnsupportedMediaType"
    with pytest.raises(errors.ApiError) as e:
        patch.apply("application/apply-patch+yaml", target, {}, custom=False)
    assert e.value.code == 415
    with pytest.raises(errors.ApiError) as e:
        patch.apply(MERGE, target, "not an object", custom=True)
    assert e.value.code == 400

"""The store's contract: what a write keeps, what it changes, what a reader may rely on."""

from __future__ import annotations

import pytest

from simcluster import errors
from simcluster.apiserver.store import Change, Store, clone
from simcluster.clock import Clock
from simcluster.placement.resources import Registry


@pytest.fixture
def store():
    return Store(Registry(), Clock())


@pytest.fixture
def pods(store):
    return store.registry.get("", "v1", "pods")


@pytest.fixture
def changes(store):
    seen: list[Change] = []
    store.subscribe(seen.append)
    return seen


def pod(name: str, ns: str = "team-nlp", **extra) -> dict:
    return {"metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "main", "image": "busybox"}]}, **extra}


def test_create_keeps_a_copy_and_fills_the_metadata(store, pods, changes):
    mine = pod("a")
    stored = store.create(pods, mine)
    mine["spec"]["containers"][0]["image"] = "changed-afterwards"
    assert store.get_raw(pods, "team-nlp", "a")["spec"]["containers"][0]["image"] == "busybox"
    assert stored["kind"] == "Pod" and stored["apiVersion"] == "v1"
    assert stored["metadata"]["uid"] and stored["metadata"]["generation"] == 1
    assert stored["metadata"]["resourceVersion"] == str(store.resource_version)
    assert [c.type for c in changes] == ["ADDED"]


def test_generate_name_and_duplicates(store, pods):
    made = store.create(pods, {"metadata": {"generateName": "job-", "namespace": "ns"}})
    assert made["metadata"]["name"].startswith("job-") and len(made["metadata"]["name"]) == 9
    with pytest.raises(errors.ApiError) as e:
        store.create(pods, {"metadata": {"name": made["metadata"]["name"], "namespace": "ns"}})
    assert e.value.code == 409


def test_a_write_that_changes_nothing_keeps_the_version(store, pods, changes):
    store.create(pods, pod("a"))
    rv = store.resource_version
    same = store.get(pods, "team-nlp", "a")
    store.update(pods, same)
    assert store.mutate(pods, "team-nlp", "a", lambda p: None)["metadata"][
        "resourceVersion"] == str(rv)
    assert store.resource_version == rv and len(changes) == 1


def test_spec_changes_count_as_generations_and_status_changes_do_not(store, pods):
    store.create(pods, pod("a"))

    def set_status(p: dict) -> None:
        p["status"] = {"phase": "Running"}

    def set_spec(p: dict) -> None:
        p["spec"]["nodeName"] = "node-0"

    assert store.mutate(pods, "team-nlp", "a", set_status)["metadata"]["generation"] == 1
    assert store.mutate(pods, "team-nlp", "a", set_spec)["metadata"]["generation"] == 2


def test_a_stale_resource_version_is_a_conflict(store, pods):
    first = store.create(pods, pod("a"))
    old = clone(first)
    store.mutate(pods, "team-nlp", "a", lambda p: p.setdefault("status", {}).update(x=1))
    with pytest.raises(errors.ApiError) as e:
        store.update(pods, old)
    assert e.value.code == 409
    store.update(pods, old, check_version=False)  # a controller's write wins


def test_mutate_edits_a_copy_so_earlier_versions_stay_as_they_were(store, pods, changes):
    store.create(pods, pod("a"))
    before = store.get_raw(pods, "team-nlp", "a")

    def edit(p: dict) -> None:
        p["spec"]["containers"][0]["image"] = "other"
        p["metadata"].setdefault("labels", {})["x"] = "y"

    after = store.mutate(pods, "team-nlp", "a", edit)
    assert before["spec"]["containers"][0]["image"] == "busybox"
    assert "labels" not in before["metadata"]
    assert after is store.get_raw(pods, "team-nlp", "a")
    assert changes[-1].old is before and changes[-1].obj is after


def test_mutate_returning_false_writes_nothing(store, pods, changes):
    store.create(pods, pod("a"))

    def look(p: dict) -> bool:
        p["spec"]["nodeName"] = "ignored"
        return False

    store.mutate(pods, "team-nlp", "a", look)
    assert "nodeName" not in store.get_raw(pods, "team-nlp", "a")["spec"]
    assert len(changes) == 1
    assert store.mutate(pods, "team-nlp", "gone", look) is None


def test_iteration_is_in_namespace_then_name_order_and_survives_writes(store, pods):
    for ns, name in [("b", "z"), ("a", "y"), ("b", "a"), ("a", "x")]:
        store.create(pods, pod(name, ns))
    assert [(o["metadata"]["namespace"], o["metadata"]["name"])
            for o in store.iter_raw(pods)] == [("a", "x"), ("a", "y"), ("b", "a"), ("b", "z")]
    assert [o["metadata"]["name"] for o in store.iter_raw(pods, "b")] == ["a", "z"]
    assert list(store.iter_raw(pods, "nowhere")) == []
    seen = []
    for o in store.iter_raw(pods):
        seen.append(o["metadata"]["name"])
        if o["metadata"]["name"] == "x":
            store.delete(pods, "a", "y")
            store.create(pods, pod("w", "a"))
    assert seen == ["x", "a", "z"]
    assert [o["metadata"]["name"] for o in store.iter_raw(pods, "a")] == ["w", "x"]


def test_iteration_resumes_past_a_key_and_counts_what_remains(store, pods):
    for ns, name in [("a", "x"), ("a", "y"), ("b", "a"), ("b", "z"), ("c", "m")]:
        store.create(pods, pod(name, ns))

    def names(namespace=None, after=None):
        return [(o["metadata"]["namespace"], o["metadata"]["name"])
                for o in store.iter_raw(pods, namespace, after=after)]

    assert names(after=("a", "x")) == [("a", "y"), ("b", "a"), ("b", "z"), ("c", "m")]
    assert names(after=("a", "zz")) == [("b", "a"), ("b", "z"), ("c", "m")]
    assert names(after=("b", "b")) == [("b", "z"), ("c", "m")]  # a key that is gone
    assert names(after=("c", "m")) == []
    assert names("b", after=("a", "x")) == [("b", "a"), ("b", "z")]
    assert names("a", after=("b", "a")) == []
    assert store.count(pods) == 5
    assert store.count(pods, after=("b", "a")) == 2
    assert store.count(pods, "b", after=("b", "a")) == 1


def test_cluster_scoped_objects_have_no_namespace(store):
    nodes = store.registry.get("", "v1", "nodes")
    store.create(nodes, {"metadata": {"name": "n1", "namespace": "ignored"}})
    assert "namespace" not in store.get_raw(nodes, "", "n1")["metadata"]
    assert store.get_raw(nodes, "whatever", "n1") is not None
    assert [n["metadata"]["name"] for n in store.iter_raw(nodes)] == ["n1"]


def test_objects_are_found_by_uid_until_deleted(store, pods):
    uid = store.create(pods, pod("a"))["metadata"]["uid"]
    found = store.by_uid(uid)
    assert found is not None and found[0] is pods and found[1]["metadata"]["name"] == "a"
    store.delete(pods, "team-nlp", "a")
    assert store.by_uid(uid) is None and not store.exists_uid(uid)


def test_delete_reports_the_object_with_a_new_version(store, pods, changes):
    created = store.create(pods, pod("a"))
    deleted = store.delete(pods, "team-nlp", "a")
    assert deleted["metadata"]["resourceVersion"] == str(store.resource_version)
    assert created["metadata"]["resourceVersion"] != deleted["metadata"]["resourceVersion"]
    assert changes[-1].type == "DELETED" and changes[-1].old is created
    assert store.get_raw(pods, "team-nlp", "a") is None
    with pytest.raises(errors.ApiError) as e:
        store.delete(pods, "team-nlp", "a")
    assert e.value.code == 404


def test_graceful_deletion_marks_the_object_and_later_writes_keep_the_mark(store, pods):
    created = store.create(pods, pod("a"))
    marked = store.mark_deleting(pods, "team-nlp", "a", 30)
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 30
    assert "deletionTimestamp" not in created["metadata"]
    again = store.mark_deleting(pods, "team-nlp", "a", 5)
    assert again is marked
    fresh = store.get(pods, "team-nlp", "a")
    del fresh["metadata"]["deletionTimestamp"]
    updated = store.update(pods, fresh)
    assert updated["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]


def test_watch_history_is_per_type_and_compacts(store, pods):
    services = store.registry.get("", "v1", "services")
    store.create(pods, pod("a"))
    rv = store.resource_version
    store.create(services, {"metadata": {"name": "s", "namespace": "team-nlp"}})
    store.create(pods, pod("b"))
    assert [c.obj["metadata"]["name"] for c in store.changes_since(pods, rv)] == ["b"]
    store.compact()
    assert store.changes_since(pods, rv) is None
    assert store.changes_since(pods, store.resource_version) == []


def test_clone_is_a_deep_copy():
    original = {"a": [{"b": 1}, "s", 2.5, None, True], "t": (1, [2])}
    copied = clone(original)
    assert copied == original
    copied["a"][0]["b"] = 2
    copied["t"][1].append(3)
    assert original == {"a": [{"b": 1}, "s", 2.5, None, True], "t": (1, [2])}


def test_events_expire_after_their_ttl_as_the_api_server_deletes_them():
    from simcluster.cluster import Cluster

    cluster = Cluster(speed=50)
    cluster.events.ttl = 60.0
    clock = cluster.clock
    clock.begin_warp(1_000_000.0)
    pod = {"kind": "Pod", "apiVersion": "v1",
           "metadata": {"name": "p", "namespace": "default", "uid": "u1"}}
    events = cluster.rt("events")
    cluster.events.record(pod, "Normal", "Pulled", "pulled", "kubelet")
    clock._virtual_now = 1_000_030.0
    cluster.events.record(pod, "Normal", "Started", "started", "kubelet")
    clock._virtual_now = 1_000_050.0
    cluster.events.record(pod, "Normal", "Pulled", "pulled", "kubelet")  # updated: kept
    clock._virtual_now = 1_000_095.0
    cluster.events.record(pod, "Normal", "Killing", "stopping", "kubelet")
    reasons = sorted(e["reason"] for e in cluster.store.iter_raw(events, "default"))
    assert reasons == ["Killing", "Pulled"]  # Started (65 s old) went

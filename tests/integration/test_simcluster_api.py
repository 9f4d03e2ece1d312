"""The Kubernetes API of simcluster through the official `kubernetes` client and raw HTTP:
CRUD on every served type, generateName, conflicts, patches, cascading deletion, lists,
selectors, watches (resume, bookmarks, 410) and the Status answers to bad input."""

from __future__ import annotations

import json
import threading
import uuid

import pytest
import requests
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests import simcluster_process
from tests.prometheus_text import matching, parse
from tests.waiting import wait_until

NS = "team-nlp"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def core(admin_api):
    return client.CoreV1Api(admin_api)


@pytest.fixture(scope="module")
def custom(admin_api):
    return client.CustomObjectsApi(admin_api)


class Raw:
    """Plain HTTP against the API, for what typed clients cannot send."""

    def __init__(self, cluster: simcluster_process.SimCluster) -> None:
        self.cluster = cluster
        self.session = requests.Session()

    def __call__(self, method: str, path: str, user: str | None = "admin",
                 **kw) -> requests.Response:
        headers = dict(kw.pop("headers", {}))
        if user is not None:
            headers.setdefault("Authorization", f"Bearer {self.cluster.token(user)}")
        # verify per request: REQUESTS_CA_BUNDLE would override a session default
        return self.session.request(method, self.cluster.api_url + path, headers=headers,
                                    verify=str(self.cluster.ca_file), timeout=30, **kw)


@pytest.fixture(scope="module")
def raw(simcluster):
    return Raw(simcluster)


def assert_status(resp: requests.Response, code: int, reason: str) -> dict:
    assert resp.status_code == code, resp.text
    body = resp.json()
    assert body["kind"] == "Status" and body["apiVersion"] == "v1"
    assert body["status"] == "Failure" and body["code"] == code
    assert body["reason"] == reason, body
    return body


def gone(read) -> bool:
    try:
        read()
    except ApiException as e:
        return e.status == 404
    return False


def labels(**kv: str) -> dict:
    return {"metadata": {"labels": kv}}


# -- CRUD on every type ------------------------------------------------------------------------
def _crud(create, read, list_names, patch, delete, name: str):
    created = create()
    assert created.metadata.name == name
    assert created.metadata.uid and created.metadata.resource_version
    assert created.metadata.creation_timestamp is not None
    assert read().metadata.uid == created.metadata.uid
    assert name in list_names()
    patched = patch()
    assert patched.metadata.labels["checked"] == "yes"
    assert int(patched.metadata.resource_version) > int(created.metadata.resource_version)
    delete()
    wait_until(lambda: name not in list_names(), 10, message=f"{name} to go")


def test_crud_on_every_core_type(admin_api):
    core = client.CoreV1Api(admin_api)
    label = {"metadata": {"labels": {"checked": "yes"}}}
    kinds = {
        "configmap": ("config_map", {"data": {"a": "1"}}),
        "secret": ("secret", {"stringData": {"password": "hunter2"}}),
        "service": ("service", {"spec": {"ports": [{"port": 80}], "selector": {"a": "b"}}}),
        "serviceaccount": ("service_account", {}),
        "pvc": ("persistent_volume_claim", {"spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
        "quota": ("resource_quota", {"spec": {"hard": {"count/configmaps": "100"}}}),
        "limitrange": ("limit_range", {"spec": {"limits": [
            {"type": "Container", "max": {"cpu": "64"}}]}}),
        "event": ("event", {"involvedObject": {"kind": "Pod", "name": "x", "namespace": NS},
                            "reason": "Checked", "message": "by a test", "type": "Normal"}),
    }
    for prefix, (kind, body) in kinds.items():
        name = unique(prefix)
        manifest = dict(body, metadata={"name": name})
        _crud(lambda k=kind, m=manifest: getattr(core, f"create_namespaced_{k}")(NS, m),
              lambda k=kind, n=name: getattr(core, f"read_namespaced_{k}")(n, NS),
              lambda k=kind: [o.metadata.name for o in
                              getattr(core, f"list_namespaced_{k}")(NS).items],
              lambda k=kind, n=name: getattr(core, f"patch_namespaced_{k}")(
                  n, NS, label, _content_type=STRATEGIC),
              lambda k=kind, n=name: getattr(core, f"delete_namespaced_{k}")(n, NS),
              name)
    # cluster-scoped
    for kind, body in (("namespace", {}), ("node", {"status": {"capacity": {"cpu": "4"}}})):
        name = unique(kind)
        _crud(lambda k=kind, n=name, b=body: getattr(core, f"create_{k}")(
                  dict(b, metadata={"name": n})),
              lambda k=kind, n=name: getattr(core, f"read_{k}")(n),
              lambda k=kind: [o.metadata.name for o in getattr(core, f"list_{k}")().items],
              lambda k=kind, n=name: getattr(core, f"patch_{k}")(n, label, _content_type=MERGE),
              lambda k=kind, n=name: getattr(core, f"delete_{k}")(n),
              name)


def test_namespace_status_subresource_and_its_defaults(core):
    ns = core.read_namespace(NS)
    assert ns.status.phase == "Active"
    assert ns.metadata.labels["kubernetes.io/metadata.name"] == NS
    assert core.read_namespace_status(NS).metadata.name == NS


def test_crud_on_batch_rbac_networking_and_scheduling_types(admin_api):
    batch = client.BatchV1Api(admin_api)
    rbac = client.RbacAuthorizationV1Api(admin_api)
    net = client.NetworkingV1Api(admin_api)
    sched = client.SchedulingV1Api(admin_api)
    label = {"metadata": {"labels": {"checked": "yes"}}}
    job = unique("job")
    _crud(lambda: batch.create_namespaced_job(NS, {"metadata": {"name": job}, "spec": {
              "suspend": True, "template": {"spec": {"restartPolicy": "Never", "containers": [
                  {"name": "c", "image": "busybox"}]}}}}),
          lambda: batch.read_namespaced_job(job, NS),
          lambda: [j.metadata.name for j in batch.list_namespaced_job(NS).items],
          lambda: batch.patch_namespaced_job(job, NS, label, _content_type=STRATEGIC),
          lambda: batch.delete_namespaced_job(job, NS, propagation_policy="Background"),
          job)
    role, binding = unique("role"), unique("rb")
    rule = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
    _crud(lambda: rbac.create_namespaced_role(NS, {"metadata": {"name": role}, "rules": rule}),
          lambda: rbac.read_namespaced_role(role, NS),
          lambda: [r.metadata.name for r in rbac.list_namespaced_role(NS).items],
          lambda: rbac.patch_namespaced_role(role, NS, label, _content_type=MERGE),
          lambda: rbac.delete_namespaced_role(role, NS), role)
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}
    subjects = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]
    _crud(lambda: rbac.create_namespaced_role_binding(NS, {
              "metadata": {"name": binding}, "roleRef": ref, "subjects": subjects}),
          lambda: rbac.read_namespaced_role_binding(binding, NS),
          lambda: [r.metadata.name for r in rbac.list_namespaced_role_binding(NS).items],
          lambda: rbac.patch_namespaced_role_binding(binding, NS, label, _content_type=MERGE),
          lambda: rbac.delete_namespaced_role_binding(binding, NS), binding)
    crole, cbinding = unique("crole"), unique("crb")
    _crud(lambda: rbac.create_cluster_role({"metadata": {"name": crole}, "rules": rule}),
          lambda: rbac.read_cluster_role(crole),
          lambda: [r.metadata.name for r in rbac.list_cluster_role().items],
          lambda: rbac.patch_cluster_role(crole, label, _content_type=MERGE),
          lambda: rbac.delete_cluster_role(crole), crole)
    _crud(lambda: rbac.create_cluster_role_binding({
              "metadata": {"name": cbinding}, "subjects": subjects,
              "roleRef": dict(ref, kind="ClusterRole", name=crole)}),
          lambda: rbac.read_cluster_role_binding(cbinding),
          lambda: [r.metadata.name for r in rbac.list_cluster_role_binding().items],
          lambda: rbac.patch_cluster_role_binding(cbinding, label, _content_type=MERGE),
          lambda: rbac.delete_cluster_role_binding(cbinding), cbinding)
    netpol = unique("np")
    _crud(lambda: net.create_namespaced_network_policy(NS, {"metadata": {"name": netpol},
                                                            "spec": {"podSelector": {}}}),
          lambda: net.read_namespaced_network_policy(netpol, NS),
          lambda: [n.metadata.name for n in net.list_namespaced_network_policy(NS).items],
          lambda: net.patch_namespaced_network_policy(netpol, NS, label, _content_type=MERGE),
          lambda: net.delete_namespaced_network_policy(netpol, NS), netpol)
    pc = unique("pc")
    _crud(lambda: sched.create_priority_class({"metadata": {"name": pc}, "value": 1000}),
          lambda: sched.read_priority_class(pc),
          lambda: [p.metadata.name for p in sched.list_priority_class().items],
          lambda: sched.patch_priority_class(pc, label, _content_type=MERGE),
          lambda: sched.delete_priority_class(pc), pc)


def test_pods_are_created_defaulted_and_listed_by_the_typed_client(core):
    name = unique("pod")
    pod = core.create_namespaced_pod(NS, {"metadata": {"name": name}, "spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox:1.36",
                        "resources": {"limits": {"cpu": "1", "memory": "64Mi"}}}]}})
    assert pod.status.phase == "Pending"
    assert pod.status.qos_class == "Guaranteed"
    container = pod.spec.containers[0]
    assert container.image_pull_policy == "IfNotPresent"
    assert container.resources.requests == {"cpu": "1", "memory": "64Mi"}
    assert pod.spec.service_account_name == "default"
    assert {t.key for t in pod.spec.tolerations} >= {"node.kubernetes.io/not-ready"}
    assert name in [p.metadata.name for p in core.list_namespaced_pod(NS).items]
    assert core.read_namespaced_pod_status(name, NS).metadata.name == name
    core.delete_namespaced_pod(name, NS, grace_period_seconds=0)
    wait_until(lambda: name not in [p.metadata.name for p in core.list_namespaced_pod(NS).items],
               30, message=f"pod {name} deleted")


def test_custom_resources_crud(custom):
    for version, plural, kind, field in (
            ("v2beta1", "mpijobs", "MPIJob", "mpiReplicaSpecs"),
            ("v1", "pytorchjobs", "PyTorchJob", "pytorchReplicaSpecs"),
            ("v1", "tfjobs", "TFJob", "tfReplicaSpecs")):
        name = unique(plural[:-4])
        body = {"apiVersion": f"kubeflow.org/{version}", "kind": kind,
                "metadata": {"name": name},
                "spec": {"runPolicy": {"suspend": True}, field: {"Worker": {
                    "replicas": 1, "template": {"spec": {"containers": [
                        {"name": "c", "image": "busybox"}]}}}}}}
        created = custom.create_namespaced_custom_object("kubeflow.org", version, NS, plural,
                                                         body)
        assert created["metadata"]["name"] == name and created["kind"] == kind
        got = custom.get_namespaced_custom_object("kubeflow.org", version, NS, plural, name)
        assert got["metadata"]["uid"] == created["metadata"]["uid"]
        listed = custom.list_namespaced_custom_object("kubeflow.org", version, NS, plural)
        assert listed["kind"] == f"{kind}List" and listed["metadata"]["resourceVersion"]
        assert all(i["kind"] == kind for i in listed["items"])
        patched = custom.patch_namespaced_custom_object("kubeflow.org", version, NS, plural,
                                                        name, labels(checked="yes"))
        assert patched["metadata"]["labels"] == {"checked": "yes"}
        assert patched["metadata"]["generation"] == 1  # metadata is not spec
        custom.delete_namespaced_custom_object("kubeflow.org", version, NS, plural, name)
        wait_until(lambda v=version, p=plural, n=name: gone(
            lambda: custom.get_namespaced_custom_object("kubeflow.org", v, NS, p, n)),
            10, message=f"{plural} {name} deleted")


def test_openshift_cluster_objects_crud(custom):
    name = unique("client")
    created = custom.create_cluster_custom_object("oauth.openshift.io", "v1", "oauthclients", {
        "apiVersion": "oauth.openshift.io/v1", "kind": "OAuthClient",
        "metadata": {"name": name}, "secret": "s3cret", "grantMethod": "auto",
        "redirectURIs": ["http://localhost/cb"]})
    assert created["metadata"]["name"] == name
    assert name in [c["metadata"]["name"] for c in custom.list_cluster_custom_object(
        "oauth.openshift.io", "v1", "oauthclients")["items"]]
    custom.delete_cluster_custom_object("oauth.openshift.io", "v1", "oauthclients", name)
    group = unique("group")
    custom.create_cluster_custom_object("user.openshift.io", "v1", "groups", {
        "apiVersion": "user.openshift.io/v1", "kind": "Group", "metadata": {"name": group},
        "users": ["alice"]})
    assert custom.get_cluster_custom_object("user.openshift.io", "v1", "groups",
                                            group)["users"] == ["alice"]
    custom.delete_cluster_custom_object("user.openshift.io", "v1", "groups", group)


# -- names, conflicts, patches --------------------------------------------------------------
def test_generate_name_gives_each_object_its_own_name(core):
    made = [core.create_namespaced_config_map(NS, {"metadata": {"generateName": "gen-"}})
            for _ in range(3)]
    names = {m.metadata.name for m in made}
    assert len(names) == 3
    assert all(n.startswith("gen-") and len(n) == len("gen-") + 5 for n in names)
    for n in names:
        core.delete_namespaced_config_map(n, NS)


def test_create_twice_is_already_exists(core):
    name = unique("twice")
    core.create_namespaced_config_map(NS, {"metadata": {"name": name}})
    with pytest.raises(ApiException) as e:
        core.create_namespaced_config_map(NS, {"metadata": {"name": name}})
    body = json.loads(e.value.body)
    assert e.value.status == 409 and body["reason"] == "AlreadyExists"
    assert body["message"] == f'configmaps "{name}" already exists'
    assert body["details"] == {"name": name, "kind": "configmaps"}


def test_stale_update_is_a_conflict(core):
    name = unique("conflict")
    first = core.create_namespaced_config_map(NS, {"metadata": {"name": name},
                                                   "data": {"v": "1"}})
    first.data = {"v": "2"}
    second = core.replace_namespaced_config_map(name, NS, first)
    assert second.data == {"v": "2"}
    first.data = {"v": "3"}  # still carries the old resourceVersion
    with pytest.raises(ApiException) as e:
        core.replace_namespaced_config_map(name, NS, first)
    body = json.loads(e.value.body)
    assert e.value.status == 409 and body["reason"] == "Conflict"
    assert body["message"] == (
        f'Operation cannot be fulfilled on configmaps "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again")
    # without a resourceVersion an update is unconditional
    second.metadata.resource_version = None
    second.data = {"v": "4"}
    assert core.replace_namespaced_config_map(name, NS, second).data == {"v": "4"}


def test_no_op_update_keeps_the_resource_version(core):
    name = unique("noop")
    made = core.create_namespaced_config_map(NS, {"metadata": {"name": name},
                                                  "data": {"a": "1"}})
    again = core.patch_namespaced_config_map(name, NS, {"data": {"a": "1"}}, _content_type=MERGE)
    assert again.metadata.resource_version == made.metadata.resource_version


def test_merge_json_and_strategic_patches(core):
    name = unique("patched")
    core.create_namespaced_config_map(NS, {"metadata": {"name": name, "labels": {"a": "1"}},
                                           "data": {"x": "1", "y": "2"}})
    merged = core.patch_namespaced_config_map(
        name, NS, {"metadata": {"labels": {"b": "2"}}, "data": {"y": None}}, _content_type=MERGE)
    assert merged.metadata.labels == {"a": "1", "b": "2"} and merged.data == {"x": "1"}
    patched = core.patch_namespaced_config_map(name, NS, [
        {"op": "add", "path": "/data/z", "value": "3"},
        {"op": "remove", "path": "/metadata/labels/a"},
        {"op": "test", "path": "/data/x", "value": "1"}], _content_type=JSON_PATCH)
    assert patched.data == {"x": "1", "z": "3"} and patched.metadata.labels == {"b": "2"}
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_config_map(name, NS, [
            {"op": "replace", "path": "/data/missing", "value": "x"}], _content_type=JSON_PATCH)
    assert e.value.status == 422


def test_strategic_merge_patch_merges_containers_by_name(core):
    name = unique("smp")
    core.create_namespaced_pod(NS, {"metadata": {"name": name}, "spec": {
        "containers": [{"name": "a", "image": "img:1"}, {"name": "b", "image": "img:1"}]}})
    pod = core.patch_namespaced_pod(name, NS, {"spec": {"containers": [
        {"name": "b", "image": "img:2"}]}}, _content_type=STRATEGIC)
    assert [(c.name, c.image) for c in pod.spec.containers] == [("a", "img:1"), ("b", "img:2")]
    # a JSON merge patch replaces the whole list, dropping container "a": a pod may not
    with pytest.raises(ApiException) as e:
        core.patch_namespaced_pod(name, NS, {"spec": {"containers": [
            {"name": "b", "image": "img:3"}]}}, _content_type=MERGE)
    assert e.value.status == 422
    assert "pod updates may not change fields" in json.loads(e.value.body)["message"]
    core.delete_namespaced_pod(name, NS, grace_period_seconds=0)


def test_custom_resources_refuse_strategic_merge_patch(raw):
    resp = raw("PATCH", f"/apis/kubeflow.org/v2beta1/namespaces/{NS}/mpijobs/whatever",
               data="{}", headers={"Content-Type": STRATEGIC})
    assert resp.status_code in (404, 415)
    name = unique("smp-mpi")
    raw("POST", f"/apis/kubeflow.org/v2beta1/namespaces/{NS}/mpijobs", json={
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": name},
        "spec": {"runPolicy": {"suspend": True}, "mpiReplicaSpecs": {}}})
    body = assert_status(raw("PATCH", f"/apis/kubeflow.org/v2beta1/namespaces/{NS}/mpijobs/"
                             f"{name}", data="{}", headers={"Content-Type": STRATEGIC}),
                         415, "UnsupportedMediaType")
    assert "application/merge-patch+json" in body["message"]
    raw("DELETE", f"/apis/kubeflow.org/v2beta1/namespaces/{NS}/mpijobs/{name}")


# -- deletion ---------------------------------------------------------------------------------
def _owned(core, owner, name: str):
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": owner.metadata.name,
           "uid": owner.metadata.uid}
    return core.create_namespaced_config_map(NS, {"metadata": {
        "name": name, "ownerReferences": [ref]}})


def test_delete_cascades_to_dependents_in_the_background(core):
    owner = core.create_namespaced_config_map(NS, {"metadata": {"name": unique("owner")}})
    kids = [_owned(core, owner, unique("kid")).metadata.name for _ in range(2)]
    status = core.delete_namespaced_config_map(owner.metadata.name, NS)
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"] == {"name": owner.metadata.name, "kind": "configmaps",
                                 "uid": owner.metadata.uid}
    names = lambda: {c.metadata.name for c in core.list_namespaced_config_map(NS).items}  # noqa: E731
    wait_until(lambda: not set(kids) & names(), 15, message="dependents collected")


def test_orphan_deletion_keeps_dependents_and_drops_their_owner_reference(core):
    owner = core.create_namespaced_config_map(NS, {"metadata": {"name": unique("owner")}})
    kid = _owned(core, owner, unique("orphan")).metadata.name
    core.delete_namespaced_config_map(owner.metadata.name, NS, propagation_policy="Orphan")
    left = core.read_namespaced_config_map(kid, NS)
    assert not left.metadata.owner_references
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map(owner.metadata.name, NS)
    assert e.value.status == 404
    core.delete_namespaced_config_map(kid, NS)


def test_delete_preconditions_and_missing_objects(core):
    name = unique("precond")
    made = core.create_namespaced_config_map(NS, {"metadata": {"name": name}})
    with pytest.raises(ApiException) as e:
        core.delete_namespaced_config_map(name, NS, body={"preconditions": {"uid": "nope"}})
    assert e.value.status == 409
    core.delete_namespaced_config_map(name, NS, body={"preconditions": {
        "uid": made.metadata.uid}})
    with pytest.raises(ApiException) as e:
        core.delete_namespaced_config_map(name, NS)
    assert e.value.status == 404
    assert json.loads(e.value.body)["message"] == f'configmaps "{name}" not found'


# -- lists and selectors ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def labelled(core):
    prefix = unique("sel")
    specs = {"a": {"app": "web", "tier": "front"}, "b": {"app": "web"},
             "c": {"app": "db", "tier": "back"}, "d": {"app": "cache"}}
    for suffix, kv in specs.items():
        core.create_namespaced_config_map(NS, {"metadata": {
            "name": f"{prefix}-{suffix}", "labels": dict(kv, batch=prefix)}})
    return prefix


@pytest.mark.parametrize("selector,expected", [
    ("app=web", "ab"), ("app==web", "ab"), ("app!=web", "cd"), ("app in (web,db)", "abc"),
    ("app notin (web)", "cd"), ("tier", "ac"), ("!tier", "bd"), ("app=web,tier", "a"),
    ("app in (web), tier notin (front)", "b"), ("app=nothing", ""),
])
def test_label_selectors(core, labelled, selector, expected):
    items = core.list_namespaced_config_map(
        NS, label_selector=f"batch={labelled},{selector}").items
    assert sorted(i.metadata.name[-1] for i in items) == list(expected)


def test_field_selectors(core, labelled, admin_api):
    name = f"{labelled}-c"
    items = core.list_namespaced_config_map(NS, field_selector=f"metadata.name={name}").items
    assert [i.metadata.name for i in items] == [name]
    assert not core.list_namespaced_config_map(
        NS, field_selector=f"metadata.name={name},metadata.namespace!={NS}").items
    everywhere = core.list_config_map_for_all_namespaces(
        field_selector=f"metadata.namespace={NS}", label_selector=f"batch={labelled}").items
    assert len(everywhere) == 4
    core.create_namespaced_event(NS, {
        "metadata": {"name": unique("ev")}, "type": "Warning", "reason": "Checked",
        "message": "field selectors", "involvedObject": {"kind": "ConfigMap", "name": name,
                                                         "namespace": NS}})
    events = core.list_namespaced_event(
        NS, field_selector=f"involvedObject.name={name},involvedObject.kind=ConfigMap,"
                           "type=Warning").items
    assert [e.reason for e in events] == ["Checked"]
    pods = core.list_namespaced_pod(NS, field_selector="status.phase=Nothing,spec.nodeName=")
    assert pods.items == []


def test_unsupported_field_selector_is_a_bad_request(core):
    with pytest.raises(ApiException) as e:
        core.list_namespaced_config_map(NS, field_selector="data.a=1")
    assert e.value.status == 400
    assert json.loads(e.value.body)["message"] == 'field label not supported: data.a'


def test_paginated_lists_with_limit_and_continue(core, labelled):
    first = core.list_namespaced_config_map(NS, label_selector=f"batch={labelled}", limit=3)
    assert len(first.items) == 3
    assert first.metadata._continue and first.metadata.resource_version
    # as the API server: with a selector, how many remain is not known
    assert first.metadata.remaining_item_count is None
    rest = core.list_namespaced_config_map(NS, label_selector=f"batch={labelled}", limit=3,
                                           _continue=first.metadata._continue)
    assert [i.metadata.name for i in first.items + rest.items] == [
        f"{labelled}-{s}" for s in "abcd"]
    assert not rest.metadata._continue


def test_pages_of_an_unfiltered_list_count_what_remains_and_add_up_to_the_list(core, labelled):
    everything = [i.metadata.name for i in core.list_namespaced_config_map(NS).items]
    assert len(everything) >= 4
    seen, token = [], None
    while True:
        page = core.list_namespaced_config_map(NS, limit=2, _continue=token)
        seen += [i.metadata.name for i in page.items]
        token = page.metadata._continue
        if not token:
            assert page.metadata.remaining_item_count is None
            break
        assert page.metadata.remaining_item_count == len(everything) - len(seen)
    assert seen == everything


def test_list_resource_version_moves_with_writes(core):
    before = int(core.list_namespaced_config_map(NS).metadata.resource_version)
    made = core.create_namespaced_config_map(NS, {"metadata": {"name": unique("rv")}})
    after = int(core.list_namespaced_config_map(NS).metadata.resource_version)
    assert before < int(made.metadata.resource_version) <= after


TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;" \
        "g=meta.k8s.io,application/json"


def test_lists_as_tables_for_kubectl(raw, core):
    name = unique("tabled")
    core.create_namespaced_pod(NS, {"metadata": {"name": name}, "spec": {
        "containers": [{"name": "a", "image": "busybox"}, {"name": "b", "image": "busybox"}]}})
    table = raw("GET", f"/api/v1/namespaces/{NS}/pods?fieldSelector=metadata.name%3D{name}",
                headers={"Accept": TABLE}).json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node",
        "Readiness Gates"]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    (row,) = table["rows"]
    assert row["cells"][0] == name and row["cells"][1].endswith("/2")
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["name"] == name
    assert table["metadata"]["resourceVersion"]
    single = raw("GET", f"/api/v1/namespaces/{NS}/pods/{name}", headers={"Accept": TABLE}).json()
    assert single["kind"] == "Table" and single["rows"][0]["cells"][0] == name
    core.delete_namespaced_pod(name, NS, grace_period_seconds=0)
    roles = raw("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                headers={"Accept": TABLE}).json()
    assert [c["name"] for c in roles["columnDefinitions"]] == ["Name", "Created At"]
    jobs = raw("GET", f"/apis/kubeflow.org/v2beta1/namespaces/{NS}/mpijobs",
               headers={"Accept": TABLE}).json()
    assert [(c["name"], c["type"]) for c in jobs["columnDefinitions"]] == [
        ("Name", "string"), ("Age", "date")]
    assert raw("GET", CM_PATH).json()["kind"] == "ConfigMapList"  # plain JSON by default


def test_watch_as_table_sends_columns_once(raw, core):
    start = core.list_namespaced_config_map(NS).metadata.resource_version
    for i in range(2):
        core.create_namespaced_config_map(NS, {"metadata": {"name": unique(f"wt{i}")}})
    resp = raw("GET", f"{CM_PATH}?watch=true&resourceVersion={start}&timeoutSeconds=1",
               headers={"Accept": TABLE}, stream=True)
    events = [json.loads(line) for line in resp.iter_lines() if line]
    assert len(events) >= 2 and all(e["object"]["kind"] == "Table" for e in events)
    assert events[0]["object"]["columnDefinitions"][0]["name"] == "Name"
    assert events[1]["object"]["columnDefinitions"] is None
    assert events[1]["object"]["rows"][0]["cells"][1] == 0  # DATA


# -- watch --------------------------------------------------------------------------------------
def test_watch_resumes_from_a_resource_version(core):
    start = core.list_namespaced_config_map(NS).metadata.resource_version
    name = unique("watched")
    core.create_namespaced_config_map(NS, {"metadata": {"name": name}, "data": {"v": "1"}})
    core.patch_namespaced_config_map(name, NS, {"data": {"v": "2"}}, _content_type=MERGE)
    core.delete_namespaced_config_map(name, NS)
    seen = []
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, NS, resource_version=start,
                          field_selector=f"metadata.name={name}", timeout_seconds=5):
        seen.append((event["type"], event["object"].data, event["object"].metadata))
        if event["type"] == "DELETED":
            w.stop()
    assert [(t, d) for t, d, _ in seen] == [("ADDED", {"v": "1"}), ("MODIFIED", {"v": "2"}),
                                           ("DELETED", {"v": "2"})]
    modified_rv = seen[1][2].resource_version
    again = []
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, NS, resource_version=modified_rv,
                          field_selector=f"metadata.name={name}", timeout_seconds=5):
        again.append(event["type"])
        w.stop()
    assert again == ["DELETED"]


def test_watch_without_resource_version_starts_with_current_objects(core, labelled):
    w = watch.Watch()
    added = []
    for event in w.stream(core.list_namespaced_config_map, NS,
                          label_selector=f"batch={labelled}", timeout_seconds=5):
        added.append(event["object"].metadata.name)
        if len(added) == 4:
            w.stop()
    assert sorted(added) == [f"{labelled}-{s}" for s in "abcd"]


def test_watch_sees_objects_leave_a_label_selection(core):
    name = unique("leaving")
    core.create_namespaced_config_map(NS, {"metadata": {"name": name,
                                                        "labels": {"phase": "in"}}})
    start = core.read_namespaced_config_map(name, NS).metadata.resource_version
    events = []

    def relabel() -> None:
        core.patch_namespaced_config_map(name, NS, labels(phase="out"), _content_type=MERGE)

    w = watch.Watch()
    timer = threading.Timer(0.3, relabel)
    timer.start()
    for event in w.stream(core.list_namespaced_config_map, NS, label_selector="phase=in",
                          resource_version=start, timeout_seconds=5):
        events.append(event["type"])
        w.stop()
    timer.join()
    assert events == ["DELETED"]


# -- a small watch window: bookmarks, 410 and relist ---------------------------------------
@pytest.fixture(scope="module")
def small_window(tmp_path_factory):
    cluster = simcluster_process.start(
        tmp_path_factory.mktemp("small-window") / "state", scenario="empty", speed=50,
        extra=["--watch-history", "20", "--bookmark-interval", "0.3"])
    yield cluster
    cluster.stop()


def _watch_lines(raw: Raw, path: str) -> list[dict]:
    resp = raw("GET", path, stream=True)
    assert resp.status_code == 200, resp.text
    lines = [json.loads(line) for line in resp.iter_lines() if line]
    resp.close()
    return lines


def test_bookmarks_carry_only_the_resource_version(small_window):
    raw = Raw(small_window)
    events = _watch_lines(raw, f"/api/v1/namespaces/{NS}/configmaps?watch=true&"
                               "allowWatchBookmarks=true&timeoutSeconds=1")
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert bookmarks, events
    obj = bookmarks[-1]["object"]
    assert obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1"
    assert set(obj["metadata"]) <= {"resourceVersion", "creationTimestamp"}
    assert int(obj["metadata"]["resourceVersion"]) > 0
    plain = _watch_lines(raw, f"/api/v1/namespaces/{NS}/configmaps?watch=true&"
                              "timeoutSeconds=1")
    assert not [e for e in plain if e["type"] == "BOOKMARK"]


def test_python_client_follows_bookmarks(small_window):
    core = client.CoreV1Api(small_window.api_client("admin"))
    rv = core.list_namespaced_config_map(NS).metadata.resource_version
    w = watch.Watch()
    types = []
    for event in w.stream(core.list_namespaced_config_map, NS, resource_version=rv,
                          allow_watch_bookmarks=True, timeout_seconds=2):
        types.append(event["type"])
        if event["type"] == "BOOKMARK":
            w.stop()
    assert types == ["BOOKMARK"]
    assert w.resource_version is not None


def test_too_old_resource_version_is_a_410_error_event_then_relist_works(small_window):
    raw = Raw(small_window)
    core = client.CoreV1Api(small_window.api_client("admin"))
    old = core.list_namespaced_config_map(NS).metadata.resource_version
    for i in range(25):
        core.create_namespaced_config_map(NS, {"metadata": {"name": f"churn-{i}"}})
    events = _watch_lines(raw, f"/api/v1/namespaces/{NS}/configmaps?watch=true&"
                               f"resourceVersion={old}&timeoutSeconds=2")
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["kind"] == "Status" and status["code"] == 410
    assert status["reason"] == "Expired" and status["status"] == "Failure"
    assert status["message"].startswith(f"too old resource version: {old} (")
    # the official client retries once, then gives up with 410
    w = watch.Watch()
    with pytest.raises(ApiException) as e:
        for _ in w.stream(core.list_namespaced_config_map, NS, resource_version=old):
            pass
    assert e.value.status == 410
    # relist, then watch from the list's resourceVersion
    fresh = core.list_namespaced_config_map(NS)
    assert len([c for c in fresh.items if c.metadata.name.startswith("churn-")]) == 25
    core.create_namespaced_config_map(NS, {"metadata": {"name": "after-relist"}})
    w = watch.Watch()
    seen = []
    for event in w.stream(core.list_namespaced_config_map, NS,
                          resource_version=fresh.metadata.resource_version, timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name))
        w.stop()
    assert seen == [("ADDED", "after-relist")]


# -- bad input ------------------------------------------------------------------------------
CM_PATH = f"/api/v1/namespaces/{NS}/configmaps"


def test_malformed_json_and_yaml_are_bad_requests(raw):
    body = assert_status(raw("POST", CM_PATH, data='{"metadata": {',
                             headers={"Content-Type": "application/json"}), 400, "BadRequest")
    assert body["message"].startswith("the object provided is unrecognized (must be of type "
                                      "ConfigMap): couldn't get version/kind; json parse error")
    assert_status(raw("POST", CM_PATH, data="metadata: [unclosed",
                      headers={"Content-Type": "application/yaml"}), 400, "BadRequest")
    assert_status(raw("POST", CM_PATH, data="[1, 2]",
                      headers={"Content-Type": "application/json"}), 400, "BadRequest")
    ok = raw("POST", CM_PATH, data=f"metadata:\n  name: {unique('yaml')}\ndata:\n  a: b\n",
             headers={"Content-Type": "application/yaml"})
    assert ok.status_code == 201 and ok.json()["data"] == {"a": "b"}


def test_wrong_kind_and_api_version_are_bad_requests(raw):
    body = assert_status(raw("POST", CM_PATH, json={
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}), 400, "BadRequest")
    assert body["message"].startswith('Secret in version "v1" cannot be handled as a ConfigMap')
    body = assert_status(raw("POST", CM_PATH, json={
        "apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "x"}}), 400, "BadRequest")
    assert body["message"].startswith('ConfigMap in version "v2" cannot be handled as a '
                                      "ConfigMap")
    body = assert_status(raw("POST", CM_PATH, json={
        "apiVersion": "batch/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        400, "BadRequest")
    assert body["message"].startswith('ConfigMap in version "v1" cannot be handled as a '
                                      'ConfigMap: no kind "ConfigMap" is registered for version '
                                      '"batch/v1"')
    body = assert_status(raw("POST", CM_PATH, json={
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "other"}}),
        400, "BadRequest")
    assert "does not match the namespace" in body["message"]


def test_invalid_objects_are_unprocessable(raw):
    body = assert_status(raw("POST", CM_PATH, json={"metadata": {"name": "Not_A_Name"}}),
                         422, "Invalid")
    assert body["message"].startswith('ConfigMap "Not_A_Name" is invalid: metadata.name: '
                                      'Invalid value: "Not_A_Name": a lowercase RFC 1123')
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    # NewInvalid names the Kind; NotFound and AlreadyExists name the resource
    assert (body["details"]["kind"], body["details"]["name"]) == ("ConfigMap", "Not_A_Name")
    assert "group" not in body["details"]
    body = assert_status(raw("POST", f"/apis/kubeflow.org/v2beta1/namespaces/{NS}/mpijobs",
                             json={"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                                   "metadata": {"name": "nospec"}, "spec": {}}),
                         422, "Invalid")
    assert body["details"]["kind"] == "MPIJob"
    assert body["details"]["group"] == "kubeflow.org"
    body = assert_status(raw("GET", f"{CM_PATH}/missing-cm"), 404, "NotFound")
    assert body["details"]["kind"] == "configmaps"
    body = assert_status(raw("POST", CM_PATH, json={"metadata": {}}), 422, "Invalid")
    assert "name or generateName is required" in body["message"]
    body = assert_status(raw("POST", f"/api/v1/namespaces/{NS}/pods", json={
        "metadata": {"name": "nocontainers"}, "spec": {}}), 422, "Invalid")
    assert body["message"] == ('Pod "nocontainers" is invalid: spec.containers: '
                               "Required value")


@pytest.mark.parametrize("path,body,message", [
    (f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": "p"}, "spec": {"containers": "c"}},
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go '
     "struct field Pod.spec.containers of type []struct"),
    (CM_PATH, {"metadata": {"name": "c", "labels": {"gpus": 8}}},
     'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
     "number into Go struct field ConfigMap.metadata.labels.gpus of type string"),
    (CM_PATH, {"metadata": {"name": "c"}, "data": ["a"]},
     "json: cannot unmarshal array into Go struct field ConfigMap.data of type "
     "map[string]string"),
    (f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "i", "resources": {"limits": {"cpu": "lots"}}}]}},
     'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular '
     "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("/apis/rbac.authorization.k8s.io/v1/namespaces/team-nlp/roles",
     {"metadata": {"name": "r"}, "rules": [{"verbs": "get"}]},
     "json: cannot unmarshal string into Go struct field Role.rules[0].verbs of type []string"),
    (f"/api/v1/namespaces/{NS}/events", {"metadata": {"name": "e"}, "involvedObject": "pod"},
     "json: cannot unmarshal string into Go struct field Event.involvedObject of type struct"),
])
def test_values_of_the_wrong_type_are_refused_when_decoded(raw, path, body, message):
    result = assert_status(raw("POST", path, json=body), 400, "BadRequest")
    assert message in result["message"]


def test_invalid_labels_are_unprocessable(raw):
    body = assert_status(raw("POST", CM_PATH, json={"metadata": {
        "name": "labelled", "labels": {"team": "bad value!"}}}), 422, "Invalid")
    assert body["message"].startswith(
        'ConfigMap "labelled" is invalid: metadata.labels: Invalid value: "bad value!": a valid '
        "label must be an empty string or consist of alphanumeric characters")


def test_unknown_fields_of_built_in_kinds_are_dropped_or_refused(raw):
    name = unique("unknown")
    resp = raw("POST", CM_PATH, json={"metadata": {"name": name, "colour": "blue"},
                                      "data": {"a": "b"}})
    assert resp.status_code == 201
    assert "colour" not in resp.json()["metadata"]
    assert resp.headers["Warning"] == '299 - "unknown field \\"metadata.colour\\""'
    body = assert_status(raw("POST", f"/api/v1/namespaces/{NS}/pods?fieldValidation=Strict",
                             json={"metadata": {"name": "strict"}, "spec": {"containers": [
                                 {"name": "c", "image": "i", "colour": "blue"}]}}),
                         400, "BadRequest")
    assert body["message"] == ('Pod in version "v1" cannot be handled as a Pod: strict decoding '
                               'error: unknown field "spec.containers[0].colour"')


def test_unknown_resources_and_namespaces_are_not_found(raw):
    body = assert_status(raw("GET", f"/api/v1/namespaces/{NS}/widgets"), 404, "NotFound")
    assert body["message"] == "the server could not find the requested resource"
    assert_status(raw("GET", "/apis/widgets.example.com/v1/widgets"), 404, "NotFound")
    assert_status(raw("GET", "/no/such/path"), 404, "NotFound")
    body = assert_status(raw("POST", "/api/v1/namespaces/nowhere/configmaps", json={
        "metadata": {"name": "x"}}), 404, "NotFound")
    assert body["message"] == 'namespaces "nowhere" not found'
    body = assert_status(raw("GET", f"/apis/kubeflow.org/v2beta1/namespaces/{NS}/mpijobs/nope"),
                         404, "NotFound")
    assert body["message"] == 'mpijobs.kubeflow.org "nope" not found'
    assert body["details"] == {"name": "nope", "group": "kubeflow.org", "kind": "mpijobs"}


def test_missing_and_bad_tokens_are_unauthorized(raw):
    for headers in ({}, {"Authorization": "Bearer not-a-token"},
                    {"Authorization": "Bearer sha256~forged"}, {"Authorization": "Basic YTpi"}):
        body = assert_status(raw("GET", CM_PATH, user=None, headers=headers), 401,
                             "Unauthorized")
        assert body["message"] == "Unauthorized"
    assert raw("GET", "/version", user=None).status_code == 200


def test_forbidden_is_worded_like_rbac(raw):
    body = assert_status(raw("POST", f"/apis/kubeflow.org/v2beta1/namespaces/{NS}/mpijobs",
                             user="bob", json={"metadata": {"name": "x"}}), 403, "Forbidden")
    assert body["message"] == (
        'mpijobs.kubeflow.org is forbidden: User "bob" cannot create resource "mpijobs" in '
        'API group "kubeflow.org" in the namespace "team-nlp"')
    assert body["details"] == {"group": "kubeflow.org", "kind": "mpijobs"}


def test_huge_bodies_are_too_large(raw):
    huge = json.dumps({"metadata": {"name": "huge"}, "data": {"blob": "x" * (3 * 1024 * 1024)}})
    body = assert_status(raw("POST", CM_PATH, data=huge,
                             headers={"Content-Type": "application/json"}),
                         413, "RequestEntityTooLarge")
    assert body["message"] == "Request entity too large: limit is 3145728"


def test_a_large_body_that_arrives_in_parts_is_read_whole(raw):
    blob = "x" * (2 * 1024 * 1024)
    text = json.dumps({"metadata": {"name": "large"}, "data": {"blob": blob}}).encode()

    def parts():  # sent chunked: the server gets it in many reads
        for start in range(0, len(text), 64 * 1024):
            yield text[start:start + 64 * 1024]

    resp = raw("POST", CM_PATH, data=parts(), headers={"Content-Type": "application/json"})
    assert resp.status_code == 201, resp.text[:300]
    assert resp.json()["data"]["blob"] == blob
    assert raw("DELETE", f"{CM_PATH}/large").status_code == 200


@pytest.mark.parametrize("query,message", [
    ("labelSelector=app%20in%20web", "unable to parse requirement: found 'web' expected: '('"),
    ("labelSelector=app%3D%3D%3Dx", "unable to parse requirement:"),
    ("labelSelector=%2Capp", "found ',', expected: !, identifier, or 'end of string'"),
    ("labelSelector=app%3Dnot%20ok", "found 'ok', expected: ',' or 'end of string'"),
    ("labelSelector=bad_key_%3Dx", "unable to parse requirement:"),
    ("fieldSelector=metadata.name", "invalid selector: 'metadata.name'; can't understand "
                                    "'metadata.name'"),
    ("limit=ten", "ten"),
    ("continue=%25%25%25", "continue key is not valid"),
])
def test_unparsable_query_parameters_are_bad_requests(raw, query, message):
    body = assert_status(raw("GET", f"{CM_PATH}?{query}"), 400, "BadRequest")
    assert message in body["message"]


def test_bad_patches_are_refused(raw):
    name = unique("badpatch")
    raw("POST", CM_PATH, json={"metadata": {"name": name}})
    assert_status(raw("PATCH", f"{CM_PATH}/{name}", data="{",
                      headers={"Content-Type": MERGE}), 400, "BadRequest")
    assert_status(raw("PATCH", f"{CM_PATH}/{name}", data="{}",
                      headers={"Content-Type": "text/plain"}), 415, "UnsupportedMediaType")
    assert_status(raw("PATCH", f"{CM_PATH}/{name}", data='{"op": "add"}',
                      headers={"Content-Type": JSON_PATCH}), 400, "BadRequest")


def test_wrong_methods_are_refused(raw):
    assert_status(raw("PUT", CM_PATH, json={}), 405, "MethodNotAllowed")
    assert_status(raw("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/x",
                      json={}), 405, "MethodNotAllowed")


MALFORMED = [
    (CM_PATH, {"metadata": {"name": "m1", "labels": ["x"]}}),
    (CM_PATH, {"metadata": {"name": "m2", "ownerReferences": [{"uid": 5}]}}),
    (CM_PATH, {"metadata": {"name": 5}}),
    (CM_PATH, {"metadata": {"generateName": ["x"]}}),
    (CM_PATH, {"metadata": "x"}),
    (CM_PATH, {"apiVersion": 5, "metadata": {"name": "m3"}}),
    (f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": "m4"}, "spec": {"containers": [
        {"name": "c", "image": "i", "resources": "x"}]}}),
    (f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": "m5"}, "spec": {
        "containers": [{"name": "c", "image": "i"}], "tolerations": "x"}}),
    (f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": "m6"}, "spec": "x"}),
    (f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": "m7"}, "spec": {
        "containers": [None]}}),
    (f"/api/v1/namespaces/{NS}/services", {"metadata": {"name": "m8"},
                                           "spec": {"ports": [5]}}),
    (f"/api/v1/namespaces/{NS}/resourcequotas", {"metadata": {"name": "m9"},
                                                 "spec": {"hard": "x"}}),
    (f"/api/v1/namespaces/{NS}/secrets", {"metadata": {"name": "m10"}, "stringData": "x"}),
    ("/apis/batch/v1/namespaces/team-nlp/jobs", {"metadata": {"name": "m11"}, "spec": "x"}),
    ("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "metadata": {"name": "m12"}, "aggregationRule": {"clusterRoleSelectors": "x"}}),
    ("/api/v1/nodes", {"metadata": {"name": "m13"}, "status": {"allocatable": {"cpu": "lots"}}}),
    ("/apis/kubeflow.org/v2beta1/namespaces/team-nlp/mpijobs",
     {"metadata": {"name": "m14", "labels": {"a": 1}}, "spec": {"mpiReplicaSpecs": {}}}),
    ("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {"spec": "x"}),
    ("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {"spec": "x"}),
    ("/apis/authorization.k8s.io/v1/subjectaccessreviews", {"spec": {"groups": "abc"}}),
]


@pytest.mark.parametrize("path,body", MALFORMED)
def test_malformed_objects_are_refused_never_stored(raw, path, body):
    resp = raw("POST", path, json=body)
    assert resp.status_code in (400, 422), resp.text
    assert resp.json()["reason"] in ("BadRequest", "Invalid")


def test_malformed_delete_options_are_bad_requests(raw):
    name = unique("delopts")
    raw("POST", CM_PATH, json={"metadata": {"name": name}})
    for options in ({"gracePeriodSeconds": "soon"}, {"preconditions": "x"}, [1],
                    {"propagationPolicy": 3}):
        assert_status(raw("DELETE", f"{CM_PATH}/{name}", json=options), 400, "BadRequest")
    body = assert_status(raw("DELETE", f"{CM_PATH}/{name}",
                             json={"propagationPolicy": "Sideways"}), 422, "Invalid")
    assert 'Unsupported value: "Sideways"' in body["message"]
    assert raw("DELETE", f"{CM_PATH}/{name}").status_code == 200


def test_the_server_keeps_serving_after_bad_input(raw, core):
    for _ in range(3):
        raw("POST", CM_PATH, data=b"\xff\xfe\x00garbage",
            headers={"Content-Type": "application/json"})
        raw("GET", f"{CM_PATH}?watch=true&resourceVersion=abc")
        raw("PATCH", f"{CM_PATH}/nothing", data="[]", headers={"Content-Type": JSON_PATCH})
    assert core.list_namespaced_config_map(NS).metadata.resource_version
    for path in (f"{CM_PATH}?labelSelector=a", "/api/v1/pods", "/api/v1/nodes",
                 "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                 "/apis/kubeflow.org/v2beta1/mpijobs"):
        assert raw("GET", path).status_code == 200
    assert raw("GET", "/readyz", user=None).text == "ok"


# -- the API server's request metrics (/metrics, simcluster/monitoring/requestmetrics.py) --
def _request_metrics(raw) -> dict[tuple[str, frozenset], float]:
    resp = raw("GET", "/metrics")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return parse(resp.text)


def _requests(samples, **labels) -> float:
    return sum(matching(samples, "apiserver_request_total", **labels).values())


def test_metrics_need_the_right_to_get_the_metrics_url(raw):
    body = assert_status(raw("GET", "/metrics", user="alice"), 403, "Forbidden")
    assert 'cannot get path "/metrics"' in body["message"]
    assert raw("GET", "/metrics", user=None).status_code == 401


def test_metrics_count_requests_by_verb_resource_scope_and_code(raw):
    before = _request_metrics(raw)
    raw("GET", CM_PATH)
    raw("GET", CM_PATH)
    raw("GET", f"{CM_PATH}/no-such-map")
    raw("GET", CM_PATH, user=None)
    raw("GET", "/apis/kubeflow.org/v2beta1")
    after = _request_metrics(raw)
    lists = dict(verb="LIST", group="", version="v1", resource="configmaps", subresource="",
                 scope="namespace", component="apiserver")
    assert _requests(after, **lists, code="200") - _requests(before, **lists, code="200") == 2
    assert _requests(after, **lists, code="401") - _requests(before, **lists, code="401") == 1
    gets = dict(verb="GET", resource="configmaps", scope="resource", code="404")
    assert _requests(after, **gets) - _requests(before, **gets) == 1
    discovery = dict(verb="GET", resource="", scope="", subresource="/apis/kubeflow.org/v2beta1")
    assert _requests(after, **discovery) - _requests(before, **discovery) == 1
    # the reading of /metrics itself is a request too
    reads = dict(verb="GET", subresource="/metrics", code="200")
    assert _requests(after, **reads) - _requests(before, **reads) == 1


def test_metrics_count_a_watch_when_it_opens_and_show_it_while_open(raw):
    watches = dict(verb="WATCH", resource="configmaps", scope="namespace")
    before = _request_metrics(raw)
    # the server ends the watch after 3 s (a client that merely goes away is noticed only
    # when the server next writes to it)
    resp = raw("GET", f"{CM_PATH}?watch=true&timeoutSeconds=3", stream=True)
    try:
        assert resp.status_code == 200
        during = _request_metrics(raw)
        assert _requests(during, **watches) - _requests(before, **watches) == 1
        open_now = matching(during, "apiserver_longrunning_requests", **watches)
        assert sum(open_now.values()) >= 1
    finally:
        resp.close()

    def closed() -> bool:
        now = _request_metrics(raw)
        return sum(matching(now, "apiserver_longrunning_requests", **watches).values()) \
            < sum(open_now.values())

    wait_until(closed, 15, message="the ended watch to leave the gauge")

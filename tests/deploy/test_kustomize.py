"""deploy/: every kustomization builds with `kubectl kustomize`, every object fits its
schema, and the things that matter on OpenShift hold: restricted-v2 security contexts,
probes, resources, the Route's host carried to the OAuthClient and ALLOWED_HOSTS, the
secrets the pods read, the dev overlay's embedded watcher."""

from __future__ import annotations

import copy
import json
import re

import pytest

from tests.deploy import manifests as m

reason = m.kubectl_missing_reason()
if reason is None:
    reason = m.kustomize_too_old_reason()
if reason is not None:
    print(f"SKIP test_kustomize: {reason}")
    pytest.skip(reason, allow_module_level=True)

pytestmark = pytest.mark.kubectl

BUILDS = ("base", "overlays/openshift", "overlays/dev", "rbac", "networkpolicy", "monitoring")
HOSTS = {"openshift": "mpijob-dashboard.apps.cluster.example.com",
         "dev": "mpijob-dashboard.apps.dev.example.com"}
SETTINGS = (m.ROOT / "dashboard" / "settings.py").read_text()
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "OAuthClient", "Namespace"}


@pytest.mark.parametrize("path", BUILDS)
def test_every_object_fits_its_schema(path):
    objects = m.build(path)
    assert objects, f"deploy/{path} built nothing"
    for obj in objects:
        m.validate(obj)


@pytest.mark.parametrize("path", BUILDS)
def test_scope_and_labels(path):
    for obj in m.build(path):
        meta = obj["metadata"]
        if obj["kind"] in CLUSTER_SCOPED:
            assert "namespace" not in meta, f"{obj['kind']}/{meta['name']} is cluster-scoped"
        elif path in ("networkpolicy",):  # templates, applied with -n <project>
            assert "namespace" not in meta
        else:
            assert meta.get("namespace") == m.NAMESPACE, f"{obj['kind']}/{meta['name']}"
        assert meta["labels"]["app.kubernetes.io/part-of"] == "mpijob-dashboard"


def test_the_overlays_make_what_the_issue_lists():
    kinds = {o["kind"] for o in m.build("overlays/openshift")}
    assert kinds >= {"Deployment", "Service", "Route", "OAuthClient", "ServiceAccount",
                     "ClusterRole", "ClusterRoleBinding", "ConfigMap", "ServiceMonitor",
                     "PrometheusRule", "PodDisruptionBudget"}
    deployments = {d["metadata"]["name"] for d in m.find(m.build("overlays/openshift"),
                                                           "Deployment")}
    assert deployments == {"mpijob-dashboard-web", "mpijob-dashboard-watcher"}
    services = {s["metadata"]["name"] for s in m.find(m.build("overlays/openshift"), "Service")}
    assert services == {"mpijob-dashboard", "mpijob-dashboard-watcher"}
    monitors = {s["metadata"]["name"] for s in m.find(m.build("overlays/openshift"),
                                                        "ServiceMonitor")}
    assert monitors == {"mpijob-dashboard", "mpijob-dashboard-watcher"}
    # secrets are never in a build: applying again must not reset them to placeholders
    for path in BUILDS:
        assert not m.find(m.build(path), "Secret"), path


@pytest.mark.parametrize("path", ["base", "overlays/openshift", "overlays/dev"])
def test_pods_fit_restricted_v2_and_state_resources(path):
    specs = m.pod_specs(m.build(path))
    assert specs
    for label, spec in specs:
        assert m.restricted_v2_violations(spec) == [], label
        for c in (spec.get("initContainers") or []) + spec["containers"]:
            res = c.get("resources") or {}
            for part in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(res.get(part) or {}), (label, c["name"], part)
            assert c["securityContext"]["readOnlyRootFilesystem"] is True
            mounts = {v["mountPath"] for v in c.get("volumeMounts") or []}
            assert "/tmp" in mounts, (label, c["name"])
        # the in-cluster configuration reads the mounted service-account token
        assert spec.get("automountServiceAccountToken", True) is True


def test_the_restricted_v2_check_catches_what_the_scc_refuses():
    spec = copy.deepcopy(m.one(m.build("base"), "Deployment", "mpijob-dashboard-web")[
        "spec"]["template"]["spec"])
    spec["securityContext"]["runAsUser"] = 1000
    spec["containers"][0]["securityContext"]["capabilities"] = {"add": ["NET_ADMIN"]}
    spec["initContainers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    spec["volumes"].append({"name": "host", "hostPath": {"path": "/var/run"}})
    assert len(m.restricted_v2_violations(spec)) == 5


@pytest.mark.parametrize("path", ["base", "overlays/openshift", "overlays/dev"])
def test_the_web_process(path):
    objects = m.build(path)
    web = m.one(objects, "Deployment", "mpijob-dashboard-web")["spec"]["template"]["spec"]
    (container,) = web["containers"]
    assert container["command"] == ["daphne", "-b", "0.0.0.0", "-p", "8080",
                                    "dashboard.asgi:application"]
    assert container["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    # migrations: an init container of the same image, before the web process starts
    (migrate,) = web["initContainers"]
    assert migrate["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert migrate["image"] == container["image"]
    service = m.one(objects, "Service", "mpijob-dashboard")
    template_labels = m.one(objects, "Deployment", "mpijob-dashboard-web")["spec"][
        "template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= template_labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == "http"


def test_the_watcher_in_production():
    objects = m.build("overlays/openshift")
    deployment = m.one(objects, "Deployment", "mpijob-dashboard-watcher")
    # two hubs, one active: elected through a Lease the watcher's account may use
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"]["type"] == "RollingUpdate"
    spec = deployment["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "mpijob-dashboard-watcher"
    (container,) = spec["containers"]
    assert container["command"][:3] == ["python", "manage.py", "runwatcher"]
    config = m.one(objects, "ConfigMap", "mpijob-dashboard-config")["data"]
    env = m.container_env(container, {"mpijob-dashboard-config": {"data": config}}, {})
    assert env["REDIS_URL"] == "<secret mpijob-dashboard/REDIS_URL>"
    assert env["DATABASE_URL"] == "<secret mpijob-dashboard/DATABASE_URL>"
    assert env["WATCHER_LEADER_ELECTION"] == "true"
    role = m.one(objects, "Role", "mpijob-dashboard-watcher-lease")
    assert {"get", "update"} <= {v for r in role["rules"] for v in r["verbs"]
                                 if r.get("resourceNames") == ["mpijob-dashboard-watcher"]}
    binding = m.one(objects, "RoleBinding", "mpijob-dashboard-watcher-lease")
    assert binding["subjects"][0]["name"] == spec["serviceAccountName"]
    web = m.one(objects, "Deployment", "mpijob-dashboard-web")
    assert web["spec"]["replicas"] == 2
    assert web["spec"]["template"]["spec"]["serviceAccountName"] == "mpijob-dashboard-web"
    web_env = m.container_env(web["spec"]["template"]["spec"]["containers"][0],
                              {"mpijob-dashboard-config": {"data": config}},
                              {"status.podIP": "10.128.2.7"})
    assert web_env["WATCHER_EMBEDDED"] == "false"
    assert web_env["REDIS_URL"] == env["REDIS_URL"]  # the same channel layer
    assert web_env["SESSION_COOKIE_SECURE"] == web_env["BEHIND_TLS_PROXY"] == "true"
    assert web_env["DEBUG"] == "false"


@pytest.mark.parametrize("path", ["base", "overlays/openshift"])
def test_the_watcher_serves_metrics_and_probes_on_its_port(path):
    """runwatcher --metrics-port 9102, the port named `metrics`, the probes and the token on
    it, and the watcher Service on that port selecting the watcher's pods only."""
    objects = m.build(path)
    deployment = m.one(objects, "Deployment", "mpijob-dashboard-watcher")
    template = deployment["spec"]["template"]
    (container,) = template["spec"]["containers"]
    config = {"mpijob-dashboard-config": m.one(objects, "ConfigMap", "mpijob-dashboard-config")}
    env = m.container_env(container, config, {})
    assert container["ports"] == [{"name": "metrics", "containerPort": 9102, "protocol": "TCP"}]
    assert m.runwatcher_metrics_port(container, env) == 9102
    assert "WATCHER_METRICS_PORT" not in env  # one place says the port: the command
    assert env["METRICS_BEARER_TOKEN"] == "<secret mpijob-dashboard-metrics/token>"
    assert "METRICS_ALLOWED_NETWORKS" not in env  # the token, as on the web pods
    probes = {kind: container[kind]["httpGet"]
              for kind in ("startupProbe", "livenessProbe", "readinessProbe")}
    assert probes == {"startupProbe": {"path": "/healthz", "port": "metrics"},
                      "livenessProbe": {"path": "/healthz", "port": "metrics"},
                      "readinessProbe": {"path": "/readyz", "port": "metrics"}}
    assert {m.container_port(container, p["port"]) for p in probes.values()} == {9102}
    # one thread answers the port: liveness outlasts a scrape stuck on the database
    liveness = container["livenessProbe"]
    assert liveness["periodSeconds"] * liveness["failureThreshold"] >= 120
    assert "connect_timeout=" in m.load("base/secret.template.yaml")[0]["stringData"][
        "DATABASE_URL"]

    service = m.one(objects, "Service", "mpijob-dashboard-watcher")
    assert service["metadata"]["labels"]["app.kubernetes.io/component"] == "watcher"
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 9102,
                                         "targetPort": "metrics", "protocol": "TCP"}]
    assert service["spec"]["publishNotReadyAddresses"] is True  # scraped while it lists
    web = m.one(objects, "Deployment", "mpijob-dashboard-web")["spec"]["template"]
    web_service = m.one(objects, "Service", "mpijob-dashboard")
    for svc, own, other in ((service, template, web), (web_service, web, template)):
        selector = svc["spec"]["selector"]
        assert selector.items() <= own["metadata"]["labels"].items()
        assert not selector.items() <= other["metadata"]["labels"].items()


def test_the_dev_overlay_runs_the_hub_in_its_one_web_pod():
    objects = m.build("overlays/dev")
    assert [d["metadata"]["name"] for d in m.find(objects, "Deployment")] == [
        "mpijob-dashboard-web"]
    web = m.one(objects, "Deployment", "mpijob-dashboard-web")
    assert web["spec"]["replicas"] == 1
    assert web["spec"]["strategy"] == {"type": "Recreate"}
    spec = web["spec"]["template"]["spec"]
    # the hub's watches need the watcher's rights; the web pods' own account is gone
    assert spec["serviceAccountName"] == "mpijob-dashboard-watcher"
    assert not m.find(objects, "ServiceAccount", "mpijob-dashboard-web")
    # nor the watcher's metrics Service: the web pod's /metrics has the hub's numbers
    assert [s["metadata"]["name"] for s in m.find(objects, "Service")] == ["mpijob-dashboard"]
    assert not m.find(objects, "ClusterRoleBinding", "mpijob-dashboard-web")
    assert m.find(objects, "ClusterRoleBinding", "mpijob-dashboard-watcher")
    config = {"mpijob-dashboard-config": m.one(objects, "ConfigMap", "mpijob-dashboard-config")}
    data_mounts = set()
    for c in spec["initContainers"] + spec["containers"]:
        env = m.container_env(c, config, {"status.podIP": "10.128.2.7"})
        assert env["DATABASE_URL"] == "sqlite:////var/lib/mpijob-dashboard/db.sqlite3"
        assert "REDIS_URL" not in env  # the in-memory channel layer
        assert env["DEBUG"] == "false" and env["WATCHER_EMBEDDED"] == "true"
        data_mounts |= {(c["name"], v["name"]) for v in c["volumeMounts"]
                        if v["mountPath"] == "/var/lib/mpijob-dashboard"}
    # migrate and web share the SQLite file
    assert data_mounts == {("migrate", "data"), ("web", "data")}
    assert {"name": "data", "emptyDir": {"sizeLimit": "1Gi"}} in spec["volumes"]


@pytest.mark.parametrize("overlay", m.OVERLAYS)
def test_the_route_host_reaches_the_oauth_client_and_allowed_hosts(overlay):
    objects = m.build(f"overlays/{overlay}")
    host = HOSTS[overlay]
    route = m.one(objects, "Route", "mpijob-dashboard")
    assert route["spec"]["host"] == host
    assert route["spec"]["tls"] == {"termination": "edge",
                                    "insecureEdgeTerminationPolicy": "Redirect"}
    assert route["spec"]["to"] == {"kind": "Service", "name": "mpijob-dashboard", "weight": 100}

    client = m.one(objects, "OAuthClient", "mpijob-dashboard")
    assert client["grantMethod"] == "auto"
    assert client["redirectURIs"] == [f"https://{host}/oauth/callback/"]
    assert client["redirectURIs"][0].endswith("/oauth/callback/")
    assert "secret" not in client  # set once with oc patch, never in these files

    config = m.one(objects, "ConfigMap", "mpijob-dashboard-config")
    assert config["data"]["OAUTH_CLIENT_ID"] == client["metadata"]["name"]
    assert config["data"]["OAUTH_SCOPE"] == "user:full"
    web = m.one(objects, "Deployment", "mpijob-dashboard-web")["spec"]["template"]["spec"]
    env = m.container_env(web["containers"][0], {"mpijob-dashboard-config": config},
                          {"status.podIP": "10.128.2.7"})
    assert env["ALLOWED_HOSTS"].split(",") == [host, "10.128.2.7"]
    assert env["CSRF_TRUSTED_ORIGINS"] == f"https://{host}"
    # no placeholder left anywhere
    assert "placeholder.invalid" not in repr(objects)


@pytest.mark.parametrize("overlay", m.OVERLAYS)
def test_images_are_set_by_the_overlays(overlay):
    objects = m.build(f"overlays/{overlay}")
    for label, spec in m.pod_specs(objects):
        for c in (spec.get("initContainers") or []) + spec["containers"]:
            assert re.fullmatch(r"[a-z0-9.\-:/]+/mpijob-dashboard:[\w.\-]+", c["image"]), \
                (label, c["image"])


def test_the_secret_template_holds_what_the_pods_read():
    template = {s["metadata"]["name"]: s for s in m.load("base/secret.template.yaml")}
    for secret in template.values():
        m.validate(secret)
        assert secret["metadata"]["namespace"] == m.NAMESPACE
        assert all(v.startswith(("CHANGE-ME", "postgres://", "redis://")) and "CHANGE-ME" in v
                   for v in secret["stringData"].values())
    assert set(template["mpijob-dashboard"]["stringData"]) == {
        "SECRET_KEY", "OAUTH_CLIENT_SECRET", "DATABASE_URL", "REDIS_URL"}
    # the Red Hat templates' Service names, as the openshift overlay expects them
    assert "@postgresql:5432/" in template["mpijob-dashboard"]["stringData"]["DATABASE_URL"]
    assert "@redis:6379/" in template["mpijob-dashboard"]["stringData"]["REDIS_URL"]
    for overlay in m.OVERLAYS:
        for label, spec in m.pod_specs(m.build(f"overlays/{overlay}")):
            for c in (spec.get("initContainers") or []) + spec["containers"]:
                for var in c.get("env") or []:
                    ref = (var.get("valueFrom") or {}).get("secretKeyRef")
                    if ref:
                        assert ref["key"] in template[ref["name"]]["stringData"], (label, var)
    monitor = m.one(m.build("monitoring"), "ServiceMonitor", "mpijob-dashboard")
    credentials = monitor["spec"]["endpoints"][0]["authorization"]["credentials"]
    assert credentials["key"] in template[credentials["name"]]["stringData"]


def test_every_setting_in_the_config_map_is_one_the_dashboard_reads():
    """A misspelt key would be ignored silently; ROUTE_HOST only feeds ALLOWED_HOSTS."""
    for overlay in ("base", *(f"overlays/{o}" for o in m.OVERLAYS)):
        config = m.one(m.build(overlay), "ConfigMap", "mpijob-dashboard-config")["data"]
        for key in set(config) - {"ROUTE_HOST"}:
            assert re.search(rf"env_\w+\(\s*\"{key}\"", SETTINGS), f"{overlay}: {key}"
    for key in ("ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "SECRET_KEY", "OAUTH_CLIENT_SECRET",
                "DATABASE_URL", "REDIS_URL", "WATCHER_EMBEDDED", "STATIC_ROOT"):
        assert f'"{key}"' in SETTINGS, key


def test_base_rbac_files_are_what_the_build_contains():
    """The RBAC test on simcluster applies base/rbac-*.yaml as files (no kustomize): they
    must be exactly what the overlays install, less the common label."""
    built = {(o["kind"], o["metadata"]["name"]): o for o in m.build("base")}
    for name in ("rbac-watcher.yaml", "rbac-web.yaml", "rbac-prices.yaml"):
        for obj in m.load(f"base/{name}"):
            twin = built[(obj["kind"], obj["metadata"]["name"])]
            labels = dict(twin["metadata"]["labels"])
            assert labels.pop("app.kubernetes.io/part-of") == "mpijob-dashboard"
            assert {**twin, "metadata": {**twin["metadata"], "labels": labels}} == obj


def test_the_watcher_role_reads_and_writes_only_its_annotation_on_training_jobs():
    (role,) = m.find(m.build("base"), "ClusterRole", "mpijob-dashboard-watcher")
    verbs = {v for rule in role["rules"] for v in rule["verbs"]}
    assert verbs == {"get", "list", "watch", "patch", "create"}
    # create: SubjectAccessReviews, asked before each notification it sends and each retry
    # it starts (README, "Notifications and cost"), and the training jobs: the automatic
    # retries, in their creator's name after that review (README, "Automatic retry")
    created = {(g, r) for rule in role["rules"] if "create" in rule["verbs"]
               for g in rule["apiGroups"] for r in rule["resources"]}
    assert created == {("authorization.k8s.io", "subjectaccessreviews"),
                       ("kubeflow.org", "mpijobs"), ("kubeflow.org", "pytorchjobs"),
                       ("kubeflow.org", "tfjobs"), ("trainer.kubeflow.org", "trainjobs")}
    # patch: the kept evidence it writes on a job (README, "Evidence kept")
    patched = {r for rule in role["rules"] if "patch" in rule["verbs"]
               for r in rule["resources"]}
    assert patched == {"mpijobs", "pytorchjobs", "tfjobs", "trainjobs"}
    resources = {r for rule in role["rules"] for r in rule["resources"]}
    assert resources == {"mpijobs", "pytorchjobs", "tfjobs", "trainjobs", "pods", "pods/log",
                         "events", "resourcequotas", "limitranges", "nodes", "namespaces",
                         "jobs", "workloads", "clusterqueues", "trainingruntimes",
                         "clustertrainingruntimes", "subjectaccessreviews"}
    # the web pods' own account reads only cluster-wide settings: nodes, and Kueue's
    # ClusterQueues, priorities and pending lists (the wizard's queue check)
    (web,) = m.find(m.build("base"), "ClusterRole", "mpijob-dashboard-web")
    assert web["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]},
        {"apiGroups": ["kueue.x-k8s.io"],
         "resources": ["clusterqueues", "workloadpriorityclasses"], "verbs": ["get", "list"]},
        {"apiGroups": ["visibility.kueue.x-k8s.io"],
         "resources": ["clusterqueues/pendingworkloads"], "verbs": ["get"]}]


def test_the_personas():
    built = m.build("rbac")
    roles = {r["metadata"]["name"]: r for r in built if r["kind"] == "ClusterRole"}
    assert set(roles) == {"mpijob-viewer", "mpijob-user", "mpijob-admin",
                          "mpijob-admin-overview", "mpijob-storage-class-reader"}
    # StorageClasses are cluster-scoped: everyone signed in may list them (the wizard's
    # new volume claim), and nothing else comes with that binding
    (binding,) = [o for o in built if o["kind"] == "ClusterRoleBinding"]
    assert binding["roleRef"]["name"] == "mpijob-storage-class-reader"
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                    "name": "system:authenticated"}]
    assert roles["mpijob-storage-class-reader"]["rules"] == [
        {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"],
         "verbs": ["get", "list", "watch"]}]

    def grants(role: str) -> set[tuple[str, str, str]]:
        return {(g, r, v) for rule in roles[role]["rules"] for g in rule["apiGroups"]
                for r in rule["resources"] for v in rule["verbs"]}

    viewer, user, admin = grants("mpijob-viewer"), grants("mpijob-user"), grants("mpijob-admin")
    assert viewer < user < admin
    assert {v for _, _, v in viewer} == {"get", "list", "watch"}
    assert ("kubeflow.org", "mpijobs", "create") in user - viewer
    assert ("", "persistentvolumeclaims", "create") in user - viewer  # a new volume claim
    assert ("", "persistentvolumeclaims", "delete") not in admin  # never the data's claims
    assert ("", "resourcequotas", "list") in admin
    assert ("kubeflow.org", "pytorchjobs", "delete") in admin - user
    for role in roles.values():
        for rule in role["rules"]:  # no wildcards, nothing secret
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]
            assert "secrets" not in rule["resources"]


# -- NetworkPolicy semantics, on pods an MPIJob and its neighbours would have -----------------

def _matches(selector: dict, labels: dict) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
    return True


def _admitted(policies, target: dict, source: dict) -> bool:
    """May `source` open a connection to `target` (pods as {ns, labels}), by the rules of
    NetworkPolicy: an unselected pod admits all; a selected one what some rule allows."""
    selecting = [p for p in policies if p["namespace"] == target["ns"]
                 and "Ingress" in p["spec"]["policyTypes"]
                 and _matches(p["spec"]["podSelector"], target["labels"])]
    if not selecting:
        return True
    for policy in selecting:
        for rule in policy["spec"].get("ingress") or []:
            for peer in rule.get("from") or []:
                ns_sel, pod_sel = peer.get("namespaceSelector"), peer.get("podSelector")
                if ns_sel is None:
                    ns_ok = source["ns"] == target["ns"]
                else:
                    ns_ok = _matches(ns_sel, {"kubernetes.io/metadata.name": source["ns"]})
                if ns_ok and (pod_sel is None or _matches(pod_sel, source["labels"])):
                    return True
    return False


def _training_pod(ns: str, job: str, role: str, operator: str = "mpi-operator") -> dict:
    return {"ns": ns, "labels": {"training.kubeflow.org/operator-name": operator,
                                 "training.kubeflow.org/job-name": job,
                                 "training.kubeflow.org/job-role": role}}


def test_network_policy_lets_launcher_and_workers_talk_and_keeps_others_out():
    policies = [dict(p, namespace="team-nlp") for p in m.build("networkpolicy")]
    launcher = _training_pod("team-nlp", "bert", "launcher")
    worker = _training_pod("team-nlp", "bert", "worker")
    other_job = _training_pod("team-nlp", "gpt2", "worker")
    notebook = {"ns": "team-nlp", "labels": {"app": "jupyter"}}
    outsider = _training_pod("team-cv", "resnet", "worker")
    router = {"ns": "openshift-ingress", "labels": {}}
    assert _admitted(policies, worker, launcher) and _admitted(policies, launcher, worker)
    assert _admitted(policies, worker, worker)
    assert _admitted(policies, worker, other_job)  # per namespace, not per job
    for stranger in (notebook, outsider, router):
        assert not _admitted(policies, worker, stranger)
        assert not _admitted(policies, launcher, stranger)
    # pods that are not training pods are left as the project has them
    assert _admitted(policies, notebook, outsider)

    per_job = [dict(p, namespace="team-nlp") for p in m.load("networkpolicy/per-job/"
                                                             "mpijob-peers.yaml")]
    per_job = [json.loads(json.dumps(p).replace("JOB_NAME", "bert")) for p in per_job]
    assert _admitted(per_job, worker, launcher)
    assert not _admitted(per_job, worker, other_job)
    assert not _admitted(per_job, worker, notebook)

    (monitoring,) = m.load("networkpolicy/allow-monitoring.yaml")
    with_monitoring = policies + [dict(monitoring, namespace="team-nlp")]
    scraper = {"ns": "openshift-user-workload-monitoring", "labels": {}}
    assert _admitted(with_monitoring, worker, scraper)
    assert not _admitted(policies, worker, scraper)
    for obj in per_job + [monitoring]:
        m.validate({k: v for k, v in obj.items() if k != "namespace"})


def test_examples_fit_their_schemas():
    for name in ("examples/resourcequota.yaml", "examples/limitrange.yaml"):
        for obj in m.load(name):
            m.validate(obj)
    (quota,) = m.load("examples/resourcequota.yaml")
    assert {"requests.nvidia.com/gpu", "count/mpijobs.kubeflow.org"} <= set(quota["spec"]["hard"])
    (limits,) = m.load("examples/limitrange.yaml")
    container = next(item for item in limits["spec"]["limits"] if item["type"] == "Container")
    # an unset default is taken from max: without these, every container would get 8 GPUs
    if "nvidia.com/gpu" in container.get("max", {}):
        assert container["default"]["nvidia.com/gpu"] == "0"
        assert container["defaultRequest"]["nvidia.com/gpu"] == "0"

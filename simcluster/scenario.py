"""Scenario files: the cluster a run starts with. The format is documented in README.md.

Loading happens in simulated time: the clock is set back to before the earliest job in
the file, every object is created at its moment, and the cluster runs forward to the
present without waiting. A job declared `ago: 2h` therefore shows two hours of real
history (timestamps, events, logs) the moment the server is up.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simcluster.access.auth import SA_PREFIX, UserInfo
from simcluster.bootstrap import bootstrap_objects
from simcluster.cluster import SYSTEM_USER, Cluster

Obj = dict[str, Any]

SCENARIO_DIR = Path(__file__).parent / "scenarios"
SETTLE_BEFORE_JOBS = 3 * 24 * 3600  # how long the cluster existed before the first job


class ScenarioError(ValueError):
    pass


def resolve(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") and p.exists():
        return p
    candidate = SCENARIO_DIR / f"{name_or_path}.yaml"
    if candidate.exists():
        return candidate
    known = ", ".join(sorted(f.stem for f in SCENARIO_DIR.glob("*.yaml")))
    raise ScenarioError(f"scenario {name_or_path!r} not found: give a file path or one of: "
                        f"{known}")


def parse_duration(value: Any, where: str) -> float:
    """`90`, `90s`, `25m`, `2h`, `1h30m` -> seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    m = re.fullmatch(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?", text)
    if not text or not m or not any(m.groups()):
        raise ScenarioError(f"{where}: {value!r} is not a duration; write e.g. 90s, 25m, 2h")
    d, h, mi, s = m.groups()
    return int(d or 0) * 86400 + int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0)


@dataclass
class Credentials:
    """Where a scenario's users and service accounts find their kubeconfigs."""

    tokens: dict[str, str]  # kubeconfig name -> token
    namespaces: dict[str, str]  # kubeconfig name -> default namespace
    users: dict[str, str]  # kubeconfig name -> user name in the kubeconfig


def load_file(path: Path) -> Obj:
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping with keys such as users, "
                            "namespaces, nodes, access, objects, jobs")
    known = {"name", "description", "apis", "oauth", "users", "serviceAccounts", "namespaces",
             "nodes", "access", "objects", "jobs", "groups"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ScenarioError(f"{path}: unknown keys {unknown}; known keys: {sorted(known)}")
    return data


def _node_conditions(now: str) -> list[Obj]:
    """A healthy node's conditions, as the kubelet reports them."""
    def cond(type_: str, status: str, reason: str, message: str) -> Obj:
        return {"type": type_, "status": status, "reason": reason, "message": message,
                "lastHeartbeatTime": now, "lastTransitionTime": now}
    return [cond("MemoryPressure", "False", "KubeletHasSufficientMemory",
                 "kubelet has sufficient memory available"),
            cond("DiskPressure", "False", "KubeletHasNoDiskPressure",
                 "kubelet has no disk pressure"),
            cond("PIDPressure", "False", "KubeletHasSufficientPID",
                 "kubelet has sufficient PID available"),
            cond("Ready", "True", "KubeletReady", "kubelet is posting ready status")]


def _node_ip(name: str) -> str:
    h = uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.simcluster").bytes
    return f"10.0.{128 + h[0] % 64}.{10 + h[1] % 240}"


def _node(spec: Obj, name: str, now: str = "") -> Obj:
    capacity = {"cpu": str(spec.get("cpu", 16)), "memory": str(spec.get("memory", "64Gi")),
                "pods": str(spec.get("pods", 250)),
                "ephemeral-storage": str(spec.get("ephemeralStorage", "500Gi"))}
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": "amd64", "node-role.kubernetes.io/worker": "",
              "node.kubernetes.io/instance-type": str(spec.get("instanceType", "m5.4xlarge"))}
    gpus = int(spec.get("gpus", 0))
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
        product = str(spec.get("gpuProduct", "NVIDIA-A100-SXM4-80GB"))
        labels.update({"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product,
                       "nvidia.com/gpu.count": str(gpus),
                       "nvidia.com/gpu.memory": str(spec.get("gpuMemoryMiB", 81920))})
    labels.update(spec.get("labels") or {})
    allocatable = dict(capacity)
    ident = uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.simcluster")
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": list(spec.get("taints") or [])},
        "status": {
            "capacity": capacity, "allocatable": allocatable,
            "conditions": _node_conditions(now) if now else [],
            "addresses": [{"type": "InternalIP", "address": _node_ip(name)},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.31.6", "kubeProxyVersion": "v1.31.6",
                         "containerRuntimeVersion": "cri-o://1.31.4-2.rhaos4.18",
                         "osImage": "Red Hat Enterprise Linux CoreOS 418.94.202410090804-0",
                         "kernelVersion": "5.14.0-427.40.1.el9_4.x86_64",
                         "operatingSystem": "linux", "architecture": "amd64",
                         "machineID": ident.hex, "systemUUID": str(ident),
                         "bootID": str(uuid.uuid5(ident, "boot"))},
        },
    }


def _node_names(spec: Obj, where: str) -> list[str]:
    pattern = spec.get("name")
    if not isinstance(pattern, str) or not pattern:
        raise ScenarioError(f"{where}: every node needs a name (use {{i}} with count)")
    count = int(spec.get("count", 1))
    if count > 1 and "{i}" not in pattern:
        raise ScenarioError(f"{where}: with count > 1 the name needs {{i}}, e.g. gpu-{{i}}")
    return [pattern.replace("{i}", str(i)) for i in range(count)]


def _role_binding(subject: Obj, role: str, namespace: str | None, cluster_role: bool) -> Obj:
    kind = "ClusterRoleBinding" if namespace is None else "RoleBinding"
    name = f"{subject['name'].replace(':', '-')}-{role}"
    obj: Obj = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                            "kind": "ClusterRole" if cluster_role else "Role", "name": role},
                "subjects": [subject]}
    if namespace is not None:
        obj["metadata"]["namespace"] = namespace
    return obj


def _state_tokens(state_dir: Path) -> dict[str, str]:
    path = state_dir / "tokens.json"
    if path.exists():
        try:
            data = json.loads(path.read_text())
            if isinstance(data, dict):
                return {str(k): str(v) for k, v in data.items()}
        except ValueError:
            pass
    return {}


def _expand_jobs(jobs: list) -> list[Obj]:
    """`count: N` makes N jobs of one entry, `{i}` (0..N-1) in the manifest's name."""
    expanded: list[Obj] = []
    for i, job in enumerate(jobs):
        if not isinstance(job, dict) or "manifest" not in job:
            raise ScenarioError(f"jobs[{i}]: each job needs a manifest (and may have ago, as, "
                                "count)")
        try:
            count = int(job.get("count", 1))
        except (TypeError, ValueError):
            count = -1
        if count < 1:
            raise ScenarioError(f"jobs[{i}].count: a whole number of at least 1")
        name = str(((job["manifest"] or {}).get("metadata") or {}).get("name") or "")
        if count > 1 and "{i}" not in name:
            raise ScenarioError(f"jobs[{i}]: with count > 1 the manifest's name needs {{i}}, "
                                "e.g. bulk-{i}")
        for n in range(count):
            copy_ = {k: v for k, v in job.items() if k != "count"}
            if count > 1:
                manifest = copy.deepcopy(job["manifest"])
                manifest["metadata"]["name"] = name.replace("{i}", str(n))
                copy_["manifest"] = manifest
            expanded.append(copy_)
    return expanded


def load(cluster: Cluster, scenario: Obj, state_dir: Path) -> Credentials:
    """Build the scenario's cluster (history included) and return the credentials."""
    state_dir.mkdir(parents=True, exist_ok=True)
    tokens = _state_tokens(state_dir)
    creds = Credentials({}, {}, {})

    jobs = _expand_jobs(list(scenario.get("jobs") or []))
    max_ago = 0.0
    for i, job in enumerate(jobs):
        job["_ago"] = parse_duration(job.get("ago", 0), f"jobs[{i}].ago")
        max_ago = max(max_ago, job["_ago"])
    start = time.time() - max_ago - SETTLE_BEFORE_JOBS
    cluster.clock.begin_warp(start)

    oauth = scenario.get("oauth") or {}
    if "sessionMaxAgeSeconds" in oauth:
        cluster.oauth.session_max_age = int(oauth["sessionMaxAgeSeconds"])

    for obj in bootstrap_objects():
        cluster.apply_system(obj)

    # users and groups
    for i, u in enumerate(scenario.get("users") or []):
        if not isinstance(u, dict) or not u.get("name"):
            raise ScenarioError(f"users[{i}]: each user needs a name (and password)")
        name = str(u["name"])
        groups = tuple(str(g) for g in u.get("groups") or ())
        cluster.users[name] = {"password": str(u.get("password", name)),
                               "fullName": u.get("fullName", ""), "groups": groups,
                               "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"simcluster/{name}")),
                               "created": cluster.clock.timestamp()}
        cluster.authn.user_groups[name] = groups
        token = tokens.get(name) or secrets.token_urlsafe(32)
        tokens[name] = token
        cluster.authn.add_static_token(token, UserInfo(
            name, groups + ("system:authenticated",)))
        creds.tokens[name] = token
        creds.users[name] = name
        creds.namespaces[name] = str(u.get("namespace", "default"))

    for i, ns in enumerate(scenario.get("namespaces") or []):
        if isinstance(ns, str):
            ns = {"name": ns}
        if not isinstance(ns, dict) or not ns.get("name"):
            raise ScenarioError(f"namespaces[{i}]: each namespace needs a name")
        annotations = dict(ns.get("annotations") or {})
        if ns.get("displayName"):
            annotations["openshift.io/display-name"] = ns["displayName"]
        if ns.get("description"):
            annotations["openshift.io/description"] = ns["description"]
        annotations.setdefault("openshift.io/requester", "admin")
        labels = dict(ns.get("labels") or {})
        labels.setdefault("opendatahub.io/dashboard", "true")
        cluster.apply_system({"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": ns["name"], "labels": labels, "annotations": annotations}})

    for i, spec in enumerate(scenario.get("nodes") or []):
        if not isinstance(spec, dict):
            raise ScenarioError(f"nodes[{i}]: a node is a mapping (name, count, cpu, ...)")
        for name in _node_names(spec, f"nodes[{i}]"):
            cluster.apply_system(_node(spec, name, cluster.clock.timestamp()))

    for i, sa in enumerate(scenario.get("serviceAccounts") or []):
        if not isinstance(sa, dict) or not sa.get("name") or not sa.get("namespace"):
            raise ScenarioError(f"serviceAccounts[{i}]: needs name and namespace")
        ns, name = str(sa["namespace"]), str(sa["name"])
        cluster.apply_system({"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": ns}}) if cluster.store.get_raw(
            cluster.rt("namespaces"), "", ns) is None else None
        cluster.apply_system({"apiVersion": "v1", "kind": "ServiceAccount",
                              "metadata": {"name": name, "namespace": ns,
                                           "annotations": dict(sa.get("annotations") or {})}})
        user = f"{SA_PREFIX}{ns}:{name}"
        key = f"sa:{ns}:{name}"
        token = tokens.get(key) or secrets.token_urlsafe(32)
        tokens[key] = token
        cluster.service_account_tokens[(ns, name)] = token
        cluster.authn.add_static_token(token, UserInfo(
            user, ("system:serviceaccounts", f"system:serviceaccounts:{ns}",
                   "system:authenticated")))
        kubeconfig = str(sa.get("kubeconfig") or name)
        creds.tokens[kubeconfig] = token
        creds.users[kubeconfig] = user
        creds.namespaces[kubeconfig] = ns
        for role in sa.get("clusterRoles") or []:
            cluster.apply_system(_role_binding(
                {"kind": "ServiceAccount", "name": name, "namespace": ns}, role, None, True))

    for i, client in enumerate(oauth.get("clients") or []):
        if not isinstance(client, dict) or not client.get("name"):
            raise ScenarioError(f"oauth.clients[{i}]: needs a name")
        obj = {"apiVersion": "oauth.openshift.io/v1", "kind": "OAuthClient",
               "metadata": {"name": client["name"]}}
        for k in ("secret", "redirectURIs", "grantMethod", "accessTokenMaxAgeSeconds",
                  "scopeRestrictions", "additionalSecrets"):
            if k in client:
                obj[k] = client[k]
        obj.setdefault("grantMethod", "auto")
        cluster.apply_system(obj)

    for i, obj in enumerate(scenario.get("objects") or []):
        if not isinstance(obj, dict) or not obj.get("kind"):
            raise ScenarioError(f"objects[{i}]: each object is a Kubernetes manifest")
        cluster.apply_system(copy.deepcopy(obj))

    for i, grant in enumerate(scenario.get("access") or []):
        if not isinstance(grant, dict):
            raise ScenarioError(f"access[{i}]: a mapping like {{user: alice, role: edit, "
                                "namespaces: [team-nlp]}}")
        if grant.get("user"):
            subject = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                       "name": str(grant["user"])}
        elif grant.get("group"):
            subject = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                       "name": str(grant["group"])}
        else:
            raise ScenarioError(f"access[{i}]: needs user or group")
        if grant.get("clusterRole"):
            cluster.apply_system(_role_binding(subject, str(grant["clusterRole"]), None, True))
        elif grant.get("role"):
            namespaces = grant.get("namespaces") or []
            if not namespaces:
                raise ScenarioError(f"access[{i}]: role needs namespaces (or use clusterRole)")
            for ns in namespaces:
                cluster.apply_system(_role_binding(subject, str(grant["role"]), str(ns), True))
        else:
            raise ScenarioError(f"access[{i}]: needs role (with namespaces) or clusterRole")

    # each user's kubeconfig points at their first project
    for grant in scenario.get("access") or []:
        user = grant.get("user")
        if user in creds.namespaces and creds.namespaces[user] == "default" and \
                grant.get("namespaces"):
            creds.namespaces[user] = str(grant["namespaces"][0])

    cluster.manager.pump()

    for i, job in enumerate(jobs):
        manifest = copy.deepcopy(job["manifest"])
        who = str(job.get("as", "admin"))
        user = SYSTEM_USER
        if who in cluster.users:
            user = UserInfo(who, cluster.users[who]["groups"] + ("system:authenticated",))
        at = max_ago - job["_ago"] + SETTLE_BEFORE_JOBS

        def create(manifest: Obj = manifest, user: UserInfo = user, i: int = i) -> None:
            try:
                cluster.create_as(user, manifest)
            except Exception as e:  # a broken scenario job is reported, not fatal
                raise ScenarioError(f"jobs[{i}]: could not be created: {e}") from e

        cluster.clock.call_later(at, create)

    cluster.clock.finish_warp()
    (state_dir / "tokens.json").write_text(json.dumps(tokens, indent=2))
    (state_dir / "tokens.json").chmod(0o600)
    return creds

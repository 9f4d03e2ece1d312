"""Per-kind defaulting and validation, as each built-in type's registry strategy does it."""

from __future__ import annotations

import copy
import random
from typing import TYPE_CHECKING, Any

from simcluster import errors, quantity
from simcluster.access.auth import UserInfo
from simcluster.placement.resources import ResourceType

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]

DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
]


def _invalid(rt: ResourceType, obj: Obj, causes: list[dict[str, str]]) -> errors.ApiError:
    meta = obj.get("metadata") or {}
    return errors.invalid(rt, rt.kind, meta.get("name") or meta.get("generateName", ""), causes)


def _required(field: str) -> dict[str, str]:
    return errors.field_cause(field, "Required value", "FieldValueRequired")


# -- pods --------------------------------------------------------------------------------------
def _default_container(c: Obj) -> None:
    image = c.get("image") or ""
    tag = image.rsplit("/", 1)[-1]
    if "imagePullPolicy" not in c:
        c["imagePullPolicy"] = "Always" if (":" not in tag or tag.endswith(":latest")) \
            and "@" not in image else "IfNotPresent"
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    # A YAML number (`cpu: 1`) is decoded into a Quantity and served as a string.
    for kind in ("limits", "requests"):
        values = c["resources"].get(kind) if isinstance(c["resources"], dict) else None
        for k, v in (values or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                values[k] = quantity.format_quantity(quantity.parse(v))


def default_pod_requests(spec: Obj) -> None:
    """Requests default to limits where only limits are given (API defaulting)."""
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        res = c.get("resources") or {}
        limits = res.get("limits") or {}
        if limits:
            requests = res.setdefault("requests", {})
            for k, v in limits.items():
                requests.setdefault(k, v)
            c["resources"] = res


def default_pod_spec(spec: Obj, restart_default: str = "Always") -> None:
    spec.setdefault("restartPolicy", restart_default)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if isinstance(c, dict):
            _default_container(c)
    default_pod_requests(spec)


def validate_pod_spec(spec: Any, path: str, allowed_restart: tuple[str, ...]) -> list[dict]:
    causes: list[dict] = []
    if not isinstance(spec, dict):
        return [_required(path)]
    containers = spec.get("containers")
    if not containers:
        causes.append(_required(f"{path}.containers"))
        return causes
    if not isinstance(containers, list):
        return [errors.field_cause(f"{path}.containers", "Invalid value: must be a list")]
    seen: set[str] = set()
    for i, c in enumerate(containers):
        cpath = f"{path}.containers[{i}]"
        if not isinstance(c, dict):
            causes.append(errors.field_cause(cpath, "Invalid value: must be an object"))
            continue
        name = c.get("name")
        if not name:
            causes.append(_required(f"{cpath}.name"))
        elif name in seen:
            causes.append(errors.field_cause(f"{cpath}.name", f'Duplicate value: "{name}"',
                                             "FieldValueDuplicate"))
        else:
            seen.add(name)
        if not c.get("image"):
            causes.append(_required(f"{cpath}.image"))
        res = c.get("resources") or {}
        for kind in ("requests", "limits"):
            for rname, value in (res.get(kind) or {}).items():
                try:
                    q = quantity.parse(value)
                except quantity.QuantityError:
                    causes.append(errors.field_cause(
                        f"{cpath}.resources.{kind}[{rname}]",
                        f'Invalid value: "{value}": quantities must match the regular '
                        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"))
                    continue
                if q < 0:
                    causes.append(errors.field_cause(
                        f"{cpath}.resources.{kind}[{rname}]",
                        f'Invalid value: "{value}": must be greater than or equal to 0'))
        req = res.get("requests") or {}
        lim = res.get("limits") or {}
        for rname in req:
            if rname in lim:
                try:
                    if quantity.parse(req[rname]) > quantity.parse(lim[rname]):
                        causes.append(errors.field_cause(
                            f"{cpath}.resources.requests",
                            f'Invalid value: "{req[rname]}": must be less than or equal to '
                            f"{rname} limit of {lim[rname]}"))
                except quantity.QuantityError:
                    pass
    restart = spec.get("restartPolicy")
    if restart is not None and restart not in allowed_restart:
        causes.append(errors.field_cause(
            f"{path}.restartPolicy",
            f'Unsupported value: "{restart}": supported values: '
            + ", ".join(f'"{r}"' for r in allowed_restart), "FieldValueNotSupported"))
    return causes


def _qos_class(spec: Obj) -> str:
    containers = spec.get("containers") or []
    any_set = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and quantity.parse(req[r]) != quantity.parse(lim[r])):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _prepare_pod(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    spec = obj.setdefault("spec", {})
    causes = validate_pod_spec(spec, "spec", ("Always", "OnFailure", "Never"))
    if causes:
        raise _invalid(rt, obj, causes)
    default_pod_spec(spec)
    tolerations = spec.setdefault("tolerations", [])
    for t in DEFAULT_TOLERATIONS:
        if not any(x.get("key") == t["key"] for x in tolerations):
            tolerations.append(copy.deepcopy(t))
    obj["status"] = {"phase": "Pending", "qosClass": _qos_class(spec)}
    return obj


# -- other built-ins --------------------------------------------------------------------------
def _prepare_namespace(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    meta = obj["metadata"]
    meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    obj["spec"] = {"finalizers": ["kubernetes"]}
    obj["status"] = {"phase": "Active"}
    return obj


def _prepare_service(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    if spec.get("clusterIP") != "None":
        spec["clusterIP"] = f"172.30.{random.randint(0, 255)}.{random.randint(1, 254)}"
    spec["clusterIPs"] = [spec["clusterIP"]]
    spec.setdefault("sessionAffinity", "None")
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))
    obj["status"] = {"loadBalancer": {}}
    return obj


def _prepare_secret(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    import base64
    import binascii

    obj.setdefault("type", "Opaque")
    data = obj.get("data") or {}
    for key, value in (obj.pop("stringData", None) or {}).items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    for key, value in data.items():
        try:
            base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            raise _invalid(rt, obj, [errors.field_cause(
                f"data[{key}]", "Invalid value: illegal base64 data")]) from None
    if data:
        obj["data"] = data
    return obj


def _prepare_job(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    spec = obj.setdefault("spec", {})
    template = spec.get("template")
    if not isinstance(template, dict):
        raise _invalid(rt, obj, [_required("spec.template")])
    pod_spec = template.setdefault("spec", {})
    causes = validate_pod_spec(pod_spec, "spec.template.spec", ("OnFailure", "Never"))
    if pod_spec.get("restartPolicy") is None:
        causes.append(errors.field_cause(
            "spec.template.spec.restartPolicy",
            'Required value: valid values: "OnFailure", "Never"', "FieldValueRequired"))
    if causes:
        raise _invalid(rt, obj, causes)
    default_pod_spec(pod_spec)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completions", 1)
    spec.setdefault("parallelism", 1)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    uid = obj["metadata"]["uid"]
    name = obj["metadata"].get("name") or ""
    if not spec.get("manualSelector"):
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        labels = template.setdefault("metadata", {}).setdefault("labels", {})
        labels.update({"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid,
                       "batch.kubernetes.io/job-name": name, "job-name": name})
        obj["metadata"].setdefault("labels", {}).update(
            {"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid,
             "batch.kubernetes.io/job-name": name, "job-name": name})
    obj["status"] = {}
    return obj


def _prepare_quota(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    hard = (obj.get("spec") or {}).get("hard") or {}
    causes = []
    for r, v in hard.items():
        try:
            quantity.parse(v)
        except quantity.QuantityError:
            causes.append(errors.field_cause(f"spec.hard[{r}]", f'Invalid value: "{v}"'))
    if causes:
        raise _invalid(rt, obj, causes)
    obj["status"] = {"hard": dict(hard), "used": {}}
    return obj


def _prepare_event(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    if not obj.get("involvedObject"):
        raise _invalid(rt, obj, [_required("involvedObject")])
    return obj


DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


def _default_storage_class(cluster: Cluster) -> str:
    """The StorageClass annotated as the default (the newest of several, as the
    DefaultStorageClass admission plugin picks), or ""."""
    found = [sc for sc in cluster.store.iter_raw(cluster.rt("storageclasses"))
             if ((sc.get("metadata") or {}).get("annotations") or {})
             .get(DEFAULT_CLASS_ANNOTATION) == "true"]
    found.sort(key=lambda sc: (sc["metadata"].get("creationTimestamp") or "",
                               sc["metadata"].get("name", "")))
    return found[-1]["metadata"]["name"] if found else ""


def _prepare_pvc(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    # A claim without a class gets the default class (the DefaultStorageClass admission
    # plugin). No storage provisioner runs here: claims bind at once, as a dynamic
    # provisioner with Immediate binding would have them, to a volume of the size asked.
    spec = obj.setdefault("spec", {})
    if "storageClassName" not in spec:
        default = _default_storage_class(cluster)
        if default:
            spec["storageClassName"] = default
    spec.setdefault("volumeMode", "Filesystem")
    spec.setdefault("volumeName", f"pvc-{obj['metadata']['uid']}")
    obj["status"] = {"phase": "Bound", "accessModes": list(spec.get("accessModes") or []),
                     "capacity": dict((spec.get("resources") or {}).get("requests") or {})}
    return obj


def _prepare_limitrange(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    # API defaulting of Container items: default limit from max, default request from the
    # default limit, else from min (SetDefaults_LimitRangeItem).
    for item in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = item.setdefault("default", {})
        for r, v in (item.get("max") or {}).items():
            default.setdefault(r, v)
        request = item.setdefault("defaultRequest", {})
        for r, v in default.items():
            request.setdefault(r, v)
        for r, v in (item.get("min") or {}).items():
            request.setdefault(r, v)
        if not default:
            item.pop("default")
        if not request:
            item.pop("defaultRequest")
    return obj


PREPARE_CREATE = {
    "/limitranges": _prepare_limitrange,
    "/persistentvolumeclaims": _prepare_pvc,
    "/pods": _prepare_pod,
    "/namespaces": _prepare_namespace,
    "/services": _prepare_service,
    "/secrets": _prepare_secret,
    "/resourcequotas": _prepare_quota,
    "/events": _prepare_event,
    "batch/jobs": _prepare_job,
}


def prepare_create(cluster: Cluster, rt: ResourceType, obj: Obj, user: UserInfo) -> Obj:
    fn = PREPARE_CREATE.get(f"{rt.group}/{rt.plural}")
    return fn(cluster, rt, obj) if fn else obj


# -- updates ------------------------------------------------------------------------------------
def prepare_update(cluster: Cluster, rt: ResourceType, current: Obj, new: Obj,
                   user: UserInfo) -> Obj:
    key = f"{rt.group}/{rt.plural}"
    if key == "/pods":
        # Only images, activeDeadlineSeconds and added tolerations may change on a pod.
        old_spec = copy.deepcopy(current.get("spec") or {})
        new_spec = copy.deepcopy(new.get("spec") or {})
        for spec in (old_spec, new_spec):
            for c in spec.get("containers") or []:
                c.pop("image", None)
            spec.pop("activeDeadlineSeconds", None)
            spec.pop("tolerations", None)
        if old_spec != new_spec:
            raise _invalid(rt, new, [errors.field_cause(
                "spec", "Forbidden: pod updates may not change fields other than "
                "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
                "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 "
                "if it was previously negative)", "FieldValueForbidden")])
    elif key == "batch/jobs":
        old_t = (current.get("spec") or {}).get("template")
        new_t = (new.get("spec") or {}).get("template")
        if old_t != new_t and not (current.get("spec") or {}).get("suspend"):
            raise _invalid(rt, new, [errors.field_cause(
                "spec.template", "Invalid value: field is immutable", "FieldValueInvalid")])
        if (current.get("spec") or {}).get("selector") != (new.get("spec") or {}).get("selector"):
            raise _invalid(rt, new, [errors.field_cause(
                "spec.selector", "Invalid value: field is immutable", "FieldValueInvalid")])
    elif key == "/namespaces":
        new["spec"] = current.get("spec", {})
        new["status"] = current.get("status", {})
    elif key == "/resourcequotas":
        _prepare_quota(cluster, rt, copy.deepcopy(new))
    return new

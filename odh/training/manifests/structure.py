"""The shape an imported MPIJob manifest must have for the wizard to read it.

Only the parts the wizard reads are checked, by type, with the field's path in the message;
everything else is kept as it is and left to the API server (its dry run checks the whole
CRD schema when the job is submitted).
"""

from __future__ import annotations

from collections.abc import Iterator

from odh.training.i18n import _
from odh.training.quantity import QuantityError, parse_quantity
from odh.training.spec import LAUNCHER, ROLES, WORKER

MAPPING, LIST, TEXT, INTEGER, BOOLEAN = "mapping", "list", "text", "integer", "boolean"
_SPEC_FIELDS = {"slotsPerWorker": INTEGER, "runPolicy": MAPPING, "mpiImplementation": TEXT,
                "launcherCreationPolicy": TEXT, "sshAuthMountPath": TEXT,
                "runLauncherAsWorker": BOOLEAN}
_RUN_POLICY_FIELDS = {"cleanPodPolicy": TEXT, "ttlSecondsAfterFinished": INTEGER,
                      "backoffLimit": INTEGER, "activeDeadlineSeconds": INTEGER,
                      "suspend": BOOLEAN, "managedBy": TEXT}
_POD_FIELDS = {"containers": LIST, "volumes": LIST, "nodeSelector": MAPPING,
               "tolerations": LIST, "priorityClassName": TEXT}
_CONTAINER_FIELDS = {"name": TEXT, "image": TEXT, "command": LIST, "args": LIST, "env": LIST,
                     "resources": MAPPING, "volumeMounts": LIST}


def _expected(kind: str) -> str:
    return {MAPPING: _("a mapping (key: value lines)"), LIST: _("a list"), TEXT: _("text"),
            INTEGER: _("a whole number"), BOOLEAN: _("true or false")}[kind]


def _actual(value: object) -> str:
    if isinstance(value, bool):
        return _("true/false")
    if isinstance(value, int | float):
        return _("a number")
    if isinstance(value, str):
        return _("text")
    if isinstance(value, list):
        return _("a list")
    if isinstance(value, dict):
        return _("a mapping")
    return _("something else")


def _matches(value: object, kind: str) -> bool:
    if kind == INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    types = {MAPPING: dict, LIST: list, TEXT: str, BOOLEAN: bool}
    return isinstance(value, types[kind])


def _wrong(path: str, kind: str, value: object) -> str:
    values = {"path": path, "expected": _expected(kind), "actual": _actual(value)}
    if kind == TEXT and isinstance(value, int | float | bool):
        return _("%(path)s must be %(expected)s, but it is %(actual)s: put it in quotes.") % values
    return _("%(path)s must be %(expected)s, but it is %(actual)s: correct it and paste the "
             "manifest again.") % values


def _fields(parent: dict, path: str, fields: dict[str, str]) -> Iterator[str]:
    for name, kind in fields.items():
        value = parent.get(name)
        if value is not None and not _matches(value, kind):
            yield _wrong(f"{path}.{name}", kind, value)


def _strings(value: object, path: str) -> Iterator[str]:
    """A map of text to text: labels, annotations, nodeSelector."""
    if value is None:
        return
    if not isinstance(value, dict):
        yield _wrong(path, MAPPING, value)
        return
    for key, item in value.items():
        if not isinstance(item, str):
            yield _wrong(f"{path}.{key}", TEXT, item)


def _container(container: object, path: str) -> Iterator[str]:
    if not isinstance(container, dict):
        yield _wrong(path, MAPPING, container)
        return
    yield from _fields(container, path, _CONTAINER_FIELDS)
    for key in ("command", "args"):
        for index, word in enumerate(container.get(key) or []
                                     if isinstance(container.get(key), list) else []):
            if not isinstance(word, str):
                yield _wrong(f"{path}.{key}[{index}]", TEXT, word)
    env = container.get("env") if isinstance(container.get("env"), list) else []
    for index, entry in enumerate(env):
        if not isinstance(entry, dict):
            yield _wrong(f"{path}.env[{index}]", MAPPING, entry)
            continue
        yield from _fields(entry, f"{path}.env[{index}]", {"name": TEXT, "value": TEXT,
                                                           "valueFrom": MAPPING})
    resources = container.get("resources") if isinstance(container.get("resources"), dict) \
        else {}
    for kind in ("requests", "limits"):
        amounts = resources.get(kind)
        if amounts is None:
            continue
        if not isinstance(amounts, dict):
            yield _wrong(f"{path}.resources.{kind}", MAPPING, amounts)
            continue
        for name, raw in amounts.items():
            try:
                parse_quantity(raw)
            except QuantityError as exc:
                yield f"{path}.resources.{kind}.{name}: {exc}"


def _replica(replica: object, role: str) -> Iterator[str]:
    path = f"spec.mpiReplicaSpecs.{role}"
    if not isinstance(replica, dict):
        yield _wrong(path, MAPPING, replica)
        return
    yield from _fields(replica, path, {"replicas": INTEGER, "restartPolicy": TEXT,
                                       "template": MAPPING})
    replicas = replica.get("replicas")
    if role == LAUNCHER and replicas not in (None, 1):
        yield _("%(path)s.replicas is %(value)s: an MPIJob has exactly one Launcher; set it to "
                "1.") % {"path": path, "value": str(replicas)[:20]}
    elif isinstance(replicas, int) and replicas < 0:
        yield _("%(path)s.replicas is %(value)d: the number of Workers cannot be negative.") % {
            "path": path, "value": replicas}
    template = replica.get("template")
    if not isinstance(template, dict):
        if template is None:
            yield _("%(path)s.template is missing: add the pod template with its containers.") \
                % {"path": path}
        return
    metadata = template.get("metadata")
    if isinstance(metadata, dict):
        yield from _strings(metadata.get("labels"), f"{path}.template.metadata.labels")
        yield from _strings(metadata.get("annotations"),
                            f"{path}.template.metadata.annotations")
    pod = template.get("spec")
    if not isinstance(pod, dict):
        yield _wrong(f"{path}.template.spec", MAPPING, pod)
        return
    yield from _fields(pod, f"{path}.template.spec", _POD_FIELDS)
    yield from _strings(pod.get("nodeSelector"), f"{path}.template.spec.nodeSelector")
    containers = pod.get("containers")
    if (isinstance(containers, list) and not containers) or containers is None:
        yield _("%(path)s.template.spec.containers is empty: add the container that runs.") % {
            "path": path}
        return
    for index, container in enumerate(containers if isinstance(containers, list) else []):
        yield from _container(container, f"{path}.template.spec.containers[{index}]")


def structure_problems(manifest: dict) -> list[str]:
    """Why the wizard cannot read this MPIJob, one message per problem; [] when it can."""
    return list(_problems(manifest))


def _problems(manifest: dict) -> Iterator[str]:
    metadata = manifest.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        yield _wrong("metadata", MAPPING, metadata)
    elif isinstance(metadata, dict):
        yield from _fields(metadata, "metadata", {"name": TEXT, "namespace": TEXT})
        yield from _strings(metadata.get("labels"), "metadata.labels")
        yield from _strings(metadata.get("annotations"), "metadata.annotations")
    spec = manifest.get("spec")
    if spec is None:
        yield _("The manifest has no spec: an MPIJob needs spec.mpiReplicaSpecs with a "
                "Launcher (and Workers).")
        return
    if not isinstance(spec, dict):
        yield _wrong("spec", MAPPING, spec)
        return
    yield from _fields(spec, "spec", _SPEC_FIELDS)
    if isinstance(spec.get("runPolicy"), dict):
        yield from _fields(spec["runPolicy"], "spec.runPolicy", _RUN_POLICY_FIELDS)
    replicas = spec.get("mpiReplicaSpecs")
    if not isinstance(replicas, dict):
        if replicas is None:
            yield _("spec.mpiReplicaSpecs is missing: an MPIJob needs a Launcher and Workers "
                    "under it.")
        else:
            yield _wrong("spec.mpiReplicaSpecs", MAPPING, replicas)
        return
    for role in replicas:
        if role not in ROLES:
            yield _("spec.mpiReplicaSpecs.%(role)s is not a replica type: an MPIJob has a "
                    "Launcher and Workers (Launcher, Worker).") % {"role": str(role)[:40]}
    if LAUNCHER not in replicas:
        yield _("spec.mpiReplicaSpecs has no Launcher: add one, it runs mpirun.")
    for role in (LAUNCHER, WORKER):
        if role in replicas:
            yield from _replica(replicas[role], role)

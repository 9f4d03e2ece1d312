"""Validation rules for the pods' surroundings: environment, volumes, placement, metadata,
the project's LimitRanges, and what a cloned or imported manifest carries."""

from __future__ import annotations

from decimal import Decimal

from odh.training.checks.limits import LimitViolation, limit_violations
from odh.training.checks.rules_fields import mount_path_findings, reserved_paths
from odh.training.checks.rules_job import Findings, is_int, resource_label, text
from odh.training.checks.syntax import (
    ANNOTATIONS_MAX_BYTES,
    is_c_identifier,
    is_dns1123_label,
    is_dns1123_subdomain,
    label_value_problem,
    qualified_name_problem,
    shown,
)
from odh.training.findings import WARNING, FieldError, ValidationContext
from odh.training.i18n import _
from odh.training.manifests.metric_patterns import ANNOTATION as METRIC_PATTERNS
from odh.training.manifests.metric_patterns import parse_patterns
from odh.training.paths import as_dict, get_path
from odh.training.quantity import format_cpu, format_memory
from odh.training.spec import LAUNCHER, ROLES, JobSpec, build_manifest

# Set by the MPI Operator on the Launcher and Workers; a value given here is overridden.
OPERATOR_ENV = ("K_MPI_JOB_ROLE", "OMPI_MCA_orte_default_hostfile", "I_MPI_HYDRA_HOST_FILE",
                "HYDRA_HOST_FILE")
TOLERATION_OPERATORS = ("Equal", "Exists")
TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
RESTART_POLICIES = ("Never", "OnFailure")
MANAGED_BY = ("kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue")
_CHOICES_SHOWN = 5


def choices(names: set[str]) -> str:
    """A few of the names that exist, for "choose one of ..." messages."""
    ordered = sorted(names)
    listed = ", ".join(ordered[:_CHOICES_SHOWN])
    return listed + (", ..." if len(ordered) > _CHOICES_SHOWN else "")


def check_env(spec: JobSpec, context: ValidationContext) -> Findings:
    seen: set[str] = set()
    for index, env in enumerate(spec.env if isinstance(spec.env, list) else []):
        field = f"env[{index}].name"
        name = text(getattr(env, "name", ""))
        values = {"name": shown(name), "number": index + 1,
                  "suggestion": "".join(c if c.isalnum() else "_" for c in name).upper()}
        if not name:
            yield FieldError(field, _("Enter a name for environment variable %(number)d, or "
                                      "remove it.") % values)
        elif not is_c_identifier(name) and is_c_identifier(values["suggestion"]):
            yield FieldError(field, _('Environment variable name "%(name)s" is not valid: use '
                                      'letters, digits and "_", not starting with a digit (for '
                                      'example "%(suggestion)s").') % values)
        elif not is_c_identifier(name):
            yield FieldError(field, _('Environment variable name "%(name)s" is not valid: use '
                                      'letters, digits and "_", not starting with a digit.')
                             % values)
        elif name in seen:
            yield FieldError(field, _('Environment variable "%(name)s" is set twice: keep one.')
                             % values)
        elif name in OPERATOR_ENV:
            yield FieldError(field, _("%(name)s is set by the MPI Operator, which overrides this "
                                      "value: remove it.") % values, WARNING)
        seen.add(name)


def _check_volume(index: int, volume: object, context: ValidationContext,
                  namespace: str) -> Findings:
    claim = text(getattr(volume, "claim_name", ""))
    values = {"claim": shown(claim), "namespace": namespace}
    field = f"volumes[{index}].claim_name"
    if not claim:
        yield FieldError(field, _("Choose the volume claim to mount, or remove this volume."))
    elif not is_dns1123_subdomain(claim):
        yield FieldError(field, _('Volume claim "%(claim)s" is not a valid claim name: use '
                                  'lower-case letters, digits, "-" and ".".') % values)
    elif context.pvc_names is not None and claim not in context.pvc_names:
        if context.pvc_names:
            values["choices"] = choices(context.pvc_names)
            yield FieldError(field, _('No volume claim called "%(claim)s" exists in '
                                      "%(namespace)s: choose one of %(choices)s.") % values)
        else:
            yield FieldError(field, _('No volume claim called "%(claim)s" exists in '
                                      "%(namespace)s, which has none: create the claim first, or "
                                      "remove this volume.") % values)
    sub_path = text(getattr(volume, "sub_path", ""))
    if sub_path and (sub_path.startswith("/") or ".." in sub_path.split("/")):
        yield FieldError(f"volumes[{index}].sub_path", _(
            'Sub-path "%(path)s" must be a relative path without "..", for example '
            '"datasets/imagenet".') % {"path": shown(sub_path)})


def check_volumes(spec: JobSpec, context: ValidationContext) -> Findings:
    volumes = spec.volumes if isinstance(spec.volumes, list) else []
    reserved = reserved_paths(spec)
    paths: set[str] = set()
    names: set[str] = set()
    for index, volume in enumerate(volumes):
        yield from _check_volume(index, volume, context, text(spec.namespace))
        yield from mount_path_findings(f"volumes[{index}].mount_path",
                                       text(getattr(volume, "mount_path", "")), paths, reserved)
        name = text(getattr(volume, "name", ""))
        if name and not is_dns1123_label(name):
            yield FieldError(f"volumes[{index}].name", _(
                'Volume name "%(name)s" is not valid: use lower-case letters, digits and "-", at '
                "most 63 characters.") % {"name": shown(name)})
        elif name in names and text(getattr(volume, "claim_name", "")):
            yield FieldError(f"volumes[{index}].claim_name", _(
                'The claim "%(claim)s" is already mounted by another volume: mount it once and '
                "use a sub-path to reach a folder inside it.")
                % {"claim": shown(text(getattr(volume, "claim_name", "")))})
        names.add(name)


def _check_pairs(field: str, pairs: object, key_message: str, value_message: str,
                 values_are_labels: bool) -> Findings:
    for key, value in as_dict(pairs).items():
        key, value = text(key), text(value)
        values = {"key": shown(key), "value": shown(value)}
        problem = qualified_name_problem(key)
        if not key:
            yield FieldError(field, _("Enter a key for each entry, or remove the empty one."))
        elif problem:
            yield FieldError(field, key_message % dict(values, problem=problem))
        if values_are_labels:
            problem = label_value_problem(value)
            if problem:
                yield FieldError(field, value_message % dict(values, problem=problem))


def check_metadata(spec: JobSpec, context: ValidationContext) -> Findings:
    yield from _check_pairs("labels", spec.labels, _('Label key "%(key)s" is not valid: '
                                                     "%(problem)s."),
                            _('Label value "%(value)s" (for %(key)s) is not valid: %(problem)s.'),
                            values_are_labels=True)
    yield from _check_pairs("annotations", spec.annotations,
                            _('Annotation key "%(key)s" is not valid: %(problem)s.'), "",
                            values_are_labels=False)
    size = sum(len(text(k).encode()) + len(text(v).encode())
               for k, v in as_dict(spec.annotations).items())
    if size > ANNOTATIONS_MAX_BYTES:
        yield FieldError("annotations", _("The annotations are larger than 256 KiB in total: "
                                          "shorten them."))
    declared = as_dict(spec.annotations).get(METRIC_PATTERNS)
    if declared is not None:
        try:
            parse_patterns(text(declared))
        except ValueError as e:
            yield FieldError("annotations", str(e))


def check_placement(spec: JobSpec, context: ValidationContext) -> Findings:
    yield from _check_pairs("node_selector", spec.node_selector,
                            _('Node selector key "%(key)s" is not valid: %(problem)s.'),
                            _('Node selector value "%(value)s" (for %(key)s) is not valid: '
                              "%(problem)s."), values_are_labels=True)
    for index, toleration in enumerate(spec.tolerations
                                       if isinstance(spec.tolerations, list) else []):
        yield from _check_toleration(index, toleration)
    priority = text(spec.priority_class)
    values = {"name": shown(priority), "namespace": text(spec.namespace)}
    if priority and not is_dns1123_subdomain(priority):
        yield FieldError("priority_class", _('Priority class "%(name)s" is not a valid name: use '
                                             'lower-case letters, digits, "-" and ".".') % values)
    elif priority and context.priority_classes is not None \
            and priority not in context.priority_classes:
        if context.priority_classes:
            values["choices"] = choices(context.priority_classes)
            yield FieldError("priority_class", _('Priority class "%(name)s" does not exist: '
                                                 "choose one of %(choices)s, or leave it empty.")
                             % values)
        else:
            yield FieldError("priority_class", _('Priority class "%(name)s" does not exist and '
                                                 "this cluster has none: leave it empty.")
                             % values)
    yield from _check_queue(spec, context)


def _label_choice(field: str, value: str, known: set[str] | None, values: dict,
                  invalid: str, missing: str, none_there: str) -> Findings:
    """A label value naming one of `known` (None: unknown, not checked): `invalid` when it
    is no label value, `missing` (with %(choices)s) or `none_there` when it names none."""
    problem = label_value_problem(value)
    if problem:
        yield FieldError(field, invalid % {**values, "problem": problem})
    elif known is not None and value not in known:
        if known:
            yield FieldError(field, missing % {**values, "choices": choices(known)})
        else:
            yield FieldError(field, none_there % values)


def _check_queue(spec: JobSpec, context: ValidationContext) -> Findings:
    queue = text(spec.queue_name)
    if queue:
        yield from _label_choice(
            "queue_name", queue, context.local_queues,
            {"name": shown(queue), "namespace": text(spec.namespace)},
            _('Queue name "%(name)s" is not valid: %(problem)s.'),
            _('No Kueue queue called "%(name)s" exists in %(namespace)s: choose one of '
              "%(choices)s, or leave it empty."),
            _('No Kueue queue called "%(name)s" exists in %(namespace)s, which has none: '
              "leave it empty."))
    # Kueue makes no Workload for a job naming a WorkloadPriorityClass that does not
    # exist: the job would wait suspended, with no word but an event
    priority = text(spec.queue_priority)
    if priority:
        yield from _label_choice(
            "queue_priority", priority, context.workload_priorities, {"name": shown(priority)},
            _('Queue priority "%(name)s" is not valid: %(problem)s.'),
            _('Queue priority "%(name)s" does not exist: choose one of %(choices)s, or leave '
              "it empty."),
            _('Queue priority "%(name)s" does not exist and this cluster has none: leave it '
              "empty."))


def _check_toleration(index: int, toleration: object) -> Findings:
    def at(part: str) -> str:
        return f"tolerations[{index}].{part}"

    key = text(getattr(toleration, "key", ""))
    operator = text(getattr(toleration, "operator", "")) or "Equal"
    value = text(getattr(toleration, "value", ""))
    effect = text(getattr(toleration, "effect", ""))
    seconds = getattr(toleration, "seconds", None)
    values = {"key": shown(key), "operator": shown(operator), "value": shown(value),
              "effect": shown(effect)}
    if operator not in TOLERATION_OPERATORS:
        yield FieldError(at("operator"), _('Toleration operator "%(operator)s" is not supported: '
                                           "choose Equal or Exists.") % values)
    if key:
        problem = qualified_name_problem(key)
        if problem:
            yield FieldError(at("key"), _('Toleration key "%(key)s" is not valid: %(problem)s.')
                             % dict(values, problem=problem))
    elif operator == "Equal":
        yield FieldError(at("key"), _("Enter the taint key to tolerate, or choose the Exists "
                                      "operator to tolerate every taint."))
    if operator == "Exists" and value:
        yield FieldError(at("value"), _("A toleration with operator Exists matches any value: "
                                        "leave Value empty."))
    elif operator == "Equal" and label_value_problem(value):
        yield FieldError(at("value"), _('Toleration value "%(value)s" is not valid: %(problem)s.')
                         % dict(values, problem=label_value_problem(value)))
    if effect and effect not in TOLERATION_EFFECTS:
        yield FieldError(at("effect"), _('Toleration effect "%(effect)s" is not supported: choose '
                                         "NoSchedule, PreferNoSchedule or NoExecute, or leave it "
                                         "empty for every effect.") % values)
    if seconds is not None and (not is_int(seconds) or effect != "NoExecute"):
        yield FieldError(at("seconds"), _("Toleration seconds only apply to the NoExecute "
                                          "effect, as a whole number: set Effect to NoExecute or "
                                          "clear the seconds."))


def _amount(resource: str, value: Decimal) -> str:
    if resource == "cpu":
        return format_cpu(value)
    if resource == "memory":
        return format_memory(value)
    return format(value.normalize(), "f")


def limit_message(violation: LimitViolation, nodes: bool = False) -> str:
    """`nodes`: the job's kind counts its pods as nodes (a TrainJob's "CPUs per node")."""
    what = resource_label(violation.field, nodes) if violation.field != "manifest" else \
        f"{violation.role} {violation.resource}"
    values = {"what": what, "value": _amount(violation.resource, violation.value),
              "limit": _amount(violation.resource, violation.limit),
              "ratio": format(violation.value.normalize(), "f"),
              "max": format(violation.limit.normalize(), "f"),
              "range": violation.limit_range, "namespace": violation.namespace}
    per = _("per container") if violation.scope == "Container" else _("per pod")
    values["per"] = per
    if violation.bound == "max":
        message = _("%(what)s (%(value)s) is above the maximum of %(limit)s %(per)s in "
                    "%(namespace)s (LimitRange %(range)s): use at most %(limit)s.")
    elif violation.bound == "min":
        message = _("%(what)s (%(value)s) is below the minimum of %(limit)s %(per)s in "
                    "%(namespace)s (LimitRange %(range)s): use at least %(limit)s.")
    elif violation.bound == "missing" and violation.field == "manifest":
        values["resource"] = violation.resource
        message = _("LimitRange %(range)s in %(namespace)s bounds %(resource)s %(per)s, so "
                    "every container must set it, but the Launcher does not: ask an "
                    "administrator to give the LimitRange a default for it.") \
            if violation.role == "Launcher" else \
            _("LimitRange %(range)s in %(namespace)s bounds %(resource)s %(per)s, so every "
              "container must set it, but the Workers do not: ask an administrator to give "
              "the LimitRange a default for it.")
    elif violation.bound == "missing":
        message = _("%(what)s must be set in %(namespace)s, where LimitRange %(range)s bounds it "
                    "%(per)s: enter an amount.")
    else:
        message = _("%(what)s: the limit is %(ratio)s times the request, more than the "
                    "%(max)s allowed in %(namespace)s (LimitRange %(range)s): make the request "
                    "and the limit equal.")
    return message % values


def check_limit_ranges(spec: JobSpec, context: ValidationContext) -> Findings:
    if not context.limit_ranges or not is_int(spec.workers) or not is_int(spec.gpus_per_worker):
        return
    for violation in limit_violations(spec, context.limit_ranges):
        yield FieldError(violation.field, limit_message(violation, spec.kind.counts_nodes))


def check_manifest(spec: JobSpec, context: ValidationContext) -> Findings:
    """What only a cloned or imported manifest can get wrong (a generated one cannot)."""
    if not isinstance(spec.base, dict) or not is_int(spec.workers) \
            or not is_int(spec.gpus_per_worker):
        return
    manifest = build_manifest(spec)
    job_spec = as_dict(manifest.get("spec"))
    replicas = get_path(job_spec, ["mpiReplicaSpecs", LAUNCHER, "replicas"], 1)
    if replicas != 1:
        yield FieldError("manifest", _(
            "The Launcher must have exactly 1 replica (the manifest says %(value)s): set "
            "spec.mpiReplicaSpecs.Launcher.replicas to 1.") % {"value": shown(replicas)})
    for role in ROLES:
        replica = as_dict(get_path(job_spec, ["mpiReplicaSpecs", role]))
        policy = replica.get("restartPolicy")
        if policy is not None and policy not in RESTART_POLICIES:
            yield FieldError("manifest", _(
                'The %(role)s restart policy "%(policy)s" is not allowed: the MPI Operator '
                "accepts Never or OnFailure.") % {"role": role, "policy": shown(policy)})
        if replica and not get_path(replica, ["template", "spec", "containers"]):
            yield FieldError("manifest", _("The %(role)s pod template has no containers: add "
                                           "one.") % {"role": role})
    if "sshAuthMountPath" in job_spec and not text(job_spec.get("sshAuthMountPath")):
        yield FieldError("manifest", _("spec.sshAuthMountPath is empty: remove it to use "
                                       "/root/.ssh, or give the path of the SSH keys."))
    managed_by = get_path(job_spec, ["runPolicy", "managedBy"])
    if managed_by is not None and managed_by not in MANAGED_BY:
        yield FieldError("manifest", _(
            'spec.runPolicy.managedBy "%(value)s" is not supported: remove it, or use '
            "kubeflow.org/mpi-operator or kueue.x-k8s.io/multikueue.")
            % {"value": shown(managed_by)})


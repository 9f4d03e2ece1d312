"""What the wizard's Configuration and Resources steps show: their forms bound to the
draft's text, with the choices read from the project (runtimes, pull secrets, GPU types,
priority classes, queues, claims) and the rows of environment variables and volumes."""

from __future__ import annotations

from django.utils.translation import gettext as _

from odh.training.kinds import JobKind
from odh.training.manifests.claims import ACCESS_MODES
from odh.training.spec import MPI_IMPLEMENTATIONS, JobSpec
from training.wizard import checks, formfields
from training.wizard.envsources import SourceKeys, object_choices, source_choices, source_of
from training.wizard.forms import ConfigurationForm, ResourcesForm
from training.wizard.runtimes import RuntimeChoices


def configuration_form(data: dict, validate_url: str, shown: dict, kind: JobKind,
                       runtimes: RuntimeChoices,
                       pull_secrets: list[str] | None) -> ConfigurationForm:
    """The Configuration step's form, its runtime select offering `runtimes` and its pull
    secret the project's `pull_secrets` (the project's namespace select's choices are the
    page's to set)."""
    form = ConfigurationForm(data=form_data(data, formfields.CONFIGURATION_FIELDS),
                             validate_url=validate_url, messages=shown, kind=kind)
    form.offer_pull_secrets(pull_secrets)
    if "runtime" in form.fields:
        form.set_choices("runtime", runtimes.choices(),
                         _("%(value)s (not found: choose another runtime)")
                         if runtimes.cluster_listed else "%(value)s")
    return form


def form_data(data: dict, names) -> dict:
    return {name: data.get(name, "") for name in names}


def simple_resources_form(data: dict, validate_url: str, shown: dict,
                          kind: JobKind) -> ResourcesForm:
    """The Workers and GPUs the simple mode asks on its one step."""
    return ResourcesForm(data=form_data(data, formfields.SIMPLE_RESOURCE_FIELDS),
                         validate_url=validate_url, messages=shown, kind=kind)


def resources_context(data: dict, spec: JobSpec, facts: checks.ProjectFacts, validate_url: str,
                      shown: dict, runtimes: RuntimeChoices, sources: SourceKeys,
                      storage_classes: tuple[list[str], str] | None = None) -> dict:
    form = ResourcesForm(data=form_data(data, formfields.RESOURCE_FIELDS),
                         validate_url=validate_url, messages=shown, kind=spec.kind)
    if "runtime" in formfields.kind_fields(spec.kind):
        _runtime_fields(form, data, runtimes)
    form.fields["slots_per_worker"].widget.attrs["placeholder"] = \
        _("The runtime's default") if spec.kind.counts_nodes else \
        _("default: %(slots)d") % {"slots": spec.default_slots}
    form.set_choices("gpu_product", checks.gpu_product_choices(checks.get_nodes()),
                     _("%(value)s (no node has this GPU now)"))
    if facts.priority_classes is not None and "priority_class" in form.fields:
        form.set_choices("priority_class", [("", _("None (the cluster's default)"))]
                         + [(n, n) for n in facts.priority_classes],
                         _("%(value)s (not in this cluster)"))
    show_queue = bool(facts.local_queues) or bool(data.get("queue_name"))
    form.set_choices("queue_name", [("", _("None (not managed by Kueue)"))]
                     + [(n, n) for n in facts.local_queues or []],
                     _("%(value)s (no such LocalQueue here)"))
    priorities = facts.workload_priorities or {}
    form.set_choices("queue_priority", [("", _("None (priority 0)"))]
                     + [(n, _("%(name)s (%(value)d)") % {"name": n, "value": v})
                        for n, v in sorted(priorities.items(), key=lambda p: -p[1])],
                     _("%(value)s (not in this cluster)"))
    env_rows = []
    for i, row in enumerate(data.get("env") or []):
        if not isinstance(row, dict):
            continue
        value_from = row.get("value_from") if isinstance(row.get("value_from"), dict) else None
        source = source_of(value_from)
        env_rows.append({
            "index": i, "name": row.get("name", ""), "value": row.get("value", ""),
            "value_from": value_from, "source": source,
            "source_choices": source_choices(sources, source), "source_id": f"id_env-{i}-source",
            "value_from_text": _("from %(source)s") % {
                "source": ", ".join(sorted(value_from))} if value_from else "",
            "name_field": f"env-{i}-name", "name_id": f"id_env-{i}-name",
            "value_id": f"id_env-{i}-value",
            "messages": shown.get(f"env-{i}-name") or shown.get(f"env-{i}-value")
            or {"errors": [], "warnings": []}})
    pvcs = facts.pvcs or []
    volume_rows = []
    for i, row in enumerate(data.get("volumes") or []):
        if not isinstance(row, dict):
            continue
        claim = row.get("claim_name", "")
        choices = [("", _("Choose a claim"))] + [(n, n) for n in pvcs]
        if claim and claim not in pvcs:
            choices.append((claim, _("%(value)s (not found in this project)") % {"value": claim}))
        empty = {"errors": [], "warnings": []}
        volume_rows.append({
            **row, "index": i, "choices": choices,
            "claim_id": f"id_volume-{i}-claim_name", "path_id": f"id_volume-{i}-mount_path",
            "readonly_id": f"id_volume-{i}-read_only",
            "claim_messages": shown.get(f"volume-{i}-claim_name") or shown.get(
                f"volume-{i}-name") or empty,
            "path_messages": shown.get(f"volume-{i}-mount_path") or shown.get(
                f"volume-{i}-sub_path") or empty})
    source_rows = {rows: _source_rows(data, rows, shown, sources)
                   for rows in ("env_from", "source_volumes")}
    claim_rows = _claim_rows(data, shown, storage_classes)
    advanced_names = set(formfields.ADVANCED_FIELDS)
    open_advanced = any(
        (m["errors"] or m.get("notes"))
        and (name in advanced_names or name.startswith(formfields.ROW_FORM_PREFIXES)
             or name in formfields.ROW_FIELDS)
        for name, m in shown.items()) or bool(data.get("_advanced_open"))
    return {"form": form, "env_rows": env_rows, "volume_rows": volume_rows,
            "claim_rows": claim_rows, "storage_classes_listed": storage_classes is not None,
            "env_from_rows": source_rows["env_from"],
            "source_volume_rows": source_rows["source_volumes"],
            "asks_sources": "env_from" in formfields.kind_fields(spec.kind), "sources": sources,
            "show_queue": show_queue, "open_advanced": open_advanced}


def _claim_rows(data: dict, shown: dict,
                storage_classes: tuple[list[str], str] | None) -> list[dict]:
    """The new volume claims' rows: the storage class a select of the cluster's classes
    (the default first, marked, chosen for a row that names none), or text where they
    cannot be listed."""
    names, default = storage_classes if storage_classes is not None else ([], "")
    empty = {"errors": [], "warnings": []}
    rows = []
    for i, row in enumerate(data.get("claims") or []):
        if not isinstance(row, dict):
            continue
        chosen = str(row.get("storage_class", "")) or default
        choices = [(n, _("%(name)s (default)") % {"name": n} if n == default else n)
                   for n in names]
        if not default:
            choices.insert(0, ("", _("None chosen (the cluster decides)")))
        if chosen and chosen not in names:
            choices.append((chosen, _("%(value)s (not in this cluster)") % {"value": chosen}))
        ids = {f: f"id_claim-{i}-{f}" for f in formfields.ROW_FIELDS["claims"]}
        rows.append({
            **row, "index": i, "storage_class": chosen, "class_choices": choices,
            "mode_choices": [(m, m) for m in ACCESS_MODES], "ids": ids,
            "path_id": ids["mount_path"],
            "messages": {f: shown.get(f"claim-{i}-{f}") or empty
                         for f in formfields.ROW_FIELDS["claims"]},
            "path_messages": shown.get(f"claim-{i}-mount_path") or empty})
    return rows


def _source_rows(data: dict, rows: str, shown: dict, sources: SourceKeys) -> list[dict]:
    """The rows of whole Secrets and ConfigMaps (as variables, or mounted as files)."""
    prefix = formfields.ROW_PREFIX[rows]
    empty = {"errors": [], "warnings": []}
    found = []
    for i, row in enumerate(data.get(rows) or []):
        if not isinstance(row, dict):
            continue
        source = str(row.get("source", ""))
        found.append({
            "index": i, "source": source, "mount_path": row.get("mount_path", ""),
            "choices": object_choices(sources, source),
            "source_id": f"id_{prefix}-{i}-source", "path_id": f"id_{prefix}-{i}-mount_path",
            "source_messages": shown.get(f"{prefix}-{i}-source") or empty,
            "path_messages": shown.get(f"{prefix}-{i}-mount_path") or empty})
    return found


def _runtime_fields(form: ResourcesForm, data: dict, runtimes: RuntimeChoices) -> None:
    """A runtime's job: the MPI implementation is asked only of an MPI runtime (or when one
    is set, so that it can be cleared), its empty choice being the runtime's own."""
    runtime = runtimes.chosen(str(data.get("runtime", "")))
    if not (runtime is not None and runtime.runs_mpi) and not data.get("mpi_implementation"):
        del form.fields["mpi_implementation"]
        return
    own = _("The runtime's (%(impl)s)") % {"impl": runtime.mpi_implementation} \
        if runtime is not None and runtime.runs_mpi else _("None (not an MPI runtime)")
    form.set_choices("mpi_implementation", [("", own)] + [(m, m) for m in MPI_IMPLEMENTATIONS],
                     "%(value)s")


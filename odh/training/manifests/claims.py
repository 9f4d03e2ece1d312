"""New volume claims asked for with a job: a PersistentVolumeClaim the person wants created
in the job's project, before the job, and mounted on the Launcher and every Worker (every
node of a TrainJob).

A `NewClaim` is its name, size (a Kubernetes quantity: `100Gi`), access mode, storage
class ("" for the cluster's default class) and mount path. This module builds its
manifest and reads one back (the wizard's YAML mode shows a job and its new claims as
one YAML stream, the claims after the job), checks what a person typed (the messages say
what to do), orders the cluster's StorageClasses for a choice (the default class,
annotated `storageclass.kubernetes.io/is-default-class`, first), and creates the claims
with the person's client.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odh.training import errors
from odh.training.checks.syntax import is_dns1123_subdomain
from odh.training.findings import WARNING, FieldError
from odh.training.i18n import _, shown
from odh.training.kinds import CREATED_BY_ANNOTATION
from odh.training.manifests.yamlio import manifest_yaml
from odh.training.paths import as_dict
from odh.training.quantity import QuantityError, parse_quantity

if TYPE_CHECKING:
    from odh.training.cluster.client import ClusterClient

READ_WRITE_ONCE, READ_WRITE_MANY, READ_ONLY_MANY = "ReadWriteOnce", "ReadWriteMany", \
    "ReadOnlyMany"
ACCESS_MODES = (READ_WRITE_ONCE, READ_WRITE_MANY, READ_ONLY_MANY)
DEFAULT_ACCESS_MODE = READ_WRITE_MANY  # an MPIJob's Workers run on several nodes
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
MAX_NAME = 253


@dataclass
class NewClaim:
    name: str
    size: str
    access_mode: str = DEFAULT_ACCESS_MODE
    storage_class: str = ""  # "": the cluster's default class
    mount_path: str = ""

    def to_manifest(self, namespace: str, created_by: str = "") -> dict:
        spec: dict = {"accessModes": [self.access_mode],
                      "resources": {"requests": {"storage": self.size}}}
        if self.storage_class:
            spec["storageClassName"] = self.storage_class
        metadata: dict = {"name": self.name, "namespace": namespace}
        if created_by:
            metadata["annotations"] = {CREATED_BY_ANNOTATION: created_by}
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata,
                "spec": spec}

    @classmethod
    def from_manifest(cls, manifest: dict, mount_path: str = "") -> NewClaim:
        spec = as_dict(manifest.get("spec"))
        modes = spec.get("accessModes")
        size = as_dict(as_dict(spec.get("resources")).get("requests")).get("storage", "")
        return cls(name=str(as_dict(manifest.get("metadata")).get("name", "")),
                   size=str(size), access_mode=str(modes[0]) if isinstance(modes, list)
                   and modes else "", storage_class=str(spec.get("storageClassName") or ""),
                   mount_path=mount_path)


def is_claim_manifest(document: object) -> bool:
    return isinstance(document, dict) and document.get("kind") == "PersistentVolumeClaim" \
        and document.get("apiVersion") == "v1"


def with_claims_yaml(job_yaml: str, claims: Iterable[NewClaim], namespace: str,
                     created_by: str = "") -> str:
    """The job's YAML followed by its new claims' manifests, one YAML stream (what
    `oc apply -f` creates, and what the wizard's YAML mode reads back)."""
    parts = [job_yaml] + [manifest_yaml(c.to_manifest(namespace, created_by)) for c in claims]
    return "---\n".join(part for part in parts if part)


# -- the cluster's StorageClasses ------------------------------------------------------------
def is_default_class(storage_class: dict) -> bool:
    annotations = as_dict(as_dict(storage_class.get("metadata")).get("annotations"))
    return str(annotations.get(DEFAULT_CLASS_ANNOTATION, "")).lower() == "true"


def storage_class_names(items: list[dict]) -> tuple[list[str], str]:
    """The StorageClasses' names, the default class first then by name, and the default's
    name ("" when none is marked; of several, the first by name)."""
    names = sorted(str(as_dict(i.get("metadata")).get("name", "")) for i in items)
    defaults = sorted(str(as_dict(i.get("metadata")).get("name", "")) for i in items
                      if is_default_class(i))
    default = defaults[0] if defaults else ""
    return ([default] if default else []) + [n for n in names if n and n != default], default


# -- what is wrong with a new claim -----------------------------------------------------------
def claim_findings(claims: list[NewClaim], namespace: str, existing: set[str] | None,
                   classes: list[str] | None, workers: int,
                   ours: Iterable[str] = ()) -> list[FieldError]:
    """Messages about each new claim, at `claims[i].<field>`: `existing`, the claims the
    project holds (None: cannot be listed); `classes`, the cluster's StorageClasses (None:
    cannot be listed); `ours`, claims made earlier for this same job (a create that failed
    after them), which are used rather than made again. The mount path is checked with the
    job's volumes (`check_volumes`)."""
    found: list[FieldError] = []
    names: set[str] = set()
    for index, claim in enumerate(claims):
        field = f"claims[{index}]"
        values = {"name": shown(claim.name), "namespace": namespace, "size": shown(claim.size)}
        if not claim.name:
            found.append(FieldError(f"{field}.name", _(
                "Name the new volume claim, for example “data-bert”, or remove it.")))
        elif len(claim.name) > MAX_NAME or not is_dns1123_subdomain(claim.name):
            found.append(FieldError(f"{field}.name", _(
                "“%(name)s” is not a valid claim name: use lower-case letters, digits, “-” and "
                "“.”, starting and ending with a letter or digit.") % values))
        elif claim.name in names:
            found.append(FieldError(f"{field}.name", _(
                "Two new claims are called “%(name)s”: give each its own name.") % values))
        elif existing is not None and claim.name in existing and claim.name not in set(ours):
            found.append(FieldError(f"{field}.name", _(
                "A volume claim called “%(name)s” already exists in %(namespace)s: choose "
                "another name, or mount the existing claim under Volumes.") % values))
        names.add(claim.name)
        found += _size_findings(f"{field}.size", claim.size, values)
        if claim.access_mode not in ACCESS_MODES:
            found.append(FieldError(f"{field}.access_mode", _(
                "Choose how the claim is mounted: ReadWriteOnce, ReadWriteMany or "
                "ReadOnlyMany.")))
        elif claim.access_mode == READ_WRITE_ONCE and workers > 1:
            found.append(FieldError(f"{field}.access_mode", _(
                "ReadWriteOnce lets the pods of one node only mount the claim: Workers on "
                "other nodes wait for it. For %(workers)d Workers choose ReadWriteMany.")
                % {"workers": workers}, WARNING))
        elif claim.access_mode == READ_ONLY_MANY:
            found.append(FieldError(f"{field}.access_mode", _(
                "A new claim is empty, and ReadOnlyMany lets no pod write to it: choose "
                "ReadWriteMany to write data or checkpoints there."), WARNING))
        if claim.storage_class and classes is not None and claim.storage_class not in classes:
            found.append(FieldError(f"{field}.storage_class", _(
                "The cluster has no storage class “%(class)s”: choose one of %(classes)s.")
                % {"class": shown(claim.storage_class),
                   "classes": ", ".join(classes) or _("(none)")}))
    return found


def _size_findings(field: str, size: str, values: dict) -> list[FieldError]:
    if not size.strip():
        return [FieldError(field, _("Enter the claim's size, for example 100Gi."))]
    try:
        amount = parse_quantity(size.strip())
    except QuantityError as e:
        return [FieldError(field, _("The size %(message)s, for example 100Gi or 2Ti.")
                           % {"message": str(e)[:1].lower() + str(e)[1:]})]
    if amount <= 0:
        return [FieldError(field, _("The size must be more than 0, for example 100Gi."))]
    if amount < 2**20:
        return [FieldError(field, _("“%(size)s” is %(bytes)s bytes: write the unit too, for "
                                    "example 100Gi.") % dict(values, bytes=amount), WARNING)]
    return []


# -- making them ------------------------------------------------------------------------------
class ClaimNotCreated(Exception):
    """The cluster refused a new claim: `error` (errors.Conflict: the name is taken;
    errors.QuotaExceeded: requests.storage or persistentvolumeclaims in a ResourceQuota;
    errors.Forbidden...), for the claim `claim`; `made`, those created before it, stay."""

    def __init__(self, error: errors.ClusterError, claim: str, made: list[str]) -> None:
        super().__init__(error.message)
        self.error, self.claim, self.made = error, claim, made


def create_claims(client: ClusterClient, namespace: str, claims: list[NewClaim],
                  created_by: str = "", ours: Iterable[str] = ()) -> list[str]:
    """Create the new claims with the person's client, in order; a claim in `ours` (made
    for this job by an earlier try) that still exists is used as it is. Returns the names
    made now; a refusal raises ClaimNotCreated (errors.Unauthorized is raised as it is)."""
    made: list[str] = []
    kept = set(ours)
    for claim in claims:
        try:
            if claim.name in kept and client.pvc_exists(namespace, claim.name):
                continue
            client.create_pvc(namespace, claim.to_manifest(namespace, created_by))
        except errors.Unauthorized:
            raise
        except errors.ClusterError as e:
            raise ClaimNotCreated(e, claim.name, made) from e
        made.append(claim.name)
    return made

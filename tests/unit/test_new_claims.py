"""New volume claims made with a job (odh.training.manifests.claims): their manifest and
back, the cluster's StorageClasses in the order the wizard offers them, what is said about
what a person typed, the YAML stream of a job and its claims, and the wizard's draft."""

from __future__ import annotations

from odh.training import errors
from odh.training.manifests.claims import (
    ClaimNotCreated,
    NewClaim,
    claim_findings,
    storage_class_names,
    with_claims_yaml,
)
from odh.training.manifests.importing import parse_manifest_with_claims
from odh.training.spec import build_manifest, manifest_yaml, new_spec
from training.views.wizard.create import claim_problem
from training.wizard import checks, drafts, posting


def _class(name: str, default: str | None = None) -> dict:
    metadata: dict = {"name": name}
    if default is not None:
        metadata["annotations"] = {"storageclass.kubernetes.io/is-default-class": default}
    return {"metadata": metadata, "provisioner": "x"}


def test_the_manifest_of_a_new_claim_and_back():
    claim = NewClaim("data-bert", "100Gi", "ReadWriteMany", "nfs-shared", "/data")
    manifest = claim.to_manifest("team-nlp", "alice")
    assert manifest == {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data-bert", "namespace": "team-nlp",
                     "annotations": {"opendatahub.io/username": "alice"}},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "100Gi"}},
                 "storageClassName": "nfs-shared"}}
    assert NewClaim.from_manifest(manifest, "/data") == claim
    # the cluster's default class: no storageClassName at all
    assert "storageClassName" not in NewClaim("d", "1Gi").to_manifest("p")["spec"]


def test_storage_classes_the_default_first():
    items = [_class("nfs-shared"), _class("zeta"), _class("standard", "true"),
             _class("old", "false")]
    assert storage_class_names(items) == (["standard", "nfs-shared", "old", "zeta"], "standard")
    assert storage_class_names([_class("b"), _class("a")]) == (["a", "b"], "")


def _said(claims, existing=None, classes=None, workers=1, ours=()):
    return {(f.field, f.severity, f.message)
            for f in claim_findings(claims, "team-nlp", existing, classes, workers, ours)}


def test_what_is_said_about_a_new_claim():
    assert _said([NewClaim("data", "100Gi", "ReadWriteMany", "nfs-shared", "/data")],
                 {"datasets"}, ["standard", "nfs-shared"], workers=4) == set()
    said = _said([NewClaim("Data_1", "100 gigs", "ReadWriteOnce", "fast", "/d")],
                 classes=["standard"], workers=4)
    assert said == {
        ("claims[0].name", "error", "“Data_1” is not a valid claim name: use lower-case "
         "letters, digits, “-” and “.”, starting and ending with a letter or digit."),
        ("claims[0].size", "error", 'The size "100 gigs" is not a Kubernetes quantity: use a '
         "number with an optional suffix such as 500m, 2, 16Gi or 512Mi, for example 100Gi or "
         "2Ti."),
        ("claims[0].access_mode", "warning", "ReadWriteOnce lets the pods of one node only "
         "mount the claim: Workers on other nodes wait for it. For 4 Workers choose "
         "ReadWriteMany."),
        ("claims[0].storage_class", "error", "The cluster has no storage class “fast”: choose "
         "one of standard.")}
    # a typo with a unit people write: the suggestion
    (size,) = [m for f, _s, m in _said([NewClaim("d", "100GB")]) if f == "claims[0].size"]
    assert "did you mean 100Gi?" in size


def test_a_name_taken_is_said_unless_the_claim_is_this_jobs_own():
    claim = [NewClaim("datasets", "1Gi")]
    assert ("claims[0].name", "error", "A volume claim called “datasets” already exists in "
            "team-nlp: choose another name, or mount the existing claim under Volumes.") \
        in _said(claim, {"datasets"})
    assert _said(claim, {"datasets"}, ours=["datasets"]) == set()
    assert _said(claim, None) == set()  # the claims cannot be listed: the create says it
    twice = _said([NewClaim("a", "1Gi"), NewClaim("a", "2Gi")])
    assert ("claims[1].name", "error", "Two new claims are called “a”: give each its own "
            "name.") in twice


def test_sizes():
    def size(value):
        return {(s, m) for f, s, m in _said([NewClaim("d", value)]) if f.endswith("size")}

    assert size("") == {("error", "Enter the claim's size, for example 100Gi.")}
    assert size("0") == {("error", "The size must be more than 0, for example 100Gi.")}
    assert size("100") == {("warning", "“100” is 100 bytes: write the unit too, for example "
                                       "100Gi.")}
    assert size("2Ti") == size("500G") == set()


def test_the_yaml_of_a_job_and_its_claims_reads_back_as_both():
    spec = new_spec(name="bert", namespace="team-nlp", image="quay.io/a/b:1",
                    command=["python", "t.py"])
    claim = NewClaim("data-bert", "100Gi", "ReadWriteMany", "nfs-shared")
    text = with_claims_yaml(manifest_yaml(build_manifest(spec)), [claim], "team-nlp")
    assert "\n---\napiVersion: v1\nkind: PersistentVolumeClaim\n" in text
    read, manifests = parse_manifest_with_claims(text)
    assert read.name == "bert" and [NewClaim.from_manifest(m) for m in manifests] == [claim]
    assert with_claims_yaml("kind: MPIJob\n", [], "p") == "kind: MPIJob\n"


def test_a_draft_mounts_its_new_claims_after_its_existing_ones():
    data = drafts.data_from_spec(new_spec(name="bert", namespace="team-nlp", image="i:1",
                                          command=["x"]))
    data["volumes"] = [{"claim_name": "datasets", "mount_path": "/data"}]
    data = posting.add_row(data, "claims")
    assert data["claims"] == [{"name": "", "size": "", "access_mode": "ReadWriteMany",
                               "storage_class": "", "mount_path": ""}]
    data["claims"][0].update(name="ckpt", size="50Gi", mount_path="/ckpt")
    spec = drafts.spec_from_data(data).spec
    assert [(v.claim_name, v.mount_path) for v in spec.volumes] == [
        ("datasets", "/data"), ("ckpt", "/ckpt")]
    # a message about the new claim's volume is said at the new claim's field
    facts = checks.ProjectFacts(namespace="team-nlp", visible=True, pvcs=["datasets"])
    data["claims"][0]["mount_path"] = "/data"
    _spec, found = checks.check_draft(data, None, facts, [], None, ["standard"])
    assert found["claim-0-mount_path"]["errors"] == [
        "Another volume is already mounted at /data: give each volume its own mount path."]
    assert not any(name.startswith("volume-1") for name in found)


def test_a_claim_refused_at_create_is_said_plainly():
    spec = new_spec(name="bert", namespace="team-nlp")
    taken = claim_problem(ClaimNotCreated(errors.Conflict("already exists"), "data", []), spec)
    assert taken == {"message": "A volume claim called “data” already exists in team-nlp, so "
                     "neither the new claim nor the job was created: give the new claim "
                     "another name, or mount the existing claim under Volumes.",
                     "step": "resources"}
    quota = claim_problem(ClaimNotCreated(errors.QuotaExceeded(
        "exceeded quota: q, requested: requests.storage=2Ti"), "ckpt", ["data"]), spec)
    assert quota["message"] == (
        "The project's quota refused the new volume claim “ckpt”, so the job was not created: "
        "exceeded quota: q, requested: requests.storage=2Ti. Ask for a smaller claim, mount an "
        "existing one, or ask an administrator of team-nlp for more storage. The new volume "
        "claim data was created before and stays: creating the job again uses it.")

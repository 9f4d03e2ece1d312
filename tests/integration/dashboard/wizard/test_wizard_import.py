"""Import YAML on the wizard's first step: parsed safely, errors in place, input kept."""

from __future__ import annotations

import html
import re

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.template.defaultfilters import filesizeformat

from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import (
    NEW,
    create,
    draft,
    key_of,
    post_step,
    start,
    step_url,
    unique,
)
from training.models import WizardDraft

GOOD = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: imported-pi
  namespace: team-cv
  labels: {team: vision}
spec:
  slotsPerWorker: 1
  sshAuthMountPath: /home/mpiuser/.ssh
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: mpioperator/mpi-pi:openmpi
            command: [mpirun, -n, "2", /home/mpiuser/pi]
            resources: {limits: {cpu: "1", memory: 1Gi}}
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: mpioperator/mpi-pi:openmpi
            resources: {limits: {cpu: "1", memory: 1Gi}}
"""

BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""


def test_a_pasted_manifest_opens_in_the_wizard(alice):
    r = alice.post(NEW, {"import": "1", "manifest": GOOD})
    assert r.status_code == 302
    key = key_of(r)
    d = draft(key)
    assert d.source == "import"
    assert d.data["name"] == "imported-pi" and d.data["namespace"] == "team-cv"
    assert d.data["command"] == "mpirun -n 2 /home/mpiuser/pi"
    assert d.data["labels"] == "team=vision"
    assert d.base["spec"]["sshAuthMountPath"] == "/home/mpiuser/.ssh"  # unknown field kept
    review = alice.get(step_url(key, "review")).content.decode()
    assert "sshAuthMountPath: /home/mpiuser/.ssh" in review


def test_an_uploaded_file_opens_in_the_wizard(alice):
    upload = SimpleUploadedFile("job.yaml", GOOD.encode(), content_type="application/yaml")
    r = alice.post(NEW, {"import": "1", "manifest": "", "manifest_file": upload})
    assert r.status_code == 302
    assert draft(key_of(r)).data["name"] == "imported-pi"


@pytest.mark.parametrize(("text", "expected"), [
    (GOOD + "---\n" + GOOD, "2 documents"),
    (GOOD.replace("kind: MPIJob", "kind: PyTorchJob").replace("v2beta1", "v1"), "PyTorchJob"),
    (BILLION_LAUGHS, "aliases"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n", "Pod"),
    ("key: [unclosed\n", "YAML"),
    ("", "Paste a manifest"),
    ("<script>alert(1)</script>", "HTML"),
])
def test_a_bad_manifest_gets_a_clear_message_in_place(alice, text, expected):
    r = alice.post(NEW, {"import": "1", "manifest": text})
    body = r.content.decode()
    assert r.status_code == 200
    assert_valid(body)
    message = body[body.index('id="id_manifest-message"'):]
    message = message[:message.index("</div></div></div>")]
    assert expected in message
    assert "<script>alert(1)" not in body
    if text.strip():
        assert "&lt;script&gt;" in body or text[:20].replace('"', "&quot;")[:5] in body
    assert not WizardDraft.objects.exists()


def test_an_oversized_upload_is_refused(alice):
    upload = SimpleUploadedFile("big.yaml", b"# padding\n" * 40_000)
    r = alice.post(NEW, {"import": "1", "manifest_file": upload})
    assert r.status_code == 200
    assert "KiB" in r.content.decode()
    assert not WizardDraft.objects.exists()


def test_a_binary_upload_is_refused(alice):
    upload = SimpleUploadedFile("x.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe\xfa")
    r = alice.post(NEW, {"import": "1", "manifest_file": upload})
    assert r.status_code == 200
    assert "id_manifest-message" in r.content.decode()


# More than Django reads of a form at all (DATA_UPLOAD_MAX_MEMORY_SIZE): a paste of a log
# or of a whole directory of manifests by mistake.
OVERSIZED = GOOD + "# padding\n" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 10 + 1)


def _import_message(body: str) -> str:
    message = body[body.index('id="id_manifest-message"'):]
    return html.unescape(message[:message.index("</div></div></div>")])


def test_an_oversized_paste_gets_a_message_at_the_import_field(alice):
    r = alice.post(NEW, {"import": "1", "manifest": OVERSIZED})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    message = _import_message(body)
    assert "nothing was imported" in message
    assert filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE) in message
    assert "paste only the MPIJob" in message
    assert not WizardDraft.objects.exists()


def test_an_oversized_paste_keeps_the_draft_and_the_wizard(alice):
    key = start(alice)
    post_step(alice, key, "configuration", name="kept-over-a-big-paste", action="back")
    r = alice.post(step_url(key, "type"), {"import": "1", "manifest": OVERSIZED},
                   HTTP_HX_REQUEST="true", HTTP_HX_BOOSTED="true", HTTP_HX_TARGET="wizard")
    assert r.status_code == 200  # htmx swaps it in: the message shows in place
    body = r.content.decode()
    assert re.match(r'<title>[^<]+</title>\s*<div id="wizard"', body)  # title: htmx takes it
    assert "nothing was imported" in _import_message(body)
    assert draft(key).data["name"] == "kept-over-a-big-paste"


# -- fields the cluster's MPIJob API does not have ------------------------------------------
MISSPELT = GOOD.replace(
    "  slotsPerWorker: 1\n",
    "  slotsPerWorker: 1\n  runPolicy: {cleanPodPolice: All}\n").replace(
    "          - name: worker\n",
    "          - name: worker\n            resource: {limits: {cpu: \"2\"}}\n")
MISSPELT_FIELDS = ("spec.runPolicy.cleanPodPolice",
                   "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resource")


def _text(response) -> str:
    return html.unescape(response.content.decode())


def _import(client, manifest: str, name: str = "imported-pi") -> tuple[str, str]:
    """Import `manifest` (under `name`); the draft's key and the page it opens on."""
    r = client.post(NEW, {"import": "1",
                          "manifest": manifest.replace("name: imported-pi", f"name: {name}")})
    assert r.status_code == 302, r.content.decode()[:2000]
    return key_of(r), _text(client.get(r["Location"]))


def _unknown_fields_warning(review: str) -> str:
    """The Review step's warning about fields the cluster would drop ("" when none)."""
    start = review.find('id="unknown-fields"')
    return review[start:review.index("</section>", start)] if start >= 0 else ""


def test_misspelt_fields_are_named_when_the_manifest_is_opened(alice):
    _key, configuration = _import(alice, MISSPELT)
    message = configuration[configuration.index("The cluster's MPIJob API has no fields"):]
    for field in MISSPELT_FIELDS:
        assert f"“{field}”" in message
    assert "check the spelling against the MPIJob API" in message
    assert "import the manifest again" in message


def test_misspelt_fields_are_named_again_on_the_review_step(alice):
    key, _configuration = _import(alice, MISSPELT)
    review = _text(alice.get(step_url(key, "review")))
    assert_valid(review)
    warning = _unknown_fields_warning(review)
    assert "The cluster would drop 2 fields of this manifest" in warning
    for field in MISSPELT_FIELDS:
        assert f"“{field}”" in warning
    # the settings the wizard does not show, kept as they are, are listed apart from them
    kept = review[review.index('id="kept-fields"'):]
    kept = kept[:kept.index("</section>")]
    assert "spec.sshAuthMountPath" in kept and "cleanPodPolice" not in kept


def test_a_correct_manifest_gets_no_such_warning(alice):
    key, configuration = _import(alice, GOOD)
    assert "MPIJob API has no field" not in configuration
    review = _text(alice.get(step_url(key, "review")))
    assert _unknown_fields_warning(review) == ""
    assert "MPIJob API has no field" not in review


def test_the_job_is_created_without_the_fields_the_cluster_drops(alice, cluster_jobs):
    name = unique("misspelt")
    cluster_jobs.track("team-cv", name)
    key, _configuration = _import(alice, MISSPELT, name)
    r = create(alice, key)
    assert r.status_code == 302, _text(r)[:3000]
    job = cluster_jobs.get("team-cv", name)
    assert "cleanPodPolice" not in job["spec"].get("runPolicy", {})
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert "resource" not in worker
    assert job["spec"]["sshAuthMountPath"] == "/home/mpiuser/.ssh"

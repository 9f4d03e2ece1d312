"""The wizard's YAML mode: the draft shown as its manifest, edited, and read back into the
form with the form's checks; a YAML error says where and keeps the text."""

from __future__ import annotations

import html

import yaml
from django.urls import reverse

from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard import wizard_flow as flow
from tests.integration.dashboard.wizard.wizard_flow import post_step, start, step_url, unique

NS = "team-nlp"


def _yaml_url(key: str) -> str:
    return reverse("training-job-new-yaml", args=[key])


def _textarea(body: str) -> str:
    start = body.index('id="id_manifest"')
    text = body[body.index(">", start) + 1:body.index("</textarea>", start)]
    return html.unescape(text)


def test_form_to_yaml_to_edit_to_form_to_job(alice, cluster_jobs):
    key = start(alice)
    name = unique("wiz-yaml")
    post_step(alice, key, "configuration", action="back", description="from the form")
    flow.fill(alice, key, name=name, namespace=NS, workers=1)
    page = alice.get(_yaml_url(key)).content.decode()
    assert_valid(page)
    assert '<label class="pf-v6-c-form__label" for="id_manifest">' in page
    manifest = yaml.safe_load(_textarea(page))
    assert manifest["metadata"]["name"] == name  # the form's fields, as the manifest
    assert manifest["metadata"]["annotations"]["opendatahub.io/description"] == \
        "from the form"
    worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]
    worker["replicas"] = 3
    for replica in manifest["spec"]["mpiReplicaSpecs"].values():
        replica["template"]["spec"]["containers"][0]["env"] = [{"name": "FROM_YAML",
                                                                "value": "yes"}]
    manifest["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0][
        "command"] = ["horovodrun", "-np", "3", "python", "/workspace/train.py"]
    manifest["spec"]["runPolicy"]["activeDeadlineSeconds"] = 3600  # a field the form lacks
    r = alice.post(_yaml_url(key), {"manifest": yaml.safe_dump(manifest)})
    assert r.status_code == 302 and r["Location"] == step_url(key, "configuration")
    configuration = alice.get(r["Location"]).content.decode()
    assert "The YAML was read into the form" in html.unescape(configuration)
    resources = alice.get(step_url(key, "resources")).content.decode()
    values = flow.form_values(resources, step_url(key, "resources"))
    assert values["workers"] == "3"  # the form shows the change
    assert values["env-0-name"] == "FROM_YAML" and values["env-0-value"] == "yes"
    cluster_jobs.track(NS, name)
    assert flow.create(alice, key).status_code == 302
    job = cluster_jobs.get(NS, name)
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 3
    assert job["spec"]["runPolicy"]["activeDeadlineSeconds"] == 3600


def test_a_yaml_error_says_at_which_line_and_keeps_the_text(alice):
    key = start(alice)
    flow.post_step(alice, key, "configuration", action="back", namespace=NS, name="kept")
    broken = "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata:\n  name: [oops\n"
    r = alice.post(_yaml_url(key), {"manifest": broken})
    body = r.content.decode()
    assert r.status_code == 200
    assert_valid(body)
    assert "at line 5" in body or "at line 4" in body
    assert _textarea(body) == broken
    assert 'aria-invalid="true"' in body
    assert flow.draft(key).data["name"] == "kept"  # the form is untouched


def test_yaml_the_forms_checks_refuse_is_read_into_the_form_and_kept(alice):
    key = start(alice)
    flow.post_step(alice, key, "configuration", action="back", namespace=NS, name="good")
    manifest = yaml.safe_load(_textarea(alice.get(_yaml_url(key)).content.decode()))
    manifest["metadata"]["name"] = "Bad_Name"
    text = yaml.safe_dump(manifest)
    r = alice.post(_yaml_url(key), {"manifest": text})
    body = html.unescape(r.content.decode())
    assert r.status_code == 200
    assert 'Job name "Bad_Name" is not valid' in body  # the form's own words
    assert step_url(key, "configuration") + "#id_name" in body
    assert _textarea(r.content.decode()) == text
    assert flow.draft(key).data["name"] == "Bad_Name"  # the form shows it, to correct

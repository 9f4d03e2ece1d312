"""The create-job wizard's steps as plain HTML forms: input kept, messages per field."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import (
    NEW,
    draft,
    fill,
    form_values,
    post_step,
    start,
    step_url,
    unique,
)
from training.models import WizardDraft


def test_it_sends_anonymous_people_to_sign_in(client, db):
    r = client.get(NEW)
    assert r.status_code == 302
    assert r["Location"].startswith(reverse("training-login") + "?next=")


def test_htmx_requests_of_anonymous_people_are_sent_to_sign_in(client, db):
    r = client.post(reverse("training-job-new-validate",
                            args=["00000000-0000-0000-0000-000000000000"]),
                    HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/jobs/new/")
    assert r["HX-Redirect"].startswith(reverse("training-login"))


def test_the_first_step_offers_job_types_templates_and_import(alice):
    r = alice.get(NEW)
    body = r.content.decode()
    assert r.status_code == 200
    assert_valid(body)
    assert 'aria-current="step"' in body
    assert "Use MPIJob for multi-node training with MPI-based frameworks" in body
    assert "PyTorchJob" in body and "TFJob" in body
    assert "not yet created here" in body
    assert "Horovod" in body  # a built-in template
    assert "Paste an MPIJob manifest (YAML)" in body
    assert not WizardDraft.objects.exists()  # looking creates nothing


def test_it_shows_the_built_in_templates_in_the_persons_language(alice, monkeypatch):
    from odh.training import i18n
    english = i18n._translate
    monkeypatch.setattr(i18n, "_translate", lambda message: f"«{english(message)}»")
    body = html.unescape(alice.get(NEW).content.decode())
    for title in ("Horovod + PyTorch", "Horovod + TensorFlow", "DeepSpeed (MPI backend)",
                  "Intel MPI"):
        assert f"«{title}»" in body


def test_each_step_has_labelled_fields_and_valid_html(alice):
    key = start(alice)
    config = alice.get(step_url(key, "configuration")).content.decode()
    assert_valid(config)
    for label in ("Project", "Job name", "Training image", "Command"):
        assert f'<span class="pf-v6-c-form__label-text">{label}</span>' in config
    resources = alice.get(step_url(key, "resources")).content.decode()
    assert_valid(resources)
    for label in ("Number of workers", "CPUs per worker", "Memory per worker", "GPUs per worker",
                  "Slots per worker", "MPI implementation", "GPU type", "Priority class",
                  "Clean-pod policy", "Disable service-mesh sidecar"):
        assert f">{label}</span>" in resources, label
    assert '<details class="dash-advanced" id="advanced">' in resources  # collapsed
    assert "NVIDIA-A100-SXM4-80GB" in resources  # GPU types from the nodes' labels
    # the draft's project (team-cv) has a Kueue LocalQueue: its queue and priorities are
    # offered, none chosen (it has no "default" queue)
    for label in ("Kueue queue", "Queue priority"):
        assert f">{label}</span>" in resources, label
    assert '<option value="team-cv-queue">team-cv-queue</option>' in resources
    assert '<option value="high">high (1000)</option>' in resources
    review = alice.get(step_url(key, "review")).content.decode()
    assert_valid(review)


def test_back_keeps_what_was_typed(alice):
    key = start(alice)
    name = unique()
    r = post_step(alice, key, "configuration", name=name, image="quay.io/x/y:1",
                  command="python train.py --epochs 3")
    assert r.status_code == 302
    r = post_step(alice, key, "resources", action="back", workers="7")
    assert r["Location"] == step_url(key, "configuration")
    page = alice.get(step_url(key, "configuration")).content.decode()
    values = form_values(page, step_url(key, "configuration"))
    assert values["name"] == name
    assert values["command"] == "python train.py --epochs 3"
    resources = form_values(alice.get(step_url(key, "resources")).content.decode(),
                            step_url(key, "resources"))
    assert resources["workers"] == "7"


def test_a_reload_shows_the_same_input(alice):
    key = start(alice)
    post_step(alice, key, "configuration", name="Not A Name", action="back")
    for _ in range(2):
        values = form_values(alice.get(step_url(key, "configuration")).content.decode(),
                             step_url(key, "configuration"))
        assert values["name"] == "Not A Name"


def test_an_invalid_name_gets_a_message_on_its_field(alice):
    key = start(alice)
    r = post_step(alice, key, "configuration", name="Bad_Name!", image="quay.io/x/y:1",
                  command="python train.py")
    body = r.content.decode()
    assert r.status_code == 200
    assert_valid(body)
    assert 'id="id_name-message"' in body
    assert 'aria-invalid="true"' in body
    assert "Bad_Name!" in body and "lower-case" in body
    assert draft(key).data["name"] == "Bad_Name!"  # kept, for a reload or Back


def test_a_name_already_taken_in_the_project_gets_a_message(alice):
    key = start(alice)
    r = post_step(alice, key, "configuration", namespace="team-nlp", name="bert-large-pretrain",
                  image="quay.io/x/y:1", command="python train.py")
    assert r.status_code == 200
    assert "already exists in team-nlp" in r.content.decode()


def test_the_validate_endpoint_answers_with_the_fields_message(alice):
    key = start(alice)
    url = reverse("training-job-new-validate", args=[key])
    r = alice.post(url, {"step": "configuration", "namespace": "team-nlp",
                         "name": "bert-large-pretrain"},
                   HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="name")
    body = r.content.decode()
    assert r.status_code == 200
    assert "<html" not in body
    assert "already exists" in body and 'data-severity="error"' in body
    assert draft(key).data["name"] == "bert-large-pretrain"  # as typed, kept
    r = alice.post(url, {"step": "configuration", "namespace": "team-nlp",
                         "name": unique()}, HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="name")
    assert r.content.decode().strip() == ""


def test_the_steps_error_banner_goes_when_its_errors_have_gone(alice):
    key = start(alice)
    fields = {"namespace": "team-nlp", "name": "bert-large-pretrain", "image": "quay.io/x/y:1",
              "command": "python train.py"}
    r = post_step(alice, key, "configuration", **fields)
    assert "Some fields need your attention" in r.content.decode()
    url = reverse("training-job-new-validate", args=[key])
    fixed = alice.post(url, {"step": "configuration", **fields, "name": unique()},
                       HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="name").content.decode()
    assert '<div id="wizard-step-errors" hx-swap-oob="true"></div>' in fixed
    still = alice.post(url, {"step": "configuration", **fields, "image": ""},
                       HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="name").content.decode()
    assert "wizard-step-errors" not in still  # errors are left: the banner stays


def test_a_project_the_person_cannot_see_is_refused_in_place(alice):
    key = start(alice)
    r = post_step(alice, key, "configuration", namespace="research", name=unique(),
                  image="quay.io/x/y:1", command="python train.py")
    body = r.content.decode()
    assert r.status_code == 200
    assert "You cannot see the project “research”" in body


def test_resources_messages_come_from_validation(alice):
    key = start(alice)
    fill_ok = post_step(alice, key, "configuration", name=unique(), image="quay.io/x/y:1",
                        command="python train.py")
    assert fill_ok.status_code == 302
    r = post_step(alice, key, "resources", workers="0", memory_per_worker="16GB",
                  gpus_per_worker="two")
    body = r.content.decode()
    assert r.status_code == 200
    assert "1 to" in body  # workers 1..100
    assert "did you mean 16Gi?" in body
    assert "“two” is not a whole number" in body


def test_advanced_options_open_when_they_need_attention(alice):
    key = start(alice)
    post_step(alice, key, "configuration", name=unique(), image="quay.io/x/y:1",
              command="python train.py")
    r = post_step(alice, key, "resources", labels="no equals sign here")
    body = r.content.decode()
    assert '<details class="dash-advanced" id="advanced" open>' in body
    assert "is not key=value" in body


def test_environment_rows_are_added_and_removed_without_javascript(alice):
    key = start(alice)
    post_step(alice, key, "configuration", name=unique(), image="quay.io/x/y:1",
              command="python train.py")
    r = alice.post(step_url(key, "resources"), {
        **form_values(alice.get(step_url(key, "resources")).content.decode(),
                      step_url(key, "resources")), "add_env": "1"})
    assert r.status_code == 302
    r = post_step(alice, key, "resources", action="back", **{"env-0-name": "NCCL_DEBUG",
                                                              "env-0-value": "INFO"})
    assert draft(key).data["env"] == [{"name": "NCCL_DEBUG", "value": "INFO",
                                       "value_from": None}]
    page = alice.get(step_url(key, "resources")).content.decode()
    assert 'value="NCCL_DEBUG"' in page
    values = form_values(page, step_url(key, "resources"))
    alice.post(step_url(key, "resources"), {**values, "remove_env": "0"})
    assert draft(key).data["env"] == []


def test_someone_elses_draft_is_not_found(alice, demo_cluster, django_user_model):
    key = start(alice)
    from django.test import Client

    from tests.dashboard_support import sign_in

    other = Client()
    sign_in(other, demo_cluster, "bob")
    assert other.get(step_url(key, "configuration")).status_code == 404
    assert other.post(reverse("training-job-new-create", args=[key])).status_code == 404


def test_an_unknown_step_is_not_found(alice):
    key = start(alice)
    assert alice.get(step_url(key, "launch")).status_code == 404


@pytest.mark.parametrize("step", ["configuration", "resources", "review"])
def test_htmx_step_changes_answer_with_the_wizard_only(alice, step):
    key = start(alice)
    r = alice.get(step_url(key, step), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="wizard",
                  HTTP_HX_BOOSTED="true")
    body = r.content.decode()
    # the wizard, after the window's title naming the step (htmx takes it from the root)
    assert re.match(r'<title>[^<]+ · Create a training job · [^<]+</title>\s*<div id="wizard"',
                    body)
    assert r["HX-Push-Url"] == step_url(key, step)


def test_cancel_deletes_the_draft(alice):
    key = start(alice)
    r = post_step(alice, key, "configuration", action="cancel")
    assert r["Location"] == reverse("training-job-list")
    assert not WizardDraft.objects.filter(key=key).exists()
    assert alice.get(step_url(key, "configuration")).status_code == 404


def test_the_draft_survives_signing_in_again(alice, demo_cluster):
    key = start(alice)
    post_step(alice, key, "configuration", name="kept-through-sign-in", action="back")
    session = alice.session
    session["openshift"]["expires_at"] = 0  # the token expired
    session.save()
    r = alice.get(step_url(key, "configuration"))
    assert r.status_code == 302 and "next=" in r["Location"]
    from tests.dashboard_support import sign_in

    sign_in(alice, demo_cluster, "alice")
    values = form_values(alice.get(step_url(key, "configuration")).content.decode(),
                         step_url(key, "configuration"))
    assert values["name"] == "kept-through-sign-in"


def test_the_whole_flow_without_javascript_reaches_the_review(alice):
    key = start(alice)
    fill(alice, key, name=unique(), workers=2)
    body = alice.get(step_url(key, "review")).content.decode()
    assert "2 Workers, each with 1 CPU, 2Gi" in body
    assert "kind: MPIJob" in body
    assert "Copy YAML" in body and "Copy Python code" in body
    assert "Create job" in body and "Save as template" in body


def test_someone_who_may_create_nowhere_is_told_at_the_first_step(bob):
    """bob may view research only: the first step says so, and offers no way in that
    would end at Create with a refusal."""
    body = bob.get(NEW).content.decode()
    assert_valid(body)
    assert ("You may look at the jobs of research but not create any there: creating a job "
            "needs the edit role in a project.") in html.unescape(body)
    assert '<button type="submit" name="start" value="mpijob" class="pf-v6-c-button ' \
           'pf-m-primary" disabled>' in body


NP_WARNING = "The command starts 4 MPI ranks (-np 4) but"


def _to_resources_with_np_4(alice) -> str:
    key = start(alice)
    r = post_step(alice, key, "configuration", name=unique(), image="quay.io/x/y:1",
                  command="horovodrun -np 4 python train.py")
    assert r["Location"] == step_url(key, "resources")
    return key


def test_the_np_check_waits_until_the_workers_are_chosen(alice):
    key = _to_resources_with_np_4(alice)
    url = step_url(key, "resources")
    page = alice.get(url).content.decode()
    # on arrival the Workers are the default 1: nothing to agree with yet
    assert NP_WARNING not in html.unescape(page)
    # the person chooses 2 Workers: the field's own check names both ways to agree
    values = form_values(page, url)
    r = alice.post(reverse("training-job-new-validate", args=[key]),
                   {**values, "step": "resources", "workers": "2"},
                   HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="workers")
    said = html.unescape(r.content.decode())
    assert ("The command starts 4 MPI ranks (-np 4) but 2 workers x 1 slots give 2: change "
            "-np to 2, or choose 4 workers.") in said
    # and the page says it from then on
    assert "change -np to 2, or choose 4 workers." in html.unescape(
        alice.get(url).content.decode())


def test_the_np_check_speaks_once_the_resources_step_is_left(alice):
    key = _to_resources_with_np_4(alice)
    r = post_step(alice, key, "resources")  # Next with the Workers as they were
    assert r["Location"] == step_url(key, "review")  # a warning does not hold the step
    back = html.unescape(alice.get(step_url(key, "resources")).content.decode())
    assert "change -np to 1, or choose 4 workers." in back

"""The simple mode: a person's first job asks only its name, image, command, Workers and
GPUs; "Show all the options" opens the full wizard with everything typed kept."""

from __future__ import annotations

import html

import pytest
from django.test import Client
from kubernetes import client as k8s

from tests.dashboard_support import sign_in
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard import wizard_flow as flow
from tests.integration.dashboard.wizard.wizard_flow import post_step, start, step_url, unique

NS = "team-cv"
IMAGE = "quay.io/opendatahub/horovod:0.28.1-pytorch2.1"


@pytest.fixture
def newcomer(demo_cluster, db):
    """bob, who may create jobs in team-cv and has none there (nor any in the history)."""
    with demo_cluster.api_client("admin") as api:
        rbac = k8s.RbacAuthorizationV1Api(api)
        rbac.create_namespaced_role_binding(NS, {
            "metadata": {"name": "wizard-bob-edit"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "edit"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": "bob"}]})
        bob = Client()
        sign_in(bob, demo_cluster, "bob")
        yield bob
        rbac.delete_namespaced_role_binding("wizard-bob-edit", NS)


def test_a_first_job_is_made_in_the_simple_mode(newcomer, cluster_jobs):
    key = start(newcomer)
    page = newcomer.get(step_url(key, "configuration")).content.decode()
    assert_valid(page)
    assert 'id="simple-mode-note"' in page
    for label in ("id_name", "id_image", "id_command", "id_workers", "id_gpus_per_worker"):
        assert f'<label class="pf-v6-c-form__label" for="{label}">' in page
    assert 'for="id_description"' not in page and 'for="id_working_dir"' not in page
    name = unique("wiz-simple")
    r = post_step(newcomer, key, "configuration", namespace=NS, name=name, image=IMAGE,
                  command="horovodrun -np 2 python /workspace/train.py", workers="2",
                  gpus_per_worker="0")
    assert r.status_code == 302 and r["Location"] == step_url(key, "review")  # one step
    cluster_jobs.track(NS, name)
    assert flow.create(newcomer, key).status_code == 302
    job = cluster_jobs.get(NS, name)
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2


def test_a_refusal_in_the_simple_mode_keeps_what_was_typed(newcomer):
    key = start(newcomer)
    r = post_step(newcomer, key, "configuration", namespace=NS, name="simple-one",
                  image=IMAGE, command="python train.py", workers="0")
    body = html.unescape(r.content.decode())
    assert r.status_code == 200
    assert 'name="workers"' in body and 'value="0"' in body and 'value="simple-one"' in body
    assert 'aria-invalid="true"' in body


def test_show_all_the_options_keeps_what_was_typed(newcomer):
    key = start(newcomer)
    r = post_step(newcomer, key, "configuration", action="full", namespace=NS,
                  name="typed-first", image=IMAGE, command="python train.py", workers="3",
                  gpus_per_worker="1")
    assert r.status_code == 302 and r["Location"] == step_url(key, "configuration")
    page = newcomer.get(r["Location"]).content.decode()
    assert 'id="simple-mode-note"' not in page and 'for="id_description"' in page
    assert 'value="typed-first"' in page
    values = flow.form_values(newcomer.get(step_url(key, "resources")).content.decode(),
                              step_url(key, "resources"))
    assert (values["workers"], values["gpus_per_worker"]) == ("3", "1")


def test_someone_with_jobs_in_the_project_gets_the_full_wizard(alice):
    key = start(alice)
    page = alice.get(step_url(key, "configuration")).content.decode()
    assert 'id="simple-mode-note"' not in page and 'for="id_description"' in page


def test_back_and_change_from_the_review_return_to_the_simple_form_with_everything(newcomer):
    key = start(newcomer)
    r = post_step(newcomer, key, "configuration", namespace=NS, name="simple-back",
                  image=IMAGE, command="python train.py", workers="3", gpus_per_worker="1")
    assert r["Location"] == step_url(key, "review")
    review = newcomer.get(step_url(key, "review")).content.decode()
    assert_valid(review)
    simple_form = step_url(key, "configuration")
    # Back and Change lead to the simple form, never to the full Resources step
    assert f'href="{simple_form}" class="pf-v6-c-button pf-m-secondary" id="review-back"' \
        in review
    assert f'<a href="{simple_form}" id="review-change">Change the job</a>' in review
    assert step_url(key, "resources") not in review
    page = newcomer.get(simple_form).content.decode()
    assert 'id="simple-mode-note"' in page
    values = flow.form_values(page, simple_form)
    assert (values["name"], values["image"], values["command"], values["workers"],
            values["gpus_per_worker"]) == ("simple-back", IMAGE, "python train.py", "3", "1")
    # a change there, then the full form: everything kept, the change too
    r = post_step(newcomer, key, "configuration", action="full", workers="4")
    page = newcomer.get(r["Location"]).content.decode()
    assert 'id="simple-mode-note"' not in page and 'value="simple-back"' in page
    values = flow.form_values(newcomer.get(step_url(key, "resources")).content.decode(),
                              step_url(key, "resources"))
    assert (values["workers"], values["gpus_per_worker"]) == ("4", "1")
    # the full wizard's review goes Back to the Resources step
    review = newcomer.get(step_url(key, "review")).content.decode()
    assert f'href="{step_url(key, "resources")}" class="pf-v6-c-button pf-m-secondary" ' \
        'id="review-back"' in review

"""Bad input thrown at every wizard endpoint: each case ends in a message on the page,
never a server error, and nothing half-created in the cluster."""

from __future__ import annotations

from django.conf import settings as django_settings
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.integration.dashboard.wizard.wizard_flow import (
    NEW,
    form_values,
    start,
    step_url,
)

NS = "team-cv"
INJECTED = "<script>alert(1)</script>"
ODD = ["", "  ", INJECTED, '"><img src=x onerror=alert(1)>', "{{ 7*7 }}", "{% debug %}",
       "../../etc/passwd", "a" * 300, "Ünïcødé-名前", "\x00", "x\ny", "-1", "bert-large-pretrain",
       "'; DROP TABLE training_auditevent; --"]
NUMBERS = ["", "0", "-1", "1.5", "1e400", "9" * 40, "0x10", "१२", "NaN", "101", "3"]
QUANTITIES = ["", "-1", "-500m", "1e400", "16GB", "99999999999999999999Gi", "9Ei", "abc", "1.5",
              "0", "500m"]

text = st.one_of(st.sampled_from(ODD), st.text(max_size=70))
number = st.one_of(st.sampled_from(NUMBERS), st.integers(-10**30, 10**30).map(str),
                   st.text(max_size=8))
quantity = st.one_of(st.sampled_from(QUANTITIES), st.text(max_size=12))
FUZZ = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def _ok(response) -> str:
    assert response.status_code < 500, response.content.decode()[:2000]
    body = response.content.decode()
    assert INJECTED not in body
    return body


@FUZZ
@given(name=text, image=text, command=text, workers=number, cpu=quantity, memory=quantity,
       gpus=number, slots=number, labels=text, env_name=text, ttl=number)
def test_bad_input_ends_in_messages_and_creates_nothing_half(
        alice, cluster_jobs, name, image, command, workers, cpu, memory, gpus, slots, labels,
        env_name, ttl):
    before = cluster_jobs.names(NS)
    key = start(alice)
    config_url = step_url(key, "configuration")
    r = alice.post(config_url, {"step": "configuration", "namespace": NS, "name": name,
                                "image": image, "command": command, "action": "next"})
    body = _ok(r)
    if r.status_code == 200:
        assert "pf-m-error" in body
    resources_url = step_url(key, "resources")
    values = form_values(_ok(alice.get(resources_url)), resources_url)
    values.update({"workers": workers, "cpu_per_worker": cpu, "memory_per_worker": memory,
                   "gpus_per_worker": gpus, "slots_per_worker": slots, "labels": labels,
                   "env-0-name": env_name, "env-0-value": INJECTED,
                   "ttl_seconds_after_finished": ttl, "action": "next"})
    r = alice.post(resources_url, values)
    body = _ok(r)
    if r.status_code == 200:
        assert "pf-m-error" in body
    for field in ("name", "workers", "memory_per_worker", "env-0-name", "no-such-field"):
        _ok(alice.post(reverse("training-job-new-validate", args=[key]),
                       {**values, "step": "resources"}, HTTP_HX_REQUEST="true",
                       HTTP_HX_TRIGGER_NAME=field))
    _ok(alice.post(reverse("training-job-new-check", args=[key]), values,
                   HTTP_HX_REQUEST="true"))
    review = _ok(alice.get(step_url(key, "review")))
    r = alice.post(reverse("training-job-new-create", args=[key]))
    body = _ok(r)
    if r.status_code == 302:  # the input happened to be a valid job: it exists, whole
        created = cluster_jobs.names(NS) - before
        assert len(created) == 1
        cluster_jobs.track(NS, created.pop())
    else:
        assert "pf-m-danger" in body or "pf-m-error" in body or "review-problems" in review
        assert cluster_jobs.names(NS) == before


@FUZZ
@given(manifest=st.one_of(st.text(max_size=400), st.sampled_from([
    INJECTED, "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\n", "kind: MPIJob\n" * 3,
    "a: &a [1]\nb: *a\n", "{" * 200, "- - - - - - - -", "!!python/object:os.system ls",
    "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: " + INJECTED + "}\n"])))
# a paste bigger than Django reads of a form at all (DATA_UPLOAD_MAX_MEMORY_SIZE)
@example(manifest="kind: MPIJob\n" + "x" * django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
def test_bad_imports_end_in_a_message(alice, manifest):
    r = alice.post(NEW, {"import": "1", "manifest": manifest})
    body = _ok(r)
    if r.status_code == 200:
        assert 'id="id_manifest-message"' in body and "pf-m-error" in body

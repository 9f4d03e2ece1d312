"""The wizard where Kueue governs the project (training/wizard/queue.py): the project's
default queue chosen, Kueue's priorities offered, and what Kueue will do with the job
(admitted at once, or queued at a position with an expected start) on the resource check,
the review and the confirmation."""

from __future__ import annotations

import html
import re

from django.urls import reverse

from tests.integration.dashboard.wizard.wizard_flow import (
    create,
    form_values,
    post_step,
    start,
    step_url,
    unique,
)
from tests.integration.kueue.support import NS, _job, _queued_job, _reserved
from tests.page_text import text_of
from tests.waiting import wait_until

IMAGE = "quay.io/team-a/train:1"


def _draft(alice, made, **resources) -> tuple[str, str]:
    key = start(alice)
    name = unique("wiz")
    r = post_step(alice, key, "configuration", namespace=NS, name=name, image=IMAGE,
                  command="mpirun python train.py")
    assert r.status_code == 302
    r = post_step(alice, key, "resources", **{k: str(v) for k, v in resources.items()})
    assert r.status_code == 302, r.content.decode()[-2000:]
    made.append(name)  # deleted after the test if it was created
    return key, name


def test_the_project_default_queue_and_kueue_priorities_are_offered(signed_in, api, made):
    alice = signed_in("alice")
    key = start(alice)
    post_step(alice, key, "configuration", namespace=NS, name=unique("wiz"), image=IMAGE,
              command="mpirun python train.py")
    page = alice.get(step_url(key, "resources")).content.decode()
    values = form_values(page, step_url(key, "resources"))
    assert values["queue_name"] == "default"  # Kueue's default LocalQueue
    priorities = re.search(r'<select name="queue_priority".*?</select>', page, re.S).group(0)
    assert re.findall(r"<option[^>]*>([^<]*)</option>", priorities) == [
        "None (priority 0)", "high (1000)", "low (10)"]


def test_a_job_that_fits_is_said_to_be_admitted_at_once(signed_in, api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=1)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    alice = signed_in("alice")
    key, _name = _draft(alice, made, workers=1, gpus_per_worker=8, queue_name="gpu-queue")
    review = alice.get(step_url(key, "review")).content.decode()
    assert text_of(review, "queue-forecast-text") == (
        "Kueue should admit it at once: the ClusterQueue gpu-a100 has room (needs 8 GPUs, "
        "8 free now)")


def test_a_job_that_must_wait_is_told_its_position_and_on_creation_too(signed_in, api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=1)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    alice = signed_in("alice")
    key, name = _draft(alice, made, workers=2, gpus_per_worker=8, queue_name="gpu-queue",
                       queue_priority="high")
    review = alice.get(step_url(key, "review")).content.decode()
    assert text_of(review, "queue-forecast-text") == (
        "Queued in gpu-queue: position 1 of 1 (ClusterQueue gpu-a100), needs 16 GPUs, "
        "8 free now")
    assert text_of(review, "queue-forecast-expected").startswith("Expected start: ")
    # the live resource check says the same
    check = alice.get(reverse("training-job-new-check", args=[key]), {"step": "resources"})
    assert "position 1 of 1" in text_of(check.content.decode(), "queue-forecast-text")
    r = create(alice, key)
    assert r.status_code == 302
    page = alice.get(r["Location"]).content.decode()
    assert "Queued in gpu-queue: position 1 of 1 (ClusterQueue gpu-a100)" in page
    labels = _job(api, name)["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "gpu-queue"
    assert labels["kueue.x-k8s.io/priority-class"] == "high"


def test_a_queue_priority_that_does_not_exist_is_refused(signed_in, api, made):
    alice = signed_in("alice")
    key = start(alice)
    post_step(alice, key, "configuration", namespace=NS, name=unique("wiz"), image=IMAGE,
              command="mpirun python train.py")
    r = post_step(alice, key, "resources", queue_name="gpu-queue", queue_priority="urgent")
    assert r.status_code == 200
    assert ('Queue priority "urgent" does not exist: choose one of high, low, or leave it '
            "empty.") in html.unescape(re.sub(r"\s+", " ", r.content.decode()))

"""A succeeded job's Overview ends with what the run ended with (the UX analysis' success
card): the last values of its Training curves, its duration and GPU-hours, and "Create
another like this"; a job of another status has none."""

from __future__ import annotations

from django.urls import reverse
from kubernetes import client as k8s

from tests.html_checks import assert_valid
from tests.page_text import text_of

NS = "team-nlp"


def _uid(demo_cluster, namespace: str, name: str) -> str:
    with demo_cluster.api_client("admin") as api:
        job = k8s.CustomObjectsApi(api).get_namespaced_custom_object(
            "kubeflow.org", "v2beta1", namespace, "mpijobs", name)
    return job["metadata"]["uid"]


def _page(client, namespace: str, name: str) -> str:
    r = client.get(reverse("training-job-detail", args=[namespace, "mpijob", name]))
    assert r.status_code == 200
    return r.content.decode()


def test_a_succeeded_run_says_what_it_ended_with(alice, demo_cluster):
    from training.curves.models import TrainingCurves
    from training.models import JobHistory

    uid = _uid(demo_cluster, "team-cv", "resnet50-imagenet")
    TrainingCurves.objects.update_or_create(job_uid=uid, defaults={
        "namespace": "team-cv", "kind": "MPIJob", "name": "resnet50-imagenet", "points": 6,
        "finished": True, "state": {"series": [
            {"name": "loss", "per": "epoch", "points": [[None, 1, 1.2, None],
                                                        [None, 2, 0.42, None]]},
            {"name": "loss", "per": "step", "points": [[10, 1, 1.5, None],
                                                       [20, 2, 0.4, None]]},
            {"name": "accuracy", "per": "epoch", "points": [[None, 1, 0.61, None],
                                                            [None, 2, 0.873, None]]},
            {"name": "img/sec", "per": "step", "points": [[10, 1, 1180.0, None],
                                                          [20, 2, 1204.5, None]]}]}})
    JobHistory.record_once(uid=uid, namespace="team-cv", kind="MPIJob",
                           name="resnet50-imagenet", outcome="Succeeded", spec={},
                           duration_seconds=5400.0, gpu_hours=12.5)
    body = _page(alice, "team-cv", "resnet50-imagenet")
    assert_valid(body)
    card = text_of(body, "job-run-summary")
    assert "What this run ended with" in card
    # the epochs' last summary where it logged one; the well-known ones first
    assert card.index("Loss") < card.index("Accuracy") < card.index("Images per second")
    assert "0.42" in card and "0.873" in card and "1204.5" in card
    assert "12.50" in text_of(body, "job-run-gpu-hours")
    assert 'id="job-run-again" href="/jobs/new/?clone=team-cv/mpijob/resnet50-imagenet"' \
        in body
    # where it wrote its model (--output_dir on its claim): deployed with KServe; this
    # cluster has no model serving, so the card gives the command
    command = text_of(body, "job-deploy-command")
    assert command.startswith("oc apply -n team-cv -f - <<'EOF'")
    assert "kind: InferenceService" in command and "storageUri: pvc://" in command


def test_only_a_succeeded_run_has_one(alice):
    assert 'id="job-run-summary"' not in _page(alice, NS, "bert-large-pretrain")  # running
    assert 'id="job-run-summary"' not in _page(alice, NS, "gpt2-finetune")  # failed

"""A job's Artifacts tab against the demo cluster: the files its run wrote on its volume,
listed and downloaded as alice through a short-lived pod of hers, refused in plain words to
bob (who may read research but not start pods there), and "Resume from this checkpoint"
on the failed gpt2-finetune, whose template declares --resume_from_checkpoint."""

from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qs, urlparse

from django.core.cache import cache
from django.urls import reverse

from tests.html_checks import assert_valid

RESNET = ("team-cv", "mpijob", "resnet50-imagenet")
GPT2 = ("team-nlp", "mpijob", "gpt2-finetune")
BERT_DDP = ("research", "pytorchjob", "bert-classifier-ddp")


def _page(ref: tuple[str, str, str]) -> str:
    return reverse("training-job-detail", args=ref) + "?tab=artifacts"


def _text(body: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def _download_links(body: str) -> dict[str, str]:
    links = re.findall(r'href="([^"]*/artifacts/download/\?[^"]*)"', body)
    found = {}
    for link in links:
        url = html.unescape(link)
        found[parse_qs(urlparse(url).query)["path"][0]] = url
    return found


def test_alice_sees_the_files_a_finished_run_left_with_sizes_times_and_its_newest_checkpoint(
        alice):
    cache.clear()
    r = alice.get(_page(RESNET))
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    text = _text(body)
    assert "/mnt/checkpoints/resnet50-imagenet" in text
    assert "On the volume checkpoints; named by --output_dir." in text
    checkpoints = sorted({int(n) for n in re.findall(r"checkpoint-(\d+)/", text)})
    assert len(checkpoints) == 3  # the newest three of twelve epochs are kept
    newest = re.search(r"Newest checkpoint (checkpoint-\d+)", text).group(1)
    assert newest == f"checkpoint-{checkpoints[-1]}"
    assert re.search(r"events\.out\.tfevents\.\d+\.resnet50-imagenet-worker-0\.1\.0", text)
    assert "tensorboard --logdir /mnt/checkpoints/resnet50-imagenet" in text
    assert re.search(r"pytorch_model\.bin \d+(\.\d)? MB", text)
    assert "ago" in text
    # a finished run is not resumed
    assert "Resume from this checkpoint" not in text
    links = _download_links(body)
    assert "train_results.json" in links and "pytorch_model.bin" not in links
    assert "Larger than 25.0 MiB: copy it with oc rsync" in text


def test_alice_downloads_one_file_and_a_path_outside_is_refused(alice):
    links = _download_links(alice.get(_page(RESNET)).content.decode())
    r = alice.get(links["train_results.json"])
    assert r.status_code == 200
    assert r["Content-Disposition"] == 'attachment; filename="train_results.json"'
    assert json.loads(r.content)["epoch"] == 12.0
    url = reverse("training-job-artifact-download", args=RESNET)
    r = alice.get(url, {"output": "0", "path": "../../etc/passwd"}, follow=True)
    assert "outside the job's output directory" in _text(r.content.decode())
    r = alice.get(url, {"output": "0", "path": "pytorch_model.bin"}, follow=True)
    assert "more than the 25.0 MiB the dashboard downloads" in _text(r.content.decode())


def test_bob_who_may_not_start_pods_in_research_is_told_so(bob):
    cache.clear()
    r = bob.get(_page(BERT_DDP))
    assert r.status_code == 200
    text = _text(r.content.decode())
    assert "/mnt/checkpoints/bert-classifier-ddp" in text
    assert "You may not start pods in research" in text
    r = bob.get(reverse("training-job-artifact-download", args=BERT_DDP),
                {"output": "0", "path": "config.json"}, follow=True)
    assert "You may not start pods in research" in _text(r.content.decode())
    # a project he cannot see: not a word of its files
    r = bob.get(reverse("training-job-artifact-download", args=RESNET),
                {"output": "0", "path": "train_results.json"})
    assert r.status_code in (403, 404) and "global_step" not in r.content.decode()


def test_the_failed_run_offers_to_resume_from_its_newest_checkpoint_in_a_clone(alice):
    cache.clear()
    body = alice.get(_page(GPT2)).content.decode()
    text = _text(body)
    newest = re.search(r"Newest checkpoint (checkpoint-\d+)", text).group(1)
    resume = html.unescape(re.search(r'href="([^"]+)" id="job-resume-checkpoint"',
                                     body).group(1))
    r = alice.get(resume, follow=True)
    assert r.status_code == 200
    page = _text(r.content.decode())
    assert f"Resume from {newest}" in page
    assert f"--resume_from_checkpoint /mnt/checkpoints/gpt2-finetune/{newest}" in page
    # the Overview names it too, with the same button
    summary = alice.get(reverse("training-job-artifacts-summary", args=GPT2)).content.decode()
    assert f"Newest checkpoint: {newest}" in _text(summary)
    assert "Resume from this checkpoint" in _text(summary)


def test_the_succeeded_runs_overview_names_its_artifacts(alice):
    overview = alice.get(reverse("training-job-detail", args=RESNET)).content.decode()
    assert reverse("training-job-artifacts-summary", args=RESNET) in overview
    summary = _text(alice.get(reverse("training-job-artifacts-summary", args=RESNET))
                    .content.decode())
    assert re.search(r"Artifacts: \d+ files, \d+(\.\d)? [MG]B", summary)  # about 1 GB
    assert re.search(r"Newest checkpoint: checkpoint-\d+", summary)
    assert "Resume" not in summary


def test_a_job_that_names_no_output_says_how_to_declare_one(alice):
    text = _text(alice.get(_page(("team-nlp", "mpijob", "bert-large-pretrain")))
                 .content.decode())
    assert "This job does not say where it writes" in text
    assert "opendatahub.io/output-path" in text


def test_a_failed_run_whose_template_declares_no_resume_way_offers_no_resume_button(
        alice, demo_cluster):
    from kubernetes import client as k8s

    from tests.waiting import wait_until

    name = "artifacts-no-resume"
    manifest = {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "team-nlp", "annotations": {
            "simcluster.io/run-seconds": "40", "simcluster.io/epochs": "4",
            "simcluster.io/failure": "exit-code", "simcluster.io/failure-after-seconds": "25"}},
        "spec": {"slotsPerWorker": 1, "runPolicy": {"backoffLimit": 0}, "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{
                "name": "launcher", "image": "quay.io/opendatahub/horovod:0.28.1-pytorch2.1",
                "command": ["mpirun", "-np", "1", "python", "t.py",
                            "--output_dir", f"/mnt/checkpoints/{name}"],
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}},
            "Worker": {"replicas": 1, "template": {"spec": {
                "containers": [{"name": "worker",
                                "image": "quay.io/opendatahub/horovod:0.28.1-pytorch2.1",
                                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                                "volumeMounts": [{"name": "c", "mountPath": "/mnt/checkpoints"}]}],
                "volumes": [{"name": "c",
                             "persistentVolumeClaim": {"claimName": "checkpoints"}}]}}}}}}
    api = k8s.CustomObjectsApi(demo_cluster.api_client("alice"))
    api.create_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs",
                                        manifest)
    try:
        wait_until(lambda: any(c["type"] == "Failed" and c["status"] == "True" for c in (
            api.get_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs",
                                             name).get("status") or {}).get("conditions", [])),
                   60, message=f"{name} to fail")
        cache.clear()
        body = alice.get(_page(("team-nlp", "mpijob", name))).content.decode()
        text = _text(body)
        assert re.search(r"Newest checkpoint checkpoint-\d+", text)
        assert 'id="job-resume-checkpoint"' not in body and "fix=" not in body
        assert "does not say how to resume from a checkpoint" in text
    finally:
        api.delete_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp", "mpijobs",
                                            name)

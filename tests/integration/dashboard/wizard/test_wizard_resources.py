"""The Resources step: the live resource check against the project's quota and the nodes,
suggested fixes that apply themselves, and the advanced options that read the cluster."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from odh.training.manifests.totals import cpus
from odh.training.quantity import display_memory, format_memory, parse_quantity
from tests.html_checks import assert_valid
from tests.integration.dashboard.wizard.wizard_flow import (
    draft,
    form_values,
    post_step,
    start,
    step_url,
    unique,
)
from tests.waiting import wait_until

NS = "team-nlp"


def _text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _draft_asking_for(alice, workers: int, gpus: int, namespace: str = NS) -> str:
    key = start(alice)
    post_step(alice, key, "configuration", namespace=namespace, name=unique(),
              image="quay.io/a/b:1", command=f"horovodrun -np {workers * gpus} python x.py")
    post_step(alice, key, "resources", action="back", workers=str(workers),
              gpus_per_worker=str(gpus))
    return key


def _gpus_in_use(demo_cluster, namespace: str) -> int:
    from kubernetes import client as k8s

    with demo_cluster.api_client("admin") as api:
        quota = k8s.CoreV1Api(api).read_namespaced_resource_quota("team-quota", namespace)
    return int(quota.status.used["requests.nvidia.com/gpu"])


# team-cv's quota is 56 GPUs, and its jobs hold 38 of them (vit-huge-pretrain's two waiting
# 12-GPU Workers, three 2-GPU jobs and the two its Kueue queue runs): 5 workers x 4 GPUs do
# not fit, 4 workers or 3 GPUs each do.
CV = "team-cv"


def test_more_gpus_than_the_quota_shows_the_numbers_and_fixes(alice, demo_cluster):
    key = _draft_asking_for(alice, workers=5, gpus=4, namespace=CV)  # 20 GPUs
    page = alice.get(step_url(key, "resources")).content.decode()
    assert_valid(page)
    text = _text(page)
    used = _gpus_in_use(demo_cluster, CV)
    assert used == 38
    assert "5 workers x 4 GPUs = 20 GPUs" in text
    assert (f"Requested 20 GPUs but only {56 - used} available under the team-cv quota "
            f"({used}/56 in use)") in text
    assert "it will wait, Pending" in text
    assert "Reduce workers to 4" in text
    assert "Reduce GPUs per worker to 3" in text
    assert 'formaction="' + reverse("training-job-new-fix", args=[key]) in page


def test_pressing_a_fix_changes_the_draft(alice):
    key = _draft_asking_for(alice, workers=5, gpus=4, namespace=CV)
    url = step_url(key, "resources")
    values = form_values(alice.get(url).content.decode(), url)
    page = alice.get(url).content.decode()
    labels = re.findall(r'name="fix" value="(\d+)"[^>]*>([^<]+)</button>', page)
    index = next(i for i, label in labels if label == "Reduce workers to 4")
    r = alice.post(reverse("training-job-new-fix", args=[key]), {**values, "fix": index})
    assert r.status_code == 302
    assert r["Location"] == url + "#resource-check"
    data = draft(key).data
    assert data["workers"] == "4"
    assert data["command"] == "horovodrun -np 16 python x.py"  # -np kept in step
    after = _text(alice.get(url).content.decode())
    assert "Applied: Reduce workers to 4." in after
    assert "under the team-cv quota" not in after
    # the quota holds it now, the nodes do not (8 GPUs free on gpu-a100-4, the rest taken):
    # without gang admission half of it would start, so the project's queue is offered
    assert ("Right now the cluster's nodes have room for 2 of its 4 Workers (1 CPU, 2Gi, "
            "4 GPUs each): other jobs hold the rest.") in after
    assert "Queue it in team-cv-queue: Kueue starts the whole job at once" in after


def test_a_fix_on_the_review_page_returns_to_the_review(alice):
    key = _draft_asking_for(alice, workers=5, gpus=4, namespace=CV)
    page = alice.get(step_url(key, "review")).content.decode()
    assert_valid(page)
    labels = re.findall(r'name="fix" value="(\d+)"[^>]*>([^<]+)</button>', page)
    index = next(i for i, label in labels if label == "Reduce GPUs per worker to 3")
    r = alice.post(reverse("training-job-new-fix", args=[key]), {"fix": index, "next": "review"})
    assert r["Location"] == step_url(key, "review") + "#resource-check"
    assert draft(key).data["gpus_per_worker"] == "3"


def test_a_stale_fix_is_refused_politely(alice):
    key = _draft_asking_for(alice, workers=1, gpus=0, namespace="team-cv")
    r = alice.post(reverse("training-job-new-fix", args=[key]), {"fix": "7"})
    assert r.status_code == 302
    assert "no longer applies" in alice.get(r["Location"]).content.decode()


def test_the_check_endpoint_answers_htmx_with_the_check_only(alice):
    key = _draft_asking_for(alice, workers=1, gpus=0, namespace="team-cv")
    url = step_url(key, "resources")
    values = form_values(alice.get(url).content.decode(), url)
    r = alice.post(reverse("training-job-new-check", args=[key]),
                   {**values, "workers": "5", "cpu_per_worker": "2"}, HTTP_HX_REQUEST="true")
    body = r.content.decode()
    assert body.lstrip().startswith('<section id="resource-check"')
    assert "5 workers x 2 CPUs = 10 CPUs" in _text(body)
    assert draft(key).data["workers"] == "5"  # what the form holds is kept


def test_a_worker_no_node_can_hold_is_called_out(alice):
    key = _draft_asking_for(alice, workers=1, gpus=12, namespace="team-cv")
    text = _text(alice.get(step_url(key, "resources")).content.decode())
    assert "Error:" in text and "node" in text


def test_a_node_affinity_no_node_meets_is_named_and_its_fix_removes_it(alice):
    key = _draft_asking_for(alice, workers=1, gpus=1, namespace=CV)
    url = step_url(key, "resources")
    post_step(alice, key, "resources", action="back",
              node_affinity="nvidia.com/gpu.product In NVIDIA-H200-NOWHERE")
    page = alice.get(url).content.decode()
    text = _text(page)
    assert ("No node meets the node affinity nvidia.com/gpu.product In NVIDIA-H200-NOWHERE: "
            "change or remove the node affinity.") in text
    labels = re.findall(r'name="fix" value="(\d+)"[^>]*>([^<]+)</button>', page)
    index = next(i for i, label in labels if label == "Remove the node affinity")
    r = alice.post(reverse("training-job-new-fix", args=[key]),
                   {**form_values(page, url), "fix": index})
    assert r.status_code == 302
    assert draft(key).data["node_affinity"] == ""
    assert "No node meets the node affinity" not in _text(alice.get(url).content.decode())


def test_gpu_type_and_volumes_come_from_the_cluster(alice, gpu_default):
    key = _draft_asking_for(alice, workers=2, gpus=1)
    url = step_url(key, "resources")
    alice.post(url, {**form_values(alice.get(url).content.decode(), url), "add_volumes": "1"})
    page = alice.get(url).content.decode()
    assert '<option value="datasets">datasets</option>' in page
    assert '<option value="checkpoints">checkpoints</option>' in page
    assert '<details class="dash-advanced" id="advanced" open>' in page
    r = post_step(alice, key, "resources", gpu_product="NVIDIA-A100-SXM4-80GB",
                  **{"volume-0-claim_name": "datasets", "volume-0-mount_path": "/data",
                     "volume-0-read_only": "1"}, priority_class="training-high",
                  tolerations="nvidia.com/gpu:NoSchedule", labels="team=nlp")
    assert r.status_code == 302, r.content.decode()[:2000]
    review = alice.get(step_url(key, "review")).content.decode()
    assert "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB" in review
    assert "claimName: datasets" in review and "mountPath: /data" in review
    assert "priorityClassName: training-high" in review
    assert "effect: NoSchedule" in review


def test_a_missing_volume_claim_is_named(alice):
    key = _draft_asking_for(alice, workers=1, gpus=0, namespace="team-cv")
    url = step_url(key, "resources")
    alice.post(url, {**form_values(alice.get(url).content.decode(), url), "add_volumes": "1"})
    r = post_step(alice, key, "resources", **{"volume-0-claim_name": "",
                                               "volume-0-mount_path": "data"})
    text = _text(r.content.decode())
    assert r.status_code == 200
    assert "Choose the volume claim to mount" in text
    assert 'Mount path "data" is not absolute' in text


def test_a_full_count_quota_says_finished_jobs_fill_it_and_leads_to_them(alice,
                                                                        demo_cluster):
    from kubernetes import client as k8s

    with demo_cluster.api_client("admin") as api:
        core = k8s.CoreV1Api(api)
        quota = core.read_namespaced_resource_quota("team-quota", CV)
        key = "count/mpijobs.kubeflow.org"
        hard, used = quota.spec.hard[key], quota.status.used[key]
        core.patch_namespaced_resource_quota("team-quota", CV, {"spec": {"hard": {key: used}}})
        try:
            key_ = _draft_asking_for(alice, workers=1, gpus=0, namespace=CV)
            page = alice.get(step_url(key_, "resources")).content.decode()
        finally:
            core.patch_namespaced_resource_quota("team-quota", CV,
                                                 {"spec": {"hard": {key: hard}}})
    assert_valid(page)
    text = _text(page)
    assert "finished jobs count" in text
    assert ("The cluster refuses to create it while the quota is full: delete finished jobs "
            "you no longer need first.") in text
    jobs = reverse("training-job-list")
    assert (f'href="{jobs}?project=team-cv&amp;status=Succeeded&amp;sort=created">Succeeded '
            "jobs in team-cv, oldest first</a>") in page
    assert "Failed jobs in team-cv, oldest first" in text
    # a queued job is a job object too: Kueue cannot help with a count (team-cv has a queue)
    assert "Queue it in" not in text


@pytest.fixture
def odd_amounts_in_use(demo_cluster):
    """A pod in team-cv asking 300m CPU and 1000Mi, so that the quota's use is no round
    figure (as an outside tester saw it: "1088256Mi/1.5Ti" and "139.3")."""
    from kubernetes import client as k8s

    with demo_cluster.api_client("admin") as api:
        core = k8s.CoreV1Api(api)
        before = core.read_namespaced_resource_quota("team-quota", CV).status.used
        amounts = {"cpu": "300m", "memory": "1000Mi"}
        core.create_namespaced_pod(CV, {
            "metadata": {"name": "odd-amounts"},
            "spec": {"containers": [{"name": "c", "image": "quay.io/a/b:1",
                                     "resources": {"requests": amounts, "limits": amounts}}]}})
        try:
            yield wait_until(lambda: (used := core.read_namespaced_resource_quota(
                "team-quota", CV).status.used)["requests.memory"] != before["requests.memory"]
                and used, message="team-cv's quota counting the pod")
        finally:
            core.delete_namespaced_pod("odd-amounts", CV, grace_period_seconds=0)


def _cells(page: str, title: str) -> dict[str, str]:
    """The quota table's row of `title`: {column label: text}."""
    row = re.search(rf'<tr class="pf-v6-c-table__tr[^"]*">\s*<th scope="row"[^>]*>(?:(?!</tr>).)*?'
                    rf"{re.escape(title)}(?:(?!</tr>).)*</tr>", page, re.S)
    assert row, f"no {title} row"
    cells = re.findall(r'<t[dh] [^>]*data-label="([^"]+)"[^>]*>(.*?)</t[dh]>', row.group(0),
                       re.S)
    return {label: _text(body).strip() for label, body in cells}


def test_quota_amounts_are_short_and_carry_their_units(alice, odd_amounts_in_use):
    used = odd_amounts_in_use
    memory_used = parse_quantity(used["requests.memory"])
    assert format_memory(memory_used).endswith("Mi")  # the case the tester saw
    key = _draft_asking_for(alice, workers=2, gpus=1, namespace=CV)
    post_step(alice, key, "resources", action="back", cpu_per_worker="10",
              memory_per_worker="400Gi")
    page = alice.get(step_url(key, "resources")).content.decode()
    assert_valid(page)
    memory = _cells(page, "Memory")
    shown = display_memory(memory_used)
    assert re.fullmatch(r"1\.\d\dTi", shown), shown
    assert memory["In use"] == shown
    assert memory["Quota"] == "1.5Ti (team-quota)"
    assert re.fullmatch(r"\d+Gi", memory["Available"]), memory  # rounded down, whole Gi
    assert f"({shown}/1.5Ti in use)" in _text(page)
    assert "Mi" not in _text(page.split('id="resource-check"', 1)[1])
    cpu = _cells(page, "CPUs")
    assert cpu["In use"] == cpus(parse_quantity(used["requests.cpu"]))
    assert re.fullmatch(r"\d+\.3 CPUs", cpu["In use"]), cpu
    assert cpu["This job"] == "21 CPUs" and cpu["Quota"] == "192 CPUs (team-quota)"
    assert _cells(page, "GPUs")["This job"] == "2 GPUs"


def test_a_line_that_only_lacks_room_now_is_not_called_over_quota(alice):
    # team-cv: 38 of its 192 CPUs are free, so 2 x 40 CPUs wait; 4 x 60 never fit
    key = _draft_asking_for(alice, workers=2, gpus=1, namespace=CV)
    post_step(alice, key, "resources", action="back", cpu_per_worker="40")
    text = _text(alice.get(step_url(key, "resources")).content.decode())
    assert "CPUs (not enough left now)" in text
    assert "(over quota)" not in text
    post_step(alice, key, "resources", action="back", workers="4", cpu_per_worker="60")
    text = _text(alice.get(step_url(key, "resources")).content.decode())
    assert "CPUs (over quota)" in text
    assert "This job can never fit the team-cv quota of 192 CPUs" in text

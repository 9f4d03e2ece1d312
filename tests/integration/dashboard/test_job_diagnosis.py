"""The diagnosis on the dashboard (training/diagnoses/) for the demo's failed and waiting
jobs: the Overview's card, the list row's line, the card and line on their own, the fix a
clone applies, Retry's warning, dismissing a hint."""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

import pytest
from django.core.cache import cache
from django.urls import reverse

from tests.html_checks import assert_valid
from tests.page_text import text_of

GPT2 = ("team-nlp", "mpijob", "gpt2-finetune")
VIT = ("team-cv", "mpijob", "vit-huge-pretrain")
OOM_HEADLINE = "Worker 2 ran out of memory and was killed (exit code 137)"


@pytest.fixture(autouse=True)
def _prometheus(demo_cluster, settings):
    settings.PROMETHEUS_URL = demo_cluster.prometheus_url
    cache.clear()
    yield
    cache.clear()


def _text(body: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def _overview(client, job):
    response = client.get(reverse("training-job-detail", args=job))
    assert response.status_code == 200
    body = response.content.decode()
    assert_valid(body)
    return body


def _fix_links(body: str) -> list[str]:
    return [html.unescape(u) for u in re.findall(r'href="([^"]*fix=[^"]*)"', body)]


def test_the_oom_job_leads_with_the_worker_not_the_backoff_limit(alice):
    body = _overview(alice, GPT2)
    card = " ".join(text_of(body, "job-diagnosis").split())
    assert OOM_HEADLINE in card
    assert "Your configuration" in card
    assert "Affected: Worker 2" in card
    assert "limit 48Gi" in card
    # the peak from Prometheus (simcluster's working set climbs to the limit first)
    assert re.search(r"Peak memory use [\d.]+Gi, (9\d|100)% of its limit", card), card
    # the operator's generic reason is evidence, not the headline
    assert "BackoffLimitExceeded" in card and "consequence" in card
    assert "Clone with this fix" in card
    # and a way to the memory chart itself
    assert re.search(r'<a href="[^"]*\?tab=metrics#chart-memory-title">See Worker 2&#x27;s memory '
                     r"over the run on the Metrics tab</a>", body)


def test_the_oom_fix_opens_the_wizard_with_more_memory_applied_and_marked(alice):
    body = _overview(alice, GPT2)
    link = next(u for u in _fix_links(body) if "fix=" in u)
    response = alice.get(link)
    assert response.status_code == 302
    step = alice.get(response["Location"])
    page = step.content.decode()
    assert_valid(page)
    assert "/resources/" in urlsplit(response["Location"]).path
    assert re.search(r'name="memory_per_worker"[^>]*value="64Gi"', page)
    assert "Changed by the suggested fix (Clone with 64Gi of memory per Worker (now 48Gi))" \
        in _text(page)
    assert "fix applied" in _text(page)


def test_a_tampered_fix_link_is_a_plain_clone(alice):
    body = _overview(alice, GPT2)
    link = _fix_links(body)[0]
    response = alice.get(link[:-3] + "xyz")
    step = alice.get(response["Location"])
    page = _text(step.content.decode())
    assert "could not be applied" in page
    assert "Changed by the suggested fix" not in page


def test_a_limit_range_refusal_offers_more_workers_first_and_says_what_a_cut_costs(alice):
    """vit-l-cpu-heavy: 2 Workers x 96 CPUs (1 GPU each) where team-cv's LimitRange allows
    a container 64 CPUs and its quota 192 CPUs in all."""
    body = _overview(alice, ("team-cv", "mpijob", "vit-l-cpu-heavy"))
    card = " ".join(text_of(body, "job-diagnosis").split())
    keep = ("Clone with this change: Use 63 CPUs per worker and 3 workers (in all: 3 GPUs "
            "instead of 2 GPUs, 189 CPUs instead of 192 CPUs)")
    cut = ("Clone with this change: Reduce CPUs per worker to 64 (in all: 128 CPUs instead "
           "of 192 CPUs)")
    assert keep in card and cut in card and card.index(keep) < card.index(cut)
    assert "Reduce CPUs per worker to 18" not in card
    # 38 of team-cv's CPUs are free now: the copy would wait, and the card says so
    assert "The project's quota has no room for the copy right now" in card
    # the clone the first fix makes is one the LimitRange and the quota accept
    link = next(u for u in _fix_links(body) if "fix=" in u)
    location = alice.get(link)["Location"]
    step = alice.get(location)
    page = _text(step.content.decode())
    assert re.search(r'name="cpu_per_worker"[^>]*value="63"', step.content.decode())
    assert re.search(r'name="workers"[^>]*value="3"', step.content.decode())
    assert "LimitRange" not in page and "can never" not in page
    configuration = alice.get(location.replace("/resources/", "/configuration/"))
    assert "horovodrun -np 3 python /workspace/train_vit.py" in _text(
        configuration.content.decode())  # -np follows the Workers


def test_the_list_row_says_the_same_as_the_page(alice):
    response = alice.get(reverse("training-job-list"), {"project": "team-nlp"})
    body = response.content.decode()
    assert_valid(body)
    row = " ".join(text_of(body, "job-row-team-nlp-mpijob-gpt2-finetune").split())
    assert OOM_HEADLINE in row


def test_the_card_and_the_line_on_their_own(alice):
    url = reverse("training-job-diagnosis", args=GPT2)
    card = alice.get(url)
    assert card.status_code == 200
    assert OOM_HEADLINE in _text(card.content.decode())
    assert 'id="job-diagnosis"' in card.content.decode()
    line = alice.get(url, {"part": "line"}).content.decode()
    assert OOM_HEADLINE in _text(line)
    assert 'id="row-diagnosis-team-nlp-mpijob-gpt2-finetune-' in line


def test_a_job_that_can_never_start_says_so_with_a_fix_that_fits(alice):
    body = _overview(alice, VIT)
    card = " ".join(text_of(body, "job-diagnosis").split())
    assert ("This job can never start: each Worker asks for 12 GPUs and no node has that "
            "many") in card
    assert "The largest node offers 8 GPUs" in card  # the nodes' sizes are evidence
    assert "Clone with 3 Workers x 8 GPUs" in card


def test_retry_of_the_oom_job_warns_and_offers_the_fix(alice):
    response = alice.get(reverse("training-job-retry", args=GPT2))
    page = response.content.decode()
    assert_valid(page)
    text = _text(page)
    assert f"This job failed because: {OOM_HEADLINE}" in text
    assert "a retry with the same configuration will most likely fail the same way" in text
    assert "Retry anyway" in text
    assert _fix_links(page)


def test_bob_cannot_read_team_nlp_diagnoses(bob):
    response = bob.get(reverse("training-job-diagnosis", args=GPT2))
    assert response.status_code == 403


# Every troubled demo job: its card (headline, class, evidence, something to do) and the
# list row saying the same headline.
DEMO = [
    ("team-nlp", "gpt2-finetune", r"^Worker 2 ran out of memory and was killed",
     "Your configuration"),
    ("team-nlp", "llama2-7b-sft", r"^Worker 1 ran out of GPU memory \(CUDA out of memory\)$",
     "Your configuration"),
    ("team-nlp", "roberta-squad", r"“pyhton” was not found \(exit code 127\)$",
     "Your configuration"),
    ("team-cv", "vit-huge-pretrain", r"^This job can never start", "Your configuration"),
    ("team-cv", "vit-l-cpu-heavy", r"^The project's LimitRange refuses the Workers: at most 64 "
     r"CPUs per container, each asks for 96 CPUs$", "Your configuration"),
    ("team-nlp", "bert-qa-squad", r"^The volume claim “squad-data” does not exist in team-nlp$",
     "Your configuration"),
    ("team-nlp", "t5-wandb-logging", r"^The Secret “wandb-credentials” that .* needs does not "
     r"exist in team-nlp$", "Your configuration"),
    ("team-cv", "detr-coco-train", r"cannot be pulled: the registry refused access",
     "Your configuration"),
    ("team-cv", "clip-mesh-finetune",
     r"^The Launcher's SSH connection to (Worker 0|its Workers) was reset$",
     "Your configuration"),
    ("team-cv", "custom-op-bench", r"crashed with a segmentation fault \(exit code 139\)$",
     "Your code"),
    ("team-nlp", "gpt-neox-hang", r"^Possible hang: no new log line for .* and the GPUs are "
     r"idle$", "Your code"),
    ("team-cv", "t5-base-restart", r"^Worker 1 crashed and restarted", "Your code"),
    ("team-cv", "sd-finetune", r"^GPU utilization is 2\d% over the last 10m 0s$", "Your code"),
    ("team-cv", "efficientnet-b7", r"^Worker 1's node \S+ stopped responding$", "The platform"),
    ("team-nlp", "llama-13b-pretrain", r"^Waiting for quota: the project uses 984Gi of its "
     r"1.5Ti memory and this job needs 1400Gi more$", "Capacity"),
]


@pytest.mark.parametrize(("project", "name", "headline", "culprit"), DEMO,
                         ids=[case[1] for case in DEMO])
def test_each_troubled_demo_job_is_diagnosed_alike_on_its_page_and_in_the_list(
        alice, project, name, headline, culprit):
    card_html = alice.get(reverse("training-job-diagnosis", args=[project, "mpijob", name]))
    assert card_html.status_code == 200
    body = card_html.content.decode()
    title = " ".join(text_of(body, "job-diagnosis-title").split())
    title = re.sub(r"^(Error|Warning|Hint): ", "", title)
    assert re.search(headline, title), title
    card = _text(body)
    assert culprit in card
    assert "What to do" in card and "Evidence and details" in card
    assert re.search(r'<li class="dash-diagnosis__suggestion[^"]*">\s*(<a|<span|<form)', body) \
        or "dash-command" in body
    if title.startswith("GPU utilization"):
        return  # a hint on a healthy job: the list shows problems only
    listing = alice.get(reverse("training-job-list"), {"project": project}).content.decode()
    row = " ".join(text_of(listing, f"job-row-{project}-mpijob-{name}").split())

    def words(text: str) -> str:  # a hang's silence grows between the two reads
        return re.sub(r"\d+m \d+s", "…", text)
    assert words(title) in words(row), (title, row)


def test_a_fix_link_works_only_for_its_job_and_its_person(alice, demo_cluster):
    from django.test import Client

    from tests.dashboard_support import sign_in

    link = _fix_links(_overview(alice, GPT2))[0]
    other_job = link.replace("gpt2-finetune", "bert-large-pretrain", 1)
    assert "clone=team-nlp%2Fmpijob%2Fbert-large-pretrain" in other_job
    page = _text(alice.get(alice.get(other_job)["Location"]).content.decode())
    assert "could not be applied" in page and "Changed by the suggested fix" not in page
    # the same link followed by someone else (who may clone the job) applies nothing either
    admin = Client()
    sign_in(admin, demo_cluster, "admin")
    page = _text(admin.get(admin.get(link)["Location"]).content.decode())
    assert "could not be applied" in page and "Changed by the suggested fix" not in page


def test_retry_of_a_running_job_with_a_hint_warns_of_nothing(alice):
    page = _text(alice.get(reverse("training-job-retry", args=["team-cv", "mpijob",
                                                               "sd-finetune"])).content.decode())
    assert "This job failed because" not in page
    assert "Retry job" in page


def test_an_invalid_job_reads_the_same_in_the_list_as_on_its_page(alice, demo_cluster):
    from tests.wizard_cluster import ClusterJobs

    manifest = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                "metadata": {"name": "9lives", "namespace": "team-nlp"},
                "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                        {"name": "launcher", "image": "busybox", "command": ["mpirun", "x"],
                         "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}},
                    "Worker": {"replicas": 1, "template": {"spec": {"containers": [
                        {"name": "worker", "image": "busybox",
                         "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}}}}}
    with demo_cluster.api_client("admin") as api:
        jobs = ClusterJobs(api)
        jobs.custom.create_namespaced_custom_object("kubeflow.org", "v2beta1", "team-nlp",
                                                    "mpijobs", manifest)
        jobs.track("team-nlp", "9lives")
        try:
            from tests.waiting import wait_until

            job = ("team-nlp", "mpijob", "9lives")
            wait_until(lambda: "refused the job" in _text(alice.get(
                reverse("training-job-diagnosis", args=job)).content.decode()), 20,
                message="the operator's ValidationError")
            card = _text(alice.get(reverse("training-job-diagnosis", args=job)).content.decode())
            headline = re.search(r"The MPI Operator refused the job: [^.]*", card).group(0)
            cache.clear()
            listing = alice.get(reverse("training-job-list"), {"project": "team-nlp"})
            row = " ".join(text_of(listing.content.decode(), "job-row-team-nlp-mpijob-9lives")
                           .split())
            assert headline in row, (headline, row)
        finally:
            jobs.cleanup()


def test_a_pushed_row_keeps_the_line_the_page_drew_for_the_same_state(alice):
    """The hub's row (from the objects alone) carries a cell with the page's cell's id and
    hx-preserve while the job is in the same state, so the viewer's own line stays."""
    from datetime import UTC, datetime

    from odh.training.kinds import MPIJOB
    from odh.training.status.queries import job_detail
    from tests.dashboard_support import session_token
    from training import diagnoses
    from training.cluster import client_for_token
    from training.live import pushes as live
    page = alice.get(reverse("training-job-list"), {"project": "team-nlp"}).content.decode()
    drawn = re.search(r'id="(row-diagnosis-team-nlp-mpijob-gpt2-finetune-[^"]+)"', page).group(1)
    with client_for_token(session_token(alice)) as client:
        detail = job_detail(client, MPIJOB, *GPT2[::2])
    seen = diagnoses.object_diagnosis(detail.job, detail.pods, detail.events, detail.summary)
    row = live.render_list_row(detail.summary, datetime.now(UTC), seen)
    assert f'id="{drawn}" hx-preserve="true"' in row


def test_a_job_whose_node_was_lost_offers_retry_in_its_card(alice):
    body = _overview(alice, ("team-cv", "mpijob", "efficientnet-b7"))
    card = text_of(body, "job-diagnosis")
    retry = reverse("training-job-retry", args=["team-cv", "mpijob", "efficientnet-b7"])
    assert re.search(rf'<a class="pf-v6-c-button[^"]*" href="{re.escape(retry)}"'
                     r'[^>]*>\s*<i[^>]*></i> Retry</a>', body)
    assert "Retry the job: the node failed, not the job." in " ".join(card.split())
    # the button leads to the retry page, which runs the same job again
    assert alice.get(retry).status_code == 200


T5 = ("team-nlp", "mpijob", "t5-wandb-logging")


@pytest.fixture
def wandb_secret(demo_cluster):
    """A Secret in team-nlp with the key t5-wandb-logging reads from its missing one."""
    from kubernetes import client as k8s

    with demo_cluster.api_client("admin") as api:
        core = k8s.CoreV1Api(api)
        core.create_namespaced_secret("team-nlp", {
            "metadata": {"name": "wandb-api"},
            "stringData": {"api-key": "not-shown-anywhere", "host": "wandb.example"}})
        yield
        core.delete_namespaced_secret("wandb-api", "team-nlp")


def test_a_missing_secret_is_fixed_by_a_clone_using_one_that_has_its_key(alice,
                                                                         wandb_secret):
    body = _overview(alice, T5)
    card = " ".join(text_of(body, "job-diagnosis").split())
    assert "Clone using the Secret “wandb-api”, which has the key api-key" in card
    assert "Or create it, and the pods start by themselves:" in card
    assert "not-shown-anywhere" not in body  # keys' names only, never a value
    link = _fix_links(body)[0]
    step = alice.get(alice.get(link)["Location"]).content.decode()
    assert_valid(step)
    assert "fix applied" in _text(step)
    assert "wandb-api" in step and "wandb-credentials" not in step


def test_without_a_secret_that_has_the_key_it_says_to_create_one(alice):
    card = " ".join(text_of(_overview(alice, T5), "job-diagnosis").split())
    assert "Clone using the Secret" not in card
    assert "Create it, and the pods start by themselves:" in card


DETR = ("team-cv", "mpijob", "detr-coco-train")


@pytest.fixture
def cv_pull_secret(demo_cluster):
    """A pull secret in team-cv (the registry detr-coco-train's image is in refuses it
    without one)."""
    import base64
    import json

    from kubernetes import client as k8s

    auth = {"auths": {"quay.io": {"auth": base64.b64encode(b"robot:token").decode()}}}
    with demo_cluster.api_client("admin") as api:
        core = k8s.CoreV1Api(api)
        core.create_namespaced_secret("team-cv", {
            "metadata": {"name": "quay-cv-robot"}, "type": "kubernetes.io/dockerconfigjson",
            "stringData": {".dockerconfigjson": json.dumps(auth)}})
        yield
        core.delete_namespaced_secret("quay-cv-robot", "team-cv")


def _describe_and_run_the_fix(cluster, ref: tuple[str, str, str], fix: str) -> tuple[str, dict]:
    """`odh training describe` as alice, the command it gives for the fix `fix` run as a
    shell runs it, and the job that command created (deleted afterwards)."""
    import io
    import os
    import subprocess
    import sys
    from pathlib import Path

    from kubernetes import client as k8s

    from odh.training.cli import main as odh_training

    namespace, kind, name = ref
    kubeconfig = str(cluster.kubeconfig("alice"))
    out = io.StringIO()
    assert odh_training(["describe", kind, name, "-n", namespace, "--kubeconfig", kubeconfig],
                        out=out) == 0
    line = next(line for line in out.getvalue().splitlines() if fix in line)
    command = line.split("  $ ", 1)[1]
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, KUBECONFIG=kubeconfig, PATH=f"{bin_dir}:{os.environ['PATH']}")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], env=env,
                          capture_output=True, text=True, timeout=120)
    with cluster.api_client("admin") as api:
        custom = k8s.CustomObjectsApi(api)
        try:
            assert done.returncode == 0, done.stderr
            return command, custom.get_namespaced_custom_object(
                "kubeflow.org", "v2beta1", namespace, "mpijobs", f"{name}-fix")
        finally:
            if done.returncode == 0:
                custom.delete_namespaced_custom_object("kubeflow.org", "v2beta1", namespace,
                                                       "mpijobs", f"{name}-fix")


def test_the_command_line_gives_the_pull_secret_fix_as_a_command(demo_cluster, cv_pull_secret):
    command, made = _describe_and_run_the_fix(demo_cluster, DETR,
                                              "Clone using the pull secret “quay-cv-robot”")
    assert command == ("odh training get mpijob detr-coco-train -n team-cv -o yaml | odh "
                       "training create mpijob detr-coco-train-fix -n team-cv -f - "
                       "--image-pull-secret quay-cv-robot")
    for role in ("Launcher", "Worker"):
        pod = made["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        assert pod["imagePullSecrets"] == [{"name": "quay-cv-robot"}]


def test_the_command_line_gives_the_secret_fix_as_a_command(demo_cluster, wandb_secret):
    command, made = _describe_and_run_the_fix(demo_cluster, T5,
                                              "Clone using the Secret “wandb-api”")
    assert "--env-secret WANDB_API_KEY=wandb-api:api-key" in command
    env = made["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "WANDB_API_KEY", "valueFrom": {"secretKeyRef": {
        "name": "wandb-api", "key": "api-key"}}} in env
    assert "wandb-credentials" not in str(made["spec"])


def test_the_sdk_applies_the_fixes_of_a_diagnosis(demo_cluster, cv_pull_secret):
    from odh.training import MPIJob
    from odh.training.sdk import TrainingClient

    with TrainingClient(kubeconfig=str(demo_cluster.kubeconfig("alice"))) as client:
        job = MPIJob.get("detr-coco-train", "team-cv", client=client)
        fix = next(f for f in job.diagnose().fixes if "quay-cv-robot" in f.label)
        fixed = job.with_fix(fix)
        assert fixed.name == "detr-coco-train-fix" and job.name == "detr-coco-train"
        fixed.create()
        try:
            made = client.get_job("detr-coco-train-fix", "team-cv")
            pod = made["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
            assert pod["imagePullSecrets"] == [{"name": "quay-cv-robot"}]
        finally:
            fixed.delete()


def test_an_image_the_registry_refuses_is_fixed_by_a_clone_with_a_pull_secret(
        alice, cv_pull_secret):
    body = _overview(alice, DETR)
    card = " ".join(text_of(body, "job-diagnosis").split())
    assert "Image pull secrets in team-cv: quay-cv-robot" in card
    assert "Clone using the pull secret “quay-cv-robot”" in card
    link = _fix_links(body)[0]
    step_url = alice.get(link)["Location"]
    step = alice.get(step_url).content.decode()
    assert_valid(step)
    # the project's pull secrets are listed for alice: the fix's one is chosen
    assert re.search(r'<option value="quay-cv-robot" selected>quay-cv-robot</option>', step)
    assert "Changed by the suggested fix (Clone using the pull secret “quay-cv-robot”)" \
        in _text(step)
    # the review's manifest pulls with it, in the Launcher's and the Workers' pods
    review = alice.get(step_url.replace("/configuration/", "/review/")).content.decode()
    assert html.unescape(review).count("imagePullSecrets:") == 2

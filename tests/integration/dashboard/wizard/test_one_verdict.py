"""One verdict for a create (issue 21, item 4), from the same code for the wizard, the CLI
and the SDK, on a small cluster of its own:

- a job that fits the quota but not the nodes' free room now: the CLI and the wizard say
  the same where the person may list the nodes (admin), and where they may not (alice) the
  CLI and SDK say free node capacity was not checked, never that it fits; the project's
  Kueue queue is the first offer for a job that waits;
- a full quota on the number of MPIJobs: the oldest finished jobs the person may delete
  are offered (the wizard deletes them behind a confirmation, audited, the draft kept; the
  CLI names them with the commands), and someone who may delete none is told so."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.cache import cache
from django.urls import reverse

from odh.training import creating, errors
from odh.training.jobs import MPIJob
from odh.training.sdk import TrainingClient
from tests import simcluster_process
from tests.integration.dashboard.wizard.wizard_flow import (
    create,
    post_step,
    start,
    step_url,
    unique,
)
from training.models import AuditEvent, WizardDraft

IMAGE = "quay.io/opendatahub/horovod:0.28.1-pytorch2.1"
BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[4]
QUEUE = "team-q-queue"
# the room a Worker of 1 GPU finds now: 1 of the node's 2 GPUs is held by a running job
NOT_NOW = "Right now the cluster's nodes have room for 1 of its 2 Workers"
QUEUE_FIX = f"Queue it in {QUEUE}: Kueue starts the whole job at once"


def _job(name: str, namespace: str, ago: str, gpus: int = 0, failure: str = "",
         run_seconds: str = "30") -> dict:
    annotations = {"simcluster.io/run-seconds": run_seconds}
    if failure:
        annotations.update({"simcluster.io/failure": failure,
                            "simcluster.io/failure-after-seconds": "5"})
    limits = {"cpu": "1", "memory": "2Gi", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    container = {"image": IMAGE, "resources": {"limits": limits}}
    return {"ago": ago, "as": "alice", "manifest": {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "spec": {"runPolicy": {"backoffLimit": 0}, "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                {**container, "name": "launcher", "command": ["mpirun", "python", "t.py"],
                 "resources": {"limits": {"cpu": "1", "memory": "2Gi"}}}]}}},
            "Worker": {"replicas": 1, "template": {"spec": {"containers": [
                {**container, "name": "worker"}]}}}}}}}


def scenario() -> dict:
    """Two projects on one 2-GPU node (and a CPU node): team-q has a Kueue queue, an 8-GPU
    quota and a running job holding one GPU; team-room (and team-full) may hold 3 MPIJobs
    and hold 3 finished ones. dave may create and list MPIJobs in team-full, not delete
    them. The dashboard's account and roles are demo.yaml's."""
    demo = yaml.safe_load((ROOT / "simcluster" / "scenarios" / "demo.yaml").read_text())
    rbac = [o for o in demo["objects"] if str(o.get("apiVersion", "")).startswith("rbac.")]
    count_quota = [{"apiVersion": "v1", "kind": "ResourceQuota",
                    "metadata": {"name": "job-count", "namespace": ns},
                    "spec": {"hard": {"count/mpijobs.kubeflow.org": "3"}}}
                   for ns in ("team-room", "team-full")]
    creator = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "mpijob-creator"},
               "rules": [{"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"],
                          "verbs": ["get", "list", "watch", "create"]},
                         {"apiGroups": [""], "resources": ["resourcequotas", "limitranges"],
                          "verbs": ["get", "list"]}]}
    kueue = [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
         "metadata": {"name": "default-flavor"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
         "metadata": {"name": "team-q"}, "spec": {"namespaceSelector": {}, "resourceGroups": [
             {"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [
                 {"name": "default-flavor", "resources": [
                     {"name": "cpu", "nominalQuota": "32"},
                     {"name": "memory", "nominalQuota": "256Gi"},
                     {"name": "nvidia.com/gpu", "nominalQuota": "2"}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
         "metadata": {"name": QUEUE, "namespace": "team-q"}, "spec": {"clusterQueue": "team-q"}},
    ]
    finished = [job for ns in ("team-room", "team-full") for job in (
        _job("old-a", ns, "3d"), _job("old-b", ns, "2d", failure="exit-code"),
        _job("old-c", ns, "1d"))]
    return {
        "name": "one-verdict", "description": "issue 21 item 4", "apis": ["kueue"],
        "users": [u for u in demo["users"] if u["name"] in ("alice", "admin")]
        + [{"name": "dave", "password": "dave", "groups": []}],
        "namespaces": ["team-q", "team-room", "team-full"],
        "nodes": [{"name": "gpu-0", "cpu": 32, "memory": "256Gi", "gpus": 2},
                  {"name": "cpu-0", "cpu": 16, "memory": "64Gi"}],
        "access": [{"user": "alice", "role": "edit",
                    "namespaces": ["team-q", "team-room", "team-full"]},
                   {"user": "dave", "role": "mpijob-creator", "namespaces": ["team-full"]},
                   {"user": "admin", "clusterRole": "cluster-admin"}],
        "serviceAccounts": demo["serviceAccounts"], "oauth": demo["oauth"],
        "objects": rbac + [creator] + count_quota + kueue + [
            {"apiVersion": "v1", "kind": "ResourceQuota",
             "metadata": {"name": "gpus", "namespace": "team-q"},
             "spec": {"hard": {"requests.nvidia.com/gpu": "8"}}}],
        "jobs": finished + [_job("holds-a-gpu", "team-q", "10m", gpus=1,
                                 run_seconds="10000000")],
    }


@pytest.fixture(scope="module")
def demo_cluster(tmp_path_factory):
    """This module's cluster, in place of the demo (the dashboard and sign-in use it)."""
    cluster = simcluster_process.start_scenario(tmp_path_factory.mktemp("one-verdict"),
                                                scenario(), speed=20, name="one-verdict.yaml")
    yield cluster
    cluster.stop()


@pytest.fixture(autouse=True)
def _fresh_nodes():
    """The wizard shares the nodes and their room a few seconds: this cluster's, here."""
    cache.clear()
    yield
    cache.clear()


def _cli(kubeconfig: Path, *words: str) -> subprocess.CompletedProcess:
    """`odh training ...` with this checkout's code."""
    env = dict(os.environ, KUBECONFIG=str(kubeconfig), PYTHONPATH=str(ROOT),
               PATH=f"{BIN}:{os.environ.get('PATH', '')}")
    return subprocess.run([str(BIN / "odh"), "training", *words], env=env,
                          capture_output=True, text=True, timeout=120)


def _create_words(name: str, project: str, workers: int, *more: str) -> list[str]:
    return ["create", "mpijob", name, "-n", project, "--image", IMAGE, "--workers",
            str(workers), "--gpu-per-worker", "1", "--cpu-per-worker", "1",
            "--memory-per-worker", "2Gi", "--launcher-cpu", "1", "--launcher-memory", "2Gi",
            "--command", f"horovodrun -np {workers} python train.py", *more]


def _gang(name: str, sdk: TrainingClient) -> MPIJob:
    """2 Workers x 1 GPU in team-q, as `_create_words` gives it to the CLI."""
    return MPIJob(name=name, namespace="team-q", workers=2, image=IMAGE,
                  command=["horovodrun", "-np", "2", "python", "train.py"],
                  worker_resources={"cpu": "1", "memory": "2Gi", "gpus": 1},
                  launcher_resources={"cpu": "1", "memory": "2Gi"}, client=sdk)


def _wizard_resources(client, name: str, project: str, workers: int) -> str:
    key = start(client)
    page = post_step(client, key, "configuration", namespace=project, name=name, image=IMAGE,
                     command=f"horovodrun -np {workers} python train.py")
    assert page.status_code == 302, page.content.decode()[:3000]
    post_step(client, key, "resources", workers=str(workers),
                     gpus_per_worker="1", cpu_per_worker="1", memory_per_worker="2Gi",
                     launcher_cpu="1", launcher_memory="2Gi", queue_name="")
    return html.unescape(client.get(step_url(key, "resources")).content.decode())


def _text(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_where_the_person_may_list_nodes_the_cli_says_what_the_wizard_says(admin,
                                                                          demo_cluster):
    name = unique("gang")
    reference = None
    with TrainingClient(kubeconfig=str(demo_cluster.kubeconfig("admin"))) as sdk:
        job = _gang(name, sdk)
        reference = job.check()
    fit = reference.fit
    assert fit.room_checked and not fit.fits and not fit.never_fits
    assert any(p.startswith(NOT_NOW) for p in fit.problems), fit.problems
    assert fit.fixes[0].label == QUEUE_FIX  # the queue first
    assert reference.verdict == "The job does not fit right now."

    cli = _cli(demo_cluster.kubeconfig("admin"), *_create_words(name, "team-q", 2),
               "--dry-run")
    assert cli.returncode == 0, cli.stderr
    fixes = [line for line in cli.stderr.splitlines() if line.startswith("  fix:")]
    assert fixes[0] == f"  fix: --queue {QUEUE} ({QUEUE_FIX})", cli.stderr
    assert "free node capacity was not checked" not in cli.stdout + cli.stderr
    assert "The job does not fit right now." in cli.stdout

    wizard = _text(_wizard_resources(admin, name, "team-q", 2))
    assert "The job does not fit right now." in wizard
    # the same problems, the same note and the same fixes, in the same order
    for said in fit.problems + [fit.waiting_note]:
        assert said in cli.stderr, (said, cli.stderr)
        assert said in wizard, said
    shown = [label for label in re.findall(r'name="fix" value="\d+"[^>]*>([^<]+)</button>',
                                           _wizard_resources(admin, name, "team-q", 2))]
    assert shown == [fix.label for fix in fit.fixes]
    assert [line.split(" (", 1)[1].rstrip(")") for line in fixes] == shown


def test_where_the_person_may_not_list_nodes_fits_is_not_claimed(alice, demo_cluster):
    name = unique("blind")
    with TrainingClient(kubeconfig=str(demo_cluster.kubeconfig("alice"))) as sdk:
        job = _gang(name, sdk)
        checked = job.check()
    assert not checked.nodes_readable and not checked.fit.room_checked
    assert "Fits" not in checked.verdict
    assert "free node capacity was not checked" in checked.verdict
    assert "you may not list the cluster's nodes" in checked.capacity_note

    cli = _cli(demo_cluster.kubeconfig("alice"), *_create_words(name, "team-q", 2),
               "--dry-run")
    assert cli.returncode == 0, cli.stderr
    assert "Fits" not in cli.stdout and "free node capacity was not checked" in cli.stdout
    assert "note: Free node capacity was not checked: you may not list the cluster's nodes" \
        in cli.stderr
    # the wizard (which reads the nodes with its own account) tells her the room now
    assert NOT_NOW in _text(_wizard_resources(alice, name, "team-q", 2))


def test_a_job_that_waits_for_the_quota_is_offered_the_queue_first(alice, demo_cluster):
    """9 GPUs against team-q's 8: it never fits; 2 x 1 GPU after 7 are taken would wait. The
    quota's wait is what alice can see: the queue is offered first by the CLI and SDK."""
    from kubernetes import client as k8s
    with demo_cluster.api_client("admin") as api, \
            TrainingClient(kubeconfig=str(demo_cluster.kubeconfig("alice"))) as sdk:
        core = k8s.CoreV1Api(api)
        # a second quota of 2 GPUs: holds-a-gpu takes 1, so 2 x 1 GPU waits for the other
        core.create_namespaced_resource_quota("team-q", {
            "metadata": {"name": "two-gpus"}, "spec": {"hard": {"requests.nvidia.com/gpu": "2"}}})
        try:
            _wait_used(sdk.cluster, "team-q", "two-gpus")
            name = unique("waits")
            job = _gang(name, sdk)
            checked = job.check()
            assert checked.waits and checked.fit.fixes[0].label == QUEUE_FIX
            cli = _cli(demo_cluster.kubeconfig("alice"), *_create_words(name, "team-q", 2),
                       "--dry-run")
            assert cli.returncode == 0, cli.stderr
            fixes = [line for line in cli.stderr.splitlines() if line.startswith("  fix:")]
            assert fixes[0] == f"  fix: --queue {QUEUE} ({QUEUE_FIX})", cli.stderr
            assert "The job does not fit right now." in cli.stdout
        finally:
            core.delete_namespaced_resource_quota("two-gpus", "team-q")


def _wait_used(cluster, namespace: str, quota: str) -> None:
    """Until the quota controller has written the quota's use (the check reads it)."""
    from tests.waiting import wait_until
    wait_until(lambda: any(q["metadata"]["name"] == quota and (q.get("status") or {}).get(
        "used") for q in cluster.list_quotas(namespace)), 30,
        message="the quota's status to be written")


def test_a_full_count_quota_offers_the_oldest_finished_jobs_to_the_cli(demo_cluster):
    name = unique("counted")
    kubeconfig = demo_cluster.kubeconfig("alice")
    with TrainingClient(kubeconfig=str(kubeconfig)) as sdk:
        job = MPIJob(name=name, namespace="team-full", workers=1, image=IMAGE,
                     command=["horovodrun", "-np", "1", "python", "train.py"], client=sdk)
        with pytest.raises(creating.CreateRefused) as refused:
            creating.check(sdk.cluster, job.spec)
        room = refused.value.room
        assert room is not None and room.makes_room and room.names == ["old-a"]
        assert re.fullmatch(r"Delete the oldest finished job: old-a \(Succeeded \d+d( \d+h)? "
                            r"ago\)", room.label()), room.label()
        with pytest.raises(errors.ResourceQuotaExceeded) as raised:
            job.create()
        assert raised.value.suggestions[0].startswith(
            "Delete the oldest finished job: old-a (Succeeded ")
        assert "MPIJob.get('old-a', 'team-full').delete()" in raised.value.suggestions[0]

    cli = _cli(kubeconfig, "create", "mpijob", name, "-n", "team-full", "--image", IMAGE,
               "--workers", "1", "--command", "horovodrun -np 1 python train.py")
    assert cli.returncode == 2, cli.stderr
    assert re.search(r"\n  fix: Delete the oldest finished job: old-a \(Succeeded [^)]+\)\. "
                     r"Delete it with:\n", cli.stderr), cli.stderr
    assert "    odh training delete mpijob old-a -n team-full --confirm" in cli.stderr
    # the command is the CLI's own: it asks nothing more of a person who passes --confirm
    help_text = _cli(kubeconfig, "delete", "--help").stdout
    assert "--confirm" in help_text

    # dave may create MPIJobs in team-full and not delete them: none is offered
    with TrainingClient(kubeconfig=str(demo_cluster.kubeconfig("dave"))) as sdk:
        spec = MPIJob(name=name, namespace="team-full", workers=1, image=IMAGE,
                      command=["horovodrun", "-np", "1", "python", "train.py"],
                      client=sdk).spec
        with pytest.raises(creating.CreateRefused) as refused:
            creating.check(sdk.cluster, spec)
    assert not refused.value.room.makes_room
    assert refused.value.room.shortfall().startswith(
        "You may not delete any of the finished jobs of team-full")
    cli = _cli(demo_cluster.kubeconfig("dave"), "create", "mpijob", name, "-n", "team-full",
               "--image", IMAGE, "--workers", "1", "--command",
               "horovodrun -np 1 python train.py")
    assert "You may not delete any of the finished jobs of team-full" in cli.stderr
    assert "odh training delete" not in cli.stderr


def test_the_wizard_deletes_the_oldest_finished_job_after_a_confirmation(alice, demo_cluster):
    name = unique("room")
    key = start(alice)
    page = post_step(alice, key, "configuration", namespace="team-room", name=name,
                     image=IMAGE, command="horovodrun -np 1 python train.py")
    assert page.status_code == 302
    post_step(alice, key, "resources", workers="1", cpu_per_worker="3")
    before = WizardDraft.objects.get(key=key).data
    resources = html.unescape(alice.get(step_url(key, "resources")).content.decode())
    offer = re.search(r'id="fit-make-room"><a [^>]*href="([^"]+)">([^<]+)</a>', resources)
    assert offer, _text(resources)
    assert re.fullmatch(r"Delete the oldest finished job: old-a \(Succeeded \d+d( \d+h)? "
                        r"ago\)", offer.group(2))

    # Create refuses it with the same offer
    refused = html.unescape(create(alice, key).content.decode())
    assert re.search(r'id="create-make-room"><a [^>]*>Delete the oldest finished job: old-a ',
                     refused), _text(refused)

    # the confirmation names the job; nothing is deleted before it is confirmed
    confirm = alice.get(offer.group(1))
    assert confirm.status_code == 200
    text = _text(html.unescape(confirm.content.decode()))
    assert "Delete the oldest finished job of team-room?" in text and "old-a" in text
    with demo_cluster.api_client("admin") as api:
        from tests.wizard_cluster import ClusterJobs
        jobs = ClusterJobs(api)
        assert jobs.names("team-room") == {"old-a", "old-b", "old-c"}
        done = alice.post(reverse("training-job-new-make-room", args=[key]),
                          {"job": ["old-a"], "next": "resources"})
        assert done.status_code == 302 and done["Location"].startswith(
            step_url(key, "resources"))
        assert jobs.names("team-room") == {"old-b", "old-c"}
    event = AuditEvent.objects.get(verb="delete", name="old-a", project="team-room")
    assert event.username == "alice" and event.outcome == "success"

    # back at the draft, as it was, and the check has room
    assert WizardDraft.objects.get(key=key).data == before
    after = _text(html.unescape(alice.get(done["Location"]).content.decode()))
    assert "Deleted the finished job old-a. Your job is as you left it." in after
    assert "Fits" in after and "fit-make-room" not in after

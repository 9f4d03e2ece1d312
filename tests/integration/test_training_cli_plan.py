"""`odh training VERB TYPE NAME`, the plan's command line, run as a shell runs it (the
installed `odh` command, a kubeconfig) against a real simcluster: the plan's CI example,
every verb's output, and the bugs a new user met in the first command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from odh.training.sdk import TrainingClient
from tests import plan_cluster
from tests.cutting_proxy import CuttingProxy
from tests.plan_cluster import IMAGE, NS
from tests.waiting import wait_until

BIN = Path(sys.executable).parent
SMALL = ["--image", IMAGE, "--workers", "2", "--cpu-per-worker", "1",
         "--memory-per-worker", "1Gi", "--command", "horovodrun -np 2 python train.py"]


cluster = plan_cluster.cluster


@pytest.fixture(scope="module")
def sh(cluster, tmp_path_factory):
    """Run a shell command line with `odh` on the PATH, as `user`."""
    assert (BIN / "odh").exists(), "the odh command is not installed: make install"
    home = tmp_path_factory.mktemp("cli-plan-home")

    def run(script: str, user: str = "alice", stdin: str | None = None, timeout: float = 180,
            kubeconfig: Path | None = None) -> subprocess.CompletedProcess:
        env = dict(os.environ, KUBECONFIG=str(kubeconfig or cluster.kubeconfig(user)),
                   HOME=str(home), PATH=f"{BIN}:{os.environ.get('PATH', '')}")
        return subprocess.run(["bash", "-c", script], env=env, input=stdin,
                              capture_output=True, text=True, timeout=timeout)
    return run


@pytest.fixture(scope="module")
def alice(cluster):
    with TrainingClient(kubeconfig=str(cluster.kubeconfig("alice"))) as client:
        yield client


def running(name: str, *extra: str, seconds: int = 3000) -> str:
    flags = " ".join([*SMALL[:-1], repr(SMALL[-1]), *extra])
    return (f"odh training create mpijob {name} -n {NS} {flags} "
            f"--annotation simcluster.io/run-seconds={seconds}")


def test_the_plans_ci_example(sh):
    """The plan's CI job, as written there (names, image and simcluster's run time set)."""
    script = f"""
set -e
JOB=ci-train
NS={NS}
odh training create mpijob $JOB --namespace=$NS --image {IMAGE} --workers 2 \\
    --cpu-per-worker 1 --memory-per-worker 1Gi --annotation simcluster.io/run-seconds=3000 \\
    --command "horovodrun -np 2 python train.py"
until odh training describe mpijob $JOB --namespace=$NS | grep -q 'Status: Running'; do
    sleep 1
done
odh training logs mpijob $JOB --namespace=$NS --tail=10
"""
    done = sh(script)
    assert done.returncode == 0, done.stderr
    created, *logged = done.stdout.splitlines()
    assert created.startswith("Created the MPIJob team-nlp/ci-train: 2 Workers x 1 CPU, 1Gi")
    assert 0 < len(logged) <= 10
    assert "Traceback" not in done.stderr


def test_create_with_wait_list_get_and_describe(sh, alice):
    created = sh(f"odh training create mpijob cli-wait -n {NS} {' '.join(SMALL[:-1])} "
                 f"'{SMALL[-1]}' --wait --timeout 120")
    assert created.returncode == 0, created.stderr
    assert created.stdout.splitlines()[-1].startswith("cli-wait Succeeded after ")
    assert alice.summary("cli-wait", NS).created_by == "alice"

    listed = sh(f"odh training list mpijob -n {NS}")
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["NAME", "TYPE", "STATUS", "WORKERS", "CREATED"]
    row = next(r.split() for r in rows if r.startswith("cli-wait "))
    assert row[1:4] == ["MPIJob", "Succeeded", "0/2"] and row[-1] == "ago"

    wide = sh("odh training list mpijob -A --status succeeded -o wide")
    header, *rows = wide.stdout.splitlines()
    assert header.split()[:6] == ["NAMESPACE", "NAME", "TYPE", "STATUS", "WORKERS", "CREATED"]
    assert "CREATED BY" in header and "DURATION" in header
    assert all(" Succeeded " in r for r in rows) and any(" cli-wait " in r for r in rows)
    assert any(" alice " in r for r in rows)

    as_json = json.loads(sh(f"odh training list mpijob -n {NS} -o json").stdout)
    record = next(i for i in as_json["items"] if i["name"] == "cli-wait")
    assert record["status"] == "Succeeded" and record["createdBy"] == "alice"
    assert record["workers"]["total"] == 2 and record["durationSeconds"] > 0
    as_yaml = yaml.safe_load(sh(f"odh training list -n {NS} -o yaml").stdout)
    assert any(i["name"] == "cli-wait" for i in as_yaml["items"])

    got = yaml.safe_load(sh(f"odh training get mpijob cli-wait -n {NS} -o yaml").stdout)
    assert got["kind"] == "MPIJob" and got["metadata"]["name"] == "cli-wait"
    one = sh(f"odh training get mpijob cli-wait -n {NS}").stdout.splitlines()
    assert len(one) == 2 and one[1].startswith("cli-wait ")

    described = sh(f"odh training describe mpijob cli-wait -n {NS}").stdout
    head = described.split("\n\n")[0].splitlines()
    labels = [line.split(":")[0].strip() for line in head]
    assert labels[:6] == ["Name", "Namespace", "Type", "Status", "Reason", "Workers"] or \
        labels[:5] == ["Name", "Namespace", "Type", "Status", "Workers"]
    assert "    Status: Succeeded" in described and "Duration: " in described
    sections = [line for line in described.splitlines() if line.endswith(":")]
    assert sections == ["Worker Status:", "Resource Allocation:", "Events:"]
    assert "     CPU: 3 (1 per worker)" in described
    record = json.loads(sh(f"odh training describe mpijob cli-wait -n {NS} -o json").stdout)
    assert record["status"] == "Succeeded" and record["diagnosis"] is None
    assert {p["role"] for p in record["pods"]} <= {"Launcher", "Worker"}
    assert record["events"] and record["resources"]["cpu"] == "3 (1 per worker)"


def test_describe_watch_prints_each_change_until_the_end(sh):
    # 30 s at the cluster's speed: on a loaded machine `describe` may take several seconds
    # to start, and must still see the job running before it ends
    done = sh(f"{running('cli-watch', seconds=1500)} >/dev/null && "
              f"odh training describe mpijob cli-watch -n {NS} --watch", timeout=120)
    assert done.returncode == 0, done.stderr
    statuses = [line.split(":", 1)[1].strip() for line in done.stdout.splitlines()
                if line.strip().startswith("Status:")]
    assert len(statuses) >= 2 and statuses[-1] == "Succeeded"
    assert done.stdout.count("-" * 79) == len(statuses) - 1


def _kept_pods_manifest(name: str, seconds: int) -> str:
    """An MPIJob whose Workers' pods stay when it ends (cleanPodPolicy None), so their logs
    can be read however slowly the test runs."""
    resources = {"requests": {"cpu": "1", "memory": "1Gi"}}
    pod = {"containers": [{"name": "main", "image": IMAGE, "resources": resources,
                           "command": ["horovodrun", "-np", "2", "python", "train.py"]}]}
    return yaml.safe_dump({
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": name,
                     "annotations": {"simcluster.io/run-seconds": str(seconds)}},
        "spec": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "None"},
                 "mpiReplicaSpecs": {
                     "Launcher": {"replicas": 1, "template": {"spec": pod}},
                     "Worker": {"replicas": 2, "template": {"spec": pod}}}}})


def test_logs_of_a_worker_all_workers_and_followed(sh, alice):
    created = sh(f"odh training create mpijob -f - -n {NS}",
                 stdin=_kept_pods_manifest("cli-logs", 600))
    assert created.returncode == 0, created.stderr
    wait_until(lambda: alice.summary("cli-logs", NS).status == "Running", 60,
               message="cli-logs to run")
    wait_until(lambda: len(sh(f"odh training logs mpijob cli-logs -n {NS} --worker 1 "
                              "--tail 3").stdout.splitlines()) == 3, 30,
               message="three lines of Worker 1's log")
    both = sh(f"odh training logs mpijob cli-logs -n {NS} --all-workers").stdout
    prefixes = {line.split("]")[0] + "]" for line in both.splitlines()}
    assert prefixes == {"[worker-0]", "[worker-1]"}
    followed = sh(f"odh training logs mpijob cli-logs -n {NS} --follow", timeout=120)
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.splitlines() == alice.logs("cli-logs", NS,
                                                      tail_lines=None).splitlines()
    assert "Training complete" in followed.stdout
    missing = sh(f"odh training logs mpijob cli-logs -n {NS} --worker 7")
    assert missing.returncode == 1
    assert missing.stderr == ("error: Worker 7 of job team-nlp/cli-logs has no pod (yet): check "
                              "the job's status.\n")


def test_followed_logs_survive_cut_connections(sh, cluster, alice, tmp_path):
    host, port = cluster.api_url.removeprefix("https://").split(":")
    proxy = CuttingProxy(host, int(port))
    kubeconfig = proxy.kubeconfig(cluster.kubeconfig("alice"), tmp_path / "kubeconfig")
    assert sh(running("cli-cuts", "--annotation simcluster.io/epochs=200",
                      seconds=400)).returncode == 0
    wait_until(lambda: alice.summary("cli-cuts", NS).status == "Running", 60,
               message="cli-cuts to run")
    stop = threading.Event()

    def cut() -> None:
        while not stop.wait(0.7):
            proxy.cut()
    cutter = threading.Thread(target=cut, daemon=True)
    cutter.start()
    try:
        followed = sh(f"odh training logs mpijob cli-cuts -n {NS} -f", kubeconfig=kubeconfig)
        waited = sh(f"odh training wait mpijob cli-cuts -n {NS} --timeout 120",
                    kubeconfig=kubeconfig)
    finally:
        stop.set()
        cutter.join()
        proxy.close()
    assert proxy.cuts >= 3
    assert followed.returncode == 0, followed.stderr
    lines = followed.stdout.splitlines()
    assert lines == alice.logs("cli-cuts", NS, tail_lines=None).splitlines()
    assert len(lines) > 200
    assert waited.returncode == 0 and waited.stdout.startswith("cli-cuts Succeeded after ")


def test_wait_for_a_status_and_timeouts(sh):
    assert sh(running("cli-for")).returncode == 0
    reached = sh(f"odh training wait mpijob cli-for -n {NS} --for Running --timeout 60")
    assert reached.returncode == 0, reached.stderr
    assert reached.stdout.startswith("cli-for Running after ")
    late = sh(f"odh training wait mpijob cli-for -n {NS} --timeout 2")
    assert late.returncode == 1
    assert late.stderr == "error: cli-for is still Running after 2 seconds.\n"


def test_suspend_resume_and_delete_with_confirm_and_wait(sh, alice):
    assert sh(running("cli-life")).returncode == 0
    suspended = sh(f"odh training suspend mpijob cli-life -n {NS}")
    assert suspended.stdout.startswith("Suspended team-nlp/cli-life: its Workers stop")
    assert sh(f"odh training wait mpijob cli-life -n {NS} --for suspended --timeout 60"
              ).returncode == 0
    assert sh(f"odh training resume mpijob cli-life -n {NS}").returncode == 0
    asked = sh(f"odh training delete mpijob cli-life -n {NS}", stdin="")
    assert asked.returncode == 2 and "pass --confirm" in asked.stderr
    deleted = sh(f"odh training delete mpijob cli-life -n {NS} --confirm --wait")
    assert deleted.returncode == 0, deleted.stderr
    gone = sh(f"odh training describe mpijob cli-life -n {NS}")
    assert gone.returncode == 1 and gone.stderr.startswith("error: ")


# -- the wizard's checks --------------------------------------------------------------------
def test_a_job_that_can_never_start_is_refused_with_the_wizards_fix(sh, alice):
    """9 GPUs per Worker on 8-GPU nodes: admin may read the nodes, so it is said at once."""
    command = (f"odh training create mpijob cli-nine -n {NS} --image {IMAGE} --workers 1 "
               "--gpu-per-worker 9 --command 'horovodrun -np 9 python train.py'")
    refused = sh(command, user="admin")
    assert refused.returncode == 2
    lines = refused.stderr.splitlines()
    assert lines[0].startswith("error: this job can never start as it is: No node can run a "
                               "Worker with 9 GPUs: the largest GPU node has 8 (gpu-")
    assert any(line.startswith("  fix: --workers 2 --gpu-per-worker ") for line in lines)
    assert lines[-1] == "  or pass --force to create it anyway."
    assert "cli-nine" not in {s.name for s in alice.list_jobs(NS)}
    forced = sh(command + " --force", user="admin")
    assert forced.returncode == 0, forced.stderr
    assert alice.summary("cli-nine", NS).created_by == "admin"


def test_more_than_the_quota_holds_is_refused_and_a_wait_is_announced(sh):
    over = sh(f"odh training create mpijob cli-over -n {NS} --image {IMAGE} --workers 3 "
              "--gpu-per-worker 8 --command 'horovodrun -np 24 python t.py'")
    assert over.returncode == 2
    assert ("\nerror: this job can never start as it is: This job can never fit the team-nlp "
            "quota of 16 GPUs: it asks for 24 GPUs.") in over.stderr
    # fixes that keep as much as the quota holds in all (16 GPUs: 2 x 8 or 3 x 5...)
    assert re.search(r"\n  fix: --workers 2 ", over.stderr), over.stderr
    # alice may not list nodes: said once, plainly
    assert "you may not list the cluster's nodes" in over.stderr
    assert sh(running("cli-holder", "--gpu-per-worker 4")).returncode == 0
    waits = sh(f"odh training create mpijob cli-waits -n {NS} --image {IMAGE} --workers 2 "
               "--gpu-per-worker 8 --command 'horovodrun -np 16 python t.py' --dry-run")
    assert waits.returncode == 0, waits.stderr
    assert "warning: " in waits.stderr and "will wait" in waits.stderr
    assert "dry run, nothing created" in waits.stdout


def test_a_misspelt_manifest_field_is_named(sh, alice):
    manifest = f"""
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {{name: cli-typo}}
spec:
  runPolicy: {{cleanPodPolice: Running}}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template: {{spec: {{containers: [{{name: l, image: "{IMAGE}", command: [python, t.py]}}]}}}}
    Worker:
      replica: 2
      template: {{spec: {{containers: [{{name: w, image: "{IMAGE}"}}]}}}}
"""
    refused = sh(f"odh training create mpijob -f - -n {NS}", stdin=manifest)
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: -: The cluster's MPIJob API has no fields "
                                     "“spec.runPolicy.cleanPodPolice”, "
                                     "“spec.mpiReplicaSpecs.Worker.replica”")
    assert "--workers" not in refused.stderr
    fixed = manifest.replace("cleanPodPolice", "cleanPodPolicy").replace("replica:",
                                                                         "replicas:")
    dry = sh(f"odh training create mpijob -f - -n {NS} --dry-run=server", stdin=fixed)
    assert dry.returncode == 0, dry.stderr
    assert "cli-typo" not in {s.name for s in alice.list_jobs(NS)}


def test_refusals_are_one_plain_line(sh):
    bob = sh(f"{running('cli-bob')}", user="bob")
    assert bob.returncode == 1
    assert bob.stderr == ("error: You may not create MPIJobs in team-nlp: ask the project's "
                          "administrator for the edit role, or choose another project.\n")


def test_logs_of_a_pytorchjob_read_its_master(sh, cluster):
    manifest = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                "metadata": {"name": "cli-torch", "namespace": NS,
                             "annotations": {"simcluster.io/run-seconds": "3"}},
                "spec": {"pytorchReplicaSpecs": {
                    role: {"replicas": count, "template": {"spec": {"containers": [{
                        "name": "pytorch", "image": IMAGE,
                        "command": ["python", "/opt/mnist/src/mnist.py"]}]}}}
                    for role, count in (("Master", 1), ("Worker", 1))}}}
    from kubernetes import client as k8s

    with cluster.api_client("alice") as api:
        k8s.CustomObjectsApi(api).create_namespaced_custom_object(
            "kubeflow.org", "v1", NS, "pytorchjobs", manifest)
    assert sh(f"odh training wait pytorchjob cli-torch -n {NS} --timeout 120"
              ).returncode == 0
    master = sh(f"odh training logs pytorchjob cli-torch -n {NS}")
    assert master.returncode == 0, master.stderr
    assert master.stdout.strip()
    # the first CLI's form looked for a Launcher, which a PyTorchJob does not have
    typed = sh(f"odh-training logs cli-torch --type pytorchjob -n {NS}")
    assert typed.returncode == 0, typed.stderr
    assert typed.stdout == master.stdout
    listed = sh(f"odh training list pytorchjob -n {NS}").stdout
    assert "cli-torch " in listed and "PyTorchJob" in listed


def test_describe_piped_into_head_ends_quietly(sh):
    assert sh(running("cli-pipe")).returncode == 0
    done = sh(f"set -o pipefail; odh training describe mpijob cli-pipe -n {NS} | head -1")
    assert done.returncode == 0
    assert done.stdout == "      Name: cli-pipe\n"
    assert done.stderr == ""


def test_the_alias_and_completion(sh):
    assert sh(running("cli-complete")).returncode == 0
    listed = sh(f"odh-training list -n {NS}")
    assert listed.returncode == 0 and listed.stdout.startswith("NAME ")
    completion = sh("source <(odh completion bash); complete -p odh")
    assert completion.stdout.strip() == "complete -F _odh_training_complete odh"
    words = sh(f"source <(odh completion bash); COMP_WORDS=(odh training logs mpijob -n {NS} "
               "''); COMP_CWORD=6; _odh_training_complete; echo ${COMPREPLY[@]}")
    assert "cli-complete" in words.stdout.split()


def test_list_and_delete_chosen_by_labels_status_and_creator(sh):
    for name, team in (("sel-a", "nlp"), ("sel-b", "nlp"), ("sel-c", "cv")):
        made = sh(running(name, "--label", f"team={team}"))
        assert made.returncode == 0, made.stderr
    listed = sh(f"odh training list mpijob -n {NS} -l team=nlp --user alice")
    assert listed.returncode == 0, listed.stderr
    assert "sel-a" in listed.stdout and "sel-b" in listed.stdout
    assert "sel-c" not in listed.stdout
    nobody = sh(f"odh training list mpijob -n {NS} -l team=nlp --user bob")
    assert "sel-a" not in nobody.stdout
    unreadable = sh(f"odh training list mpijob -n {NS} -l '=nlp'")
    assert unreadable.returncode == 2 and "is not a label selector" in unreadable.stderr

    asked = sh(f"odh training delete mpijob -n {NS} -l team=nlp", stdin="")
    assert asked.returncode == 2
    assert "sel-a, sel-b" in asked.stderr and "pass --confirm" in asked.stderr
    both = sh(f"odh training delete mpijob -n {NS} -l team=nlp --confirm --wait")
    assert both.returncode == 0, both.stderr
    assert both.stdout.splitlines() == [f"{NS}/sel-a: deleted", f"{NS}/sel-b: deleted"]
    none = sh(f"odh training delete mpijob -n {NS} -l team=nlp --status Failed --confirm")
    assert none.returncode == 0 and "nothing deleted" in none.stdout
    kept = sh(f"odh training get mpijob sel-c -n {NS}")
    assert kept.returncode == 0 and "sel-c" in kept.stdout
    both_ways = sh(f"odh training delete mpijob sel-c -n {NS} -l team=cv --confirm")
    assert both_ways.returncode == 2 and "not both" in both_ways.stderr
    assert sh(f"odh training delete mpijob sel-c -n {NS} --confirm").returncode == 0

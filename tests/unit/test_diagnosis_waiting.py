"""The diagnosis of waiting and unwell jobs (odh.training.diagnosis), from captured objects."""

from __future__ import annotations

from odh.training.diagnosis import Action, Culprit, GpuHolder, Usage, diagnose
from tests.unit.diagnosis_objects import (
    GPU_NODE,
    facts,
    job_event,
    launcher,
    pending_job,
    pod_event,
    running_job,
    tail,
    worker,
)
from tests.unit.training_objects import (
    INSUFFICIENT_GPU,
    container_running,
    container_terminated,
    container_waiting,
    event,
)


def _fixes(diagnosis):
    return [s.fix for s in diagnosis.suggestions if s.action == Action.FIX]


# -- can never start / waits for room --------------------------------------------------------------
def _huge(workers=2, gpus=12):
    job = pending_job("vit", workers=workers, gpus=gpus)
    message = ("0/6 nodes are available: 4 Insufficient nvidia.com/gpu, 2 node(s) didn't "
               "match Pod's node affinity/selector.")
    pods = [worker("vit", i, unschedulable=message, gpus=gpus) for i in range(workers)]
    return job, pods


NEVER = "This job can never start: each Worker asks for 12 GPUs and no node has that many"


def test_a_worker_larger_than_every_node_can_never_start_with_the_numbers():
    job, pods = _huge()
    found = diagnose(facts(job, pods, nodes=[GPU_NODE], quotas=[]))
    assert found.scenario == "never-fits"
    assert found.headline == NEVER
    assert "The largest node offers 8 GPUs, 96 CPUs and 1152Gi." in [
        e.text for e in found.evidence]
    assert found.culprit == Culprit.CONFIGURATION
    assert found.affected_labels == ["Worker 0", "Worker 1"]


def test_without_the_nodes_the_schedulers_verdict_says_never_in_the_same_words():
    """Most people may not list nodes: the scheduler's own message (preemption would help on
    no node) tells the same story, in the same words, without the nodes' sizes."""
    job = pending_job("vit", workers=2, gpus=12)
    message = ("0/6 nodes are available: 6 Insufficient nvidia.com/gpu. preemption: 0/6 nodes "
               "are available: 6 Preemption is not helpful for scheduling.")
    pods = [worker("vit", i, unschedulable=message, gpus=12) for i in range(2)]
    found = diagnose(facts(job, pods))
    assert found.scenario == "never-fits"
    assert found.headline == NEVER
    assert not any(e.text.startswith("The largest node") for e in found.evidence)
    # where preemption could help on one node, it may start one day: it waits
    hopeful = message.replace("6 Preemption is not helpful for scheduling",
                              "2 No preemption victims found for incoming pod, 4 Preemption "
                              "is not helpful for scheduling")
    pods = [worker("vit", i, unschedulable=hopeful, gpus=12) for i in range(2)]
    assert diagnose(facts(job, pods)).scenario == "waiting-for-capacity"


def test_the_never_fits_fix_keeps_the_total_and_fits_a_node():
    job, pods = _huge()
    found = diagnose(facts(job, pods, nodes=[GPU_NODE], quotas=[]))
    first = _fixes(found)[0]
    assert first.changes["gpus_per_worker"] * first.changes["workers"] >= 24
    assert first.changes["gpus_per_worker"] <= 8
    assert first.label == "Clone with 3 Workers x 8 GPUs"


def test_without_the_nodes_a_big_job_is_waiting_not_never():
    job, pods = _huge()
    found = diagnose(facts(job, pods, unread=["the cluster's nodes (you may not read it)"]))
    assert found.scenario == "waiting-for-capacity"
    assert found.unread == ["the cluster's nodes (you may not read it)"]


def test_waiting_for_gpus_counts_what_is_free_and_estimates_the_start():
    job = pending_job("llama", workers=2, gpus=8)
    pods = [worker("llama", 0, unschedulable=INSUFFICIENT_GPU, gpus=8),
            worker("llama", 1, gpus=8)]  # one Worker already placed, holding its GPUs
    holders = [GpuHolder("team-nlp", "bert", "mpijob", 8, 1200.0),
               GpuHolder("team-nlp", "t5", "mpijob", 4, None)]
    found = diagnose(facts(job, pods, nodes=[GPU_NODE], gpu_holders=holders, free_gpus=2,
                           hidden_gpus=6))
    assert found.scenario == "waiting-for-capacity"
    assert found.culprit == Culprit.CAPACITY
    # the same words for everyone; what is free, for those who could see it, is evidence
    assert found.headline == "Waiting for GPUs: 8 GPUs needed, not enough free on any node"
    texts = [e.text for e in found.evidence]
    assert "2 GPUs free on the whole cluster now." in texts
    assert "bert holds 8 GPUs, about 20m 0s left" in texts
    assert "t5 holds 4 GPUs, time left unknown" in texts
    assert "6 GPUs are held elsewhere on the cluster (other projects' jobs and workloads)" \
        in texts
    assert "Estimated start: in about 20m 0s, when bert finishes" in texts
    assert any("already placed and hold 8 GPUs" in t for t in texts)


def test_without_a_known_time_left_the_start_is_unknown():
    job = pending_job("llama", workers=1, gpus=8)
    pods = [worker("llama", 0, unschedulable=INSUFFICIENT_GPU, gpus=8)]
    found = diagnose(facts(job, pods, nodes=[GPU_NODE],
                           gpu_holders=[GpuHolder("team-nlp", "t5", "mpijob", 8, None)],
                           free_gpus=0))
    assert "Estimated start: unknown" in [e.text for e in found.evidence]


# -- quota and admission -----------------------------------------------------------------------
QUOTA_REFUSAL = ('worker pod created failed: pods "llama-worker-2" is forbidden: exceeded '
                 "quota: team-quota, requested: requests.nvidia.com/gpu=2, used: "
                 "requests.nvidia.com/gpu=14, limited: requests.nvidia.com/gpu=16")


def test_quota_says_used_hard_and_what_this_job_still_needs():
    job = pending_job("llama", workers=4, gpus=2)
    pods = [launcher("llama"), worker("llama", 0, gpus=2), worker("llama", 1, gpus=2)]
    events = [job_event("llama", "MPIJobFailed", QUOTA_REFUSAL)]
    found = diagnose(facts(job, pods, events))
    assert found.scenario == "quota"
    assert found.headline == ("Waiting for quota: the project uses 14 of its 16 GPUs and this "
                              "job needs 4 more")
    assert found.culprit == Culprit.CAPACITY
    # without read access to the quota, the refusal's own numbers make the fix
    fix = _fixes(found)[0]
    assert fix.changes["workers"] < 4


def test_a_job_larger_than_the_whole_quota_is_configuration():
    job = pending_job("big", workers=10, gpus=2)
    refusal = QUOTA_REFUSAL.replace("llama", "big")
    found = diagnose(facts(job, [launcher("big")], [job_event("big", "MPIJobFailed", refusal)]))
    assert found.culprit == Culprit.CONFIGURATION
    assert any("never start as it is" in e.text for e in found.evidence)


def test_a_limit_range_refusal_says_it_in_plain_words():
    job = pending_job("cpu", workers=2, gpus=0)
    text = ('worker pod created failed: pods "cpu-worker-0" is forbidden: maximum cpu usage '
            "per Container is 64, but limit is 96")
    found = diagnose(facts(job, [launcher("cpu")], [job_event("cpu", "MPIJobFailed", text)]))
    assert found.scenario == "admission-refused"
    assert found.headline == ("The project's LimitRange refuses the Workers: at most 64 CPUs "
                              "per container, each asks for 96 CPUs")


def test_the_launchers_refusal_comes_from_its_job():
    job = pending_job("cpu", workers=1, gpus=0)
    refusal = event("Job", "cpu-launcher", "FailedCreate", 'Error creating: pods '
                    '"cpu-launcher-x7k2p" is forbidden: maximum memory usage per Container is '
                    "64Gi, but limit is 128Gi", 30)
    found = diagnose(facts(job, [worker("cpu", 0, gpus=0)], [refusal]))
    assert found.scenario == "admission-refused"
    assert "refuses the Launcher: at most 64Gi per container" in found.headline


def test_an_invalid_job_repeats_the_operators_findings():
    job = pending_job("bad")
    job["status"] = {}
    events = [job_event("bad", "ValidationError", "Found validation errors: "
                        "spec.slotsPerWorker: must be >= 0")]
    found = diagnose(facts(job, [], events))
    assert found.scenario == "invalid-job"
    assert "spec.slotsPerWorker" in found.headline


# -- images, volumes, Secrets ------------------------------------------------------------------
PULL_UNAUTHORIZED = ('Failed to pull image "quay.io/cv/detr:2.0": rpc error: code = Unknown desc '
                     "= initializing source docker://quay.io/cv/detr:2.0: reading manifest 2.0 "
                     "in quay.io/cv/detr: unauthorized: access to the requested resource is not "
                     "authorized")


def _pulling(name="detr"):
    stuck = worker(name, 0, phase="Pending", ready=False,
                   state=container_waiting("ImagePullBackOff",
                                           'Back-off pulling image "quay.io/cv/detr:2.0"'))
    stuck["status"]["containerStatuses"][0]["image"] = "quay.io/cv/detr:2.0"
    return stuck


def test_an_unauthorized_pull_lists_the_pull_secrets_and_offers_to_edit_the_image():
    stuck = _pulling()
    found = diagnose(facts(pending_job("detr", workers=1), [stuck],
                           [pod_event(stuck, "Failed", PULL_UNAUTHORIZED)], pull_secrets=[]))
    assert found.scenario == "image-pull"
    assert found.headline == ("The image quay.io/cv/detr:2.0 cannot be pulled: the registry "
                              "refused access (unauthorized)")
    assert "The project team-nlp has no image pull secret." in [e.text for e in found.evidence]
    assert _fixes(found)[0].focus == "image"
    assert any(s.command == "podman pull quay.io/cv/detr:2.0" for s in found.suggestions)


def test_the_pull_failure_kinds_are_told_apart():
    for text, words, culprit in (
            ("reading manifest 2.0 in quay.io/cv/detr: manifest unknown",
             "it does not exist in the registry", Culprit.CONFIGURATION),
            ('pinging container registry r.example: Get "https://r.example/v2/": dial tcp: '
             "lookup r.example on 172.30.0.10:53: no such host",
             "its registry cannot be reached", Culprit.PLATFORM)):
        stuck = _pulling()
        found = diagnose(facts(pending_job("detr", workers=1), [stuck], [pod_event(
            stuck, "Failed", f'Failed to pull image "quay.io/cv/detr:2.0": {text}')],
            pull_secrets=["my-registry"]))
        assert found.headline.endswith(words)
        assert found.culprit == culprit


def test_a_missing_claim_lists_the_claims_that_exist():
    text = ('0/6 nodes are available: persistentvolumeclaim "squad-data" not found. preemption: '
            "0/6 nodes are available: 6 Preemption is not helpful for scheduling.")
    pods = [worker("qa", 0, unschedulable=text)]
    claims = [{"metadata": {"name": "datasets"}}, {"metadata": {"name": "checkpoints"}}]
    found = diagnose(facts(pending_job("qa", workers=1), pods, nodes=[GPU_NODE], pvcs=claims))
    assert found.scenario == "volume"
    assert found.headline == "The volume claim “squad-data” does not exist in team-nlp"
    assert "Volume claims in team-nlp: checkpoints, datasets" in [e.text for e in found.evidence]
    assert _fixes(found)[0].focus == "volumes"


def test_a_missing_secret_is_named_with_the_command_to_create_it():
    stuck = worker("t5", 0, phase="Pending", ready=False, state=container_waiting(
        "CreateContainerConfigError", 'secret "wandb-credentials" not found'))
    found = diagnose(facts(pending_job("t5", workers=1), [stuck]))
    assert found.scenario == "volume"
    assert found.headline == ("The Secret “wandb-credentials” that Worker 0 needs does not "
                              "exist in team-nlp")
    assert any("oc create secret generic wandb-credentials" in s.command
               for s in found.suggestions)


# -- running, but not well -----------------------------------------------------------------------
def test_a_worker_that_crashed_and_restarted_says_so_with_its_last_line():
    job = running_job("t5", workers=4)
    job["spec"]["runPolicy"]["backoffLimit"] = 3
    crashed = worker("t5", 2, restarts=1, state=container_running(400),
                     last_state=container_terminated("Error", 1, 30, 300))
    pods = [launcher("t5"), crashed] + [worker("t5", i) for i in (0, 1, 3)]
    previous = tail(crashed, ["RuntimeError: NCCL communicator was aborted on rank 2."],
                    start=299, previous=True)
    found = diagnose(facts(job, pods, logs=[previous]))
    assert found.scenario == "worker-restarting"
    assert found.headline == "Worker 2 crashed and restarted (retry 1 of 3)"
    texts = [e.text for e in found.evidence]
    assert "RuntimeError: NCCL communicator was aborted on rank 2." in texts
    assert "4/4 Workers healthy" in texts


def test_a_crash_looping_worker_is_restarting():
    job = running_job("t5", workers=1)
    looping = worker("t5", 0, restarts=2, ready=False,
                     state=container_waiting("CrashLoopBackOff", "back-off 20s"),
                     last_state=container_terminated("Error", 1))
    found = diagnose(facts(job, [launcher("t5"), looping]))
    assert found.headline == "Worker 0 crashed and is restarting (retry 2)"


def _quiet_job(last_line_at: float, now: float):
    job = running_job("neox", workers=2)
    source = launcher("neox")
    pods = [source, worker("neox", 0), worker("neox", 1)]
    log = tail(source, ["Horovod rank 0/4 started", "Model: BERT-base, batch size 64"],
               start=last_line_at)
    return job, pods, log


def test_a_silent_launcher_with_idle_gpus_is_a_possible_hang():
    job, pods, log = _quiet_job(100, 100 + 14 * 60)
    found = diagnose(facts(job, pods, logs=[log], seconds=100 + 14 * 60,
                           usage=Usage(gpu_util=1.0, gpu_util_seconds=600)))
    assert found.scenario == "possible-hang"
    assert found.headline == ("Possible hang: no new log line for 13m 59s and the GPUs are "
                              "idle")
    assert found.dismissable
    assert Action.DISMISS in [s.action for s in found.suggestions]


def test_busy_gpus_or_a_recent_line_is_not_a_hang():
    job, pods, log = _quiet_job(100, 100 + 14 * 60)
    busy = facts(job, pods, logs=[log], seconds=100 + 14 * 60,
                 usage=Usage(gpu_util=90.0, gpu_util_seconds=600))
    assert diagnose(busy) is None
    recent = facts(job, pods, logs=[log], seconds=100 + 5 * 60)
    assert diagnose(recent) is None


def test_a_hang_is_not_said_when_prometheus_did_not_answer_for_the_gpus():
    """Quiet by design, computing on its GPUs: without their use read, the list's look and
    the page's once disagreed (one read it in time, the other did not)."""
    job, pods, log = _quiet_job(100, 100 + 14 * 60)
    unanswered = facts(job, pods, logs=[log], seconds=100 + 14 * 60,
                       usage=Usage(gpu_unread=True))
    assert diagnose(unanswered) is None
    # no Prometheus at all: the log's silence alone is said, as before
    alone = diagnose(facts(job, pods, logs=[log], seconds=100 + 14 * 60))
    assert alone.headline == "Possible hang: no new log line from Launcher for 13m 59s"


def test_a_dismissed_hang_is_not_said_again():
    job, pods, log = _quiet_job(100, 100 + 14 * 60)
    quiet = facts(job, pods, logs=[log], seconds=100 + 14 * 60,
                  dismissed=frozenset({"possible-hang"}))
    assert diagnose(quiet) is None


def test_low_gpu_utilization_is_a_hint():
    job, pods, log = _quiet_job(700, 700)
    found = diagnose(facts(job, pods, logs=[log], seconds=701,
                           usage=Usage(gpu_util=25.0, gpu_util_seconds=600)))
    assert found.scenario == "low-gpu-utilization"
    assert found.headline == "GPU utilization is 25% over the last 10m 0s"
    assert found.severity == "info"


def test_a_pod_problem_no_rule_knows_is_said_with_the_clusters_words():
    job = running_job("odd", workers=1)
    odd = worker("odd", 0, phase="Failed", reason="UnexpectedAdmissionError",
                 message="Allocate failed due to requested number of devices unavailable")
    found = diagnose(facts(job, [launcher("odd"), odd]))
    assert found.scenario == "unknown"
    assert found.headline == "We could not tell what is wrong with Worker 0"
    assert found.raw_reason == "UnexpectedAdmissionError"

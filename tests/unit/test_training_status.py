"""Status summaries of MPIJobs, PyTorchJobs, TFJobs and TrainJobs from objects, pods, events."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from odh.training.cluster.events import scheduling_reasons
from odh.training.kinds import MPIJOB, PYTORCHJOB, TFJOB, TRAINJOB
from odh.training.status.pods import replica_from_pod
from odh.training.status.summarize import JobPod, JobStatus, job_pods, summarize
from tests.unit.training_objects import (
    INSUFFICIENT_GPU,
    NS,
    T0,
    at,
    condition,
    container_terminated,
    container_waiting,
    created,
    event,
    launcher,
    mpijob,
    pod,
    running,
    v1_pod,
    worker,
)

NOW = T0 + timedelta(hours=2)
MPI_WORDS = re.compile(r"\b(master|replica|replicas)\b", re.IGNORECASE)


def succeeded_job():
    return mpijob(conditions=[
        created(),
        running(status="False"),
        condition("Succeeded", "True", "MPIJobSucceeded",
                  f"MPIJob {NS}/resnet successfully completed.", 3733),
    ], status={"startTime": at(10), "completionTime": at(3733),
               "replicaStatuses": {"Launcher": {"succeeded": 1}, "Worker": {}}})


def oom_failed_job():
    job = mpijob(conditions=[
        created(), running(status="False"),
        condition("Failed", "True", "BackoffLimitExceeded/",
                  "Job has reached the specified backoff limit: ", 900),
    ], status={"startTime": at(10), "completionTime": at(900)})
    pods = [
        launcher("resnet", phase="Failed", ready=False,
                 state=container_terminated("Error", 1, finished=890)),
        worker("resnet", 0, phase="Failed", ready=False,
               state=container_terminated("Error", 137, finished=880)),
        worker("resnet", 1, phase="Failed", ready=False,
               state=container_terminated("OOMKilled", 137, finished=870)),
    ]
    return job, pods


# --- status from conditions ------------------------------------------------------------

def test_a_succeeded_job():
    pods = [launcher("resnet", phase="Succeeded", ready=False,
                     state=container_terminated("Completed", 0, finished=3730))]
    s = summarize(succeeded_job(), pods, [], NOW)
    assert s.status == JobStatus.SUCCEEDED and s.status == "Succeeded"
    assert s.reason == "MPIJobSucceeded"
    assert s.message == f"MPIJob {NS}/resnet successfully completed."
    assert s.since == T0 + timedelta(seconds=3733)
    assert s.lifecycle_step == "Completed in 1h 2m 3s"
    assert s.started == T0 + timedelta(seconds=10) and s.finished == T0 + timedelta(seconds=3733)
    assert s.duration_seconds(NOW) == 3723
    assert s.time_in_state_seconds(NOW) == 7200 - 3733
    # finished: only pods that exist, no "Not created" placeholders
    assert s.workers == [] and s.launcher.status == "Succeeded"
    assert s.launcher.reason == "Completed" and s.launcher.exit_code == 0
    assert (s.total, s.workers_total, s.gpus) == (3, 2, 2)
    assert [c.type for c in s.conditions] == ["Created", "Running", "Succeeded"]
    assert s.conditions[1].status == "False"


def test_an_oom_failed_job_names_the_worker():
    job, pods = oom_failed_job()
    s = summarize(job, pods, [], NOW)
    assert s.status == JobStatus.FAILED
    assert s.reason == "BackoffLimitExceeded/"
    assert s.message == "Job has reached the specified backoff limit: "
    assert s.lifecycle_step == "Failed: Worker 1 was OOMKilled"
    oom = s.workers[1]
    assert (oom.name, oom.status, oom.reason, oom.exit_code) == (
        "resnet-worker-1", "Failed", "OOMKilled", 137)
    assert oom.problem and oom.label == "Worker 1"
    assert s.finished == T0 + timedelta(seconds=900)


def test_a_failed_worker_explains_the_failure_before_the_launcher():
    job, pods = oom_failed_job()
    s = summarize(job, pods[:2], [], NOW)
    assert s.lifecycle_step == "Failed: Worker 0 exited with code 137"
    s = summarize(job, pods[:1], [], NOW)
    assert s.lifecycle_step == "Failed: Launcher exited with code 1"


def test_a_failed_job_without_pods_says_the_reason():
    job, _ = oom_failed_job()
    s = summarize(job, [], None, NOW)
    assert s.lifecycle_step == "Failed: BackoffLimitExceeded"
    assert s.workers == [] and s.launcher is None


def test_an_evicted_job_has_no_completion_time_but_finishes_at_the_condition():
    job = mpijob(conditions=[created(), running(),
                             condition("Failed", "True", "MPIJobEvicted",
                                       "1/2 workers are evicted", 500)],
                 status={"startTime": at(10)})
    evicted = worker("resnet", 0, phase="Failed", ready=False, reason="Evicted",
                     message="The node was low on resource: memory. Threshold quantity: 100Mi, "
                             "available: 35152Ki. ",
                     state=container_terminated("ContainerStatusUnknown", 137))
    s = summarize(job, [evicted, worker("resnet", 1)], [], NOW)
    assert s.status == JobStatus.FAILED and s.reason == "MPIJobEvicted"
    assert s.finished == T0 + timedelta(seconds=500)
    assert s.lifecycle_step == "Failed: Worker 0 was evicted"
    assert s.workers[0].reason == "Evicted" and s.workers[0].message.endswith("35152Ki.")


@pytest.mark.parametrize(("types", "expected"), [
    (["Succeeded", "Failed"], JobStatus.FAILED),
    (["Failed", "Succeeded"], JobStatus.SUCCEEDED),
])
def test_the_last_true_terminal_condition_wins(types, expected):
    conditions = [created()] + [condition(t, "True", t, "", 100 + i) for i, t in
                                enumerate(types)]
    assert summarize(mpijob(conditions=conditions), [], [], NOW).status == expected


def test_terminal_wins_over_suspended_and_running():
    conditions = [created(), running(),
                  condition("Suspended", "True", "MPIJobSuspended", "MPIJob suspended", 70),
                  condition("Failed", "True", "DeadlineExceeded",
                            "Job was active longer than specified deadline", 80)]
    s = summarize(mpijob(conditions=conditions), [], [], NOW)
    assert s.status == JobStatus.FAILED
    assert s.lifecycle_step == "Failed: DeadlineExceeded"


def test_a_suspended_job():
    job = mpijob(conditions=[
        created(),
        condition("Suspended", "True", "MPIJobSuspended", "MPIJob suspended", 30),
        condition("Running", "False", "MPIJobSuspended", f"MPIJob {NS}/resnet is suspended.",
                  30),
    ], status={"replicaStatuses": {"Launcher": {}, "Worker": {}}})
    s = summarize(job, [], [], NOW)
    assert s.status == JobStatus.SUSPENDED and s.lifecycle_step == "Suspended"
    assert s.since == T0 + timedelta(seconds=30) and s.reason == "MPIJobSuspended"
    assert s.workers == [] and s.launcher is None  # no placeholders while suspended
    # counted from creation (it never started) to its suspension: a suspended job's
    # duration does not go on counting
    assert s.duration_seconds(NOW) == 30
    assert s.duration_seconds(NOW + timedelta(hours=5)) == 30
    from odh.training.jobstatus import JobStatus as SdkStatus
    assert SdkStatus.from_summary(s).suspended_time == T0 + timedelta(seconds=30)


def test_a_resumed_job_that_is_not_running_yet_is_pending_since_creation():
    job = mpijob(conditions=[
        created(),
        condition("Running", "False", "MPIJobSuspended", "", 30),
        condition("Suspended", "False", "MPIJobResumed", "MPIJob resumed", 90),
    ], status={"startTime": at(90)})
    s = summarize(job, [], [], NOW)
    assert s.status == JobStatus.PENDING and s.since == T0


def test_a_running_job():
    job = mpijob(workers=8, conditions=[created(), running(seconds=120)],
                 status={"startTime": at(10)})
    pods = [launcher("resnet")] + [worker("resnet", i) for i in range(8)]
    s = summarize(job, pods, [], NOW)
    assert s.status == JobStatus.RUNNING and s.reason == "MPIJobRunning"
    assert s.lifecycle_step == "Training (8/8 Workers running)"
    assert s.since == T0 + timedelta(seconds=120)
    assert s.time_in_state_seconds(NOW) == 7200 - 120
    assert s.duration_seconds(NOW) == 7190
    assert (s.ready, s.total, s.workers_ready, s.workers_total) == (9, 9, 8, 8)
    assert s.gpus == 8 and s.created_by == "alice"
    assert [w.index for w in s.workers] == list(range(8))
    assert s.launcher.name == "resnet-launcher-x7k2p" and s.launcher.index is None
    assert s.workers[3].node == "gpu-1" and s.workers[3].gpus == 1 and s.workers[3].ready


def test_a_running_job_with_a_failed_worker_has_problems():
    job = mpijob(workers=4, conditions=[created(), running()], status={"startTime": at(10)})
    pods = [launcher("resnet")] + [worker("resnet", i) for i in (0, 1, 3)] + [
        worker("resnet", 2, phase="Failed", ready=False,
               state=container_terminated("OOMKilled", 137))]
    s = summarize(job, pods, [], NOW)
    assert s.status == JobStatus.RUNNING
    assert s.lifecycle_step == "Running with problems: Worker 2 OOMKilled"
    assert [r.label for r in s.problems] == ["Worker 2"]


# --- pending: what the job is waiting for ------------------------------------------------

def test_a_job_the_operator_has_not_seen():
    s = summarize(mpijob(), [], [], NOW)
    assert s.status == JobStatus.PENDING
    assert s.lifecycle_step == "Waiting for the MPI Operator"
    assert s.since == T0 and s.reason == ""
    assert [w.reason for w in s.workers] == ["Not created", "Not created"]
    assert s.launcher.reason == "Not created" and s.launcher.name == "resnet-launcher"


def test_an_invalid_job_says_what_the_operator_found():
    text = ("Found validation errors: spec.mpiReplicaSpecs[Launcher].replicas: "
            "Invalid value: 2: must be 1")
    events = [event("MPIJob", "resnet", "ValidationError", text, 2)]
    s = summarize(mpijob(), [], events, NOW)
    assert s.status == JobStatus.PENDING
    assert s.lifecycle_step == ("Invalid job: spec.mpiReplicaSpecs[Launcher].replicas: "
                                "Invalid value: 2: must be 1")
    assert (s.reason, s.message) == ("ValidationError", text)


def test_an_old_validation_error_does_not_outlive_a_later_status():
    events = [event("MPIJob", "resnet", "ValidationError", "Found validation errors: x", 0)]
    s = summarize(mpijob(conditions=[created(seconds=50)]), [], events, NOW)
    assert not s.lifecycle_step.startswith("Invalid job")


def test_a_validation_error_of_another_job_is_not_ours():
    events = [event("MPIJob", "other", "ValidationError", "Found validation errors: x", 2)]
    assert summarize(mpijob(), [], events, NOW).lifecycle_step == "Waiting for the MPI Operator"


def test_unschedulable_workers_wait_for_resources():
    job = mpijob(conditions=[created()], status={"startTime": at(1)})
    pods = [launcher("resnet"),
            worker("resnet", 0, phase="Pending", unschedulable=INSUFFICIENT_GPU),
            worker("resnet", 1, phase="Pending", unschedulable=INSUFFICIENT_GPU)]
    s = summarize(job, pods, [], NOW)
    assert s.status == JobStatus.PENDING
    assert s.lifecycle_step == ("Waiting for resources: 0/2 Workers scheduled "
                                "(Insufficient nvidia.com/gpu)")
    assert (s.reason, s.message) == ("Unschedulable", INSUFFICIENT_GPU)
    w = s.workers[0]
    assert (w.status, w.reason, w.node, w.problem) == ("Pending", "Unschedulable", "", True)


def test_some_workers_scheduled_and_the_message_from_the_event():
    job = mpijob(workers=3, conditions=[created()])
    bare = worker("resnet", 2, phase="Pending", unschedulable="x")
    bare["status"]["conditions"][0].pop("message")
    pods = [launcher("resnet"), worker("resnet", 0), worker("resnet", 1), bare]
    events = [event("Pod", "resnet-worker-2", "FailedScheduling",
                    "0/6 nodes are available: 2 Insufficient nvidia.com/gpu, 4 node(s) didn't "
                    "match Pod's node affinity/selector. preemption: 0/6 nodes are available: "
                    "2 No preemption victims found for incoming pod, 4 Preemption is not "
                    "helpful for scheduling.", 20)]
    s = summarize(job, pods, events, NOW)
    assert s.lifecycle_step == (
        "Waiting for resources: 2/3 Workers scheduled (Insufficient nvidia.com/gpu, "
        "node(s) didn't match Pod's node affinity/selector)")


def test_an_unschedulable_launcher():
    job = mpijob(conditions=[created()])
    pods = [launcher("resnet", phase="Pending",
                     unschedulable="0/3 nodes are available: 3 Insufficient cpu."),
            worker("resnet", 0), worker("resnet", 1)]
    s = summarize(job, pods, [], NOW)
    assert s.lifecycle_step == "Waiting for resources: Launcher not scheduled (Insufficient cpu)"


def test_quota_refusal_of_worker_pods():
    text = ('worker pod created failed: pods "resnet-worker-0" is forbidden: exceeded quota: '
            "team-nlp-quota, requested: nvidia.com/gpu=1, used: nvidia.com/gpu=8, "
            "limited: nvidia.com/gpu=8")
    job = mpijob(conditions=[created()], status={"startTime": at(1)})
    s = summarize(job, [launcher("resnet", phase="Pending", state=None, ready=False)],
                  [event("MPIJob", "resnet", "MPIJobFailed", text, 3)], NOW)
    assert s.lifecycle_step == ("Quota exceeded: team-nlp-quota, requested: nvidia.com/gpu=1, "
                                "used: nvidia.com/gpu=8, limited: nvidia.com/gpu=8")
    assert (s.reason, s.message) == ("ExceededQuota", text)
    assert [(w.name, w.status, w.reason) for w in s.workers] == [
        ("resnet-worker-0", "Pending", "Not created"), ("resnet-worker-1", "Pending",
                                                        "Not created")]
    assert not any(w.problem for w in s.workers)


def test_a_quota_event_is_ignored_once_every_pod_exists():
    text = 'worker pod created failed: pods "x" is forbidden: exceeded quota: q, requested: a=1'
    pods = [launcher("resnet"), worker("resnet", 0), worker("resnet", 1, ready=False)]
    s = summarize(mpijob(conditions=[created()]), pods,
                  [event("MPIJob", "resnet", "MPIJobFailed", text, 3)], NOW)
    assert s.lifecycle_step == "Starting Workers (1/2 ready)"


def creating_pods(workers: int = 2):
    creating = {"phase": "Pending", "state": container_waiting("ContainerCreating"),
                "ready": False}
    return [launcher("resnet", **creating)] + [worker("resnet", i, **creating)
                                               for i in range(workers)]


def test_pulling_images():
    s = summarize(mpijob(conditions=[created()]), creating_pods(), None, NOW)
    assert s.lifecycle_step == "Pulling images (0/3 pods ready)"
    assert s.workers[0].reason == "ContainerCreating" and not s.workers[0].problem
    events = [event("Pod", "resnet-worker-0", "Pulling", 'Pulling image "horovod:1"', 8,
                    "Normal")]
    s = summarize(mpijob(conditions=[created()]), creating_pods(), events, NOW)
    assert s.lifecycle_step == "Pulling images (0/3 pods ready)"


def test_creating_containers_once_images_are_pulled():
    events = [event("Pod", f"resnet-{n}", reason, "", t, "Normal")
              for n in ("worker-0", "worker-1", "launcher-x7k2p")
              for reason, t in (("Pulling", 8), ("Pulled", 9))]
    s = summarize(mpijob(conditions=[created()]), creating_pods(), events, NOW)
    assert s.lifecycle_step == "Creating containers (0/3 pods ready)"


def test_starting_workers():
    pods = [launcher("resnet")] + [worker("resnet", i, ready=i < 3) for i in range(8)]
    s = summarize(mpijob(workers=8, conditions=[created()]), pods, [], NOW)
    assert s.lifecycle_step == "Starting Workers (3/8 ready)"
    assert (s.ready, s.total) == (4, 9)


def test_starting_workers_before_any_pod_exists():
    s = summarize(mpijob(conditions=[created()]), [], [], NOW)
    assert s.lifecycle_step == "Starting Workers (0/2 ready)"


def test_starting_the_launcher_once_workers_are_ready():
    pods = [worker("resnet", i) for i in range(4)] + [
        launcher("resnet", phase="Pending", state=container_waiting("ContainerCreating"),
                 ready=False)]
    s = summarize(mpijob(workers=4, conditions=[created()]), pods, [], NOW)
    assert s.lifecycle_step == "Starting launcher (4/5 pods ready)"
    # WaitForWorkersReady: no launcher pod yet
    s = summarize(mpijob(workers=4, conditions=[created()]), pods[:4], [], NOW)
    assert s.lifecycle_step == "Starting launcher (4/5 pods ready)"
    assert s.launcher.reason == "Not created"


def test_everything_ready_but_not_yet_running():
    pods = [launcher("resnet"), worker("resnet", 0), worker("resnet", 1)]
    s = summarize(mpijob(conditions=[created()]), pods, [], NOW)
    assert s.lifecycle_step == "Starting training (3/3 pods ready)"


def test_an_image_that_cannot_be_pulled():
    pull = {"phase": "Pending", "ready": False, "state": container_waiting(
        "ImagePullBackOff", 'Back-off pulling image "horovod:nope"')}
    pods = [launcher("resnet"), worker("resnet", 0, **pull), worker("resnet", 1, **pull)]
    s = summarize(mpijob(conditions=[created()]), pods, [], NOW)
    assert s.lifecycle_step == "Cannot pull image: Worker 0 ImagePullBackOff"
    assert s.reason == "ImagePullBackOff" and s.message == 'Back-off pulling image "horovod:nope"'


def test_a_crash_looping_launcher_while_starting():
    crash = launcher("resnet", ready=False, restarts=3,
                     state=container_waiting("CrashLoopBackOff", "back-off 40s restarting"),
                     last_state=container_terminated("Error", 1))
    pods = [crash, worker("resnet", 0), worker("resnet", 1, ready=False)]
    s = summarize(mpijob(conditions=[created()]), pods, [], NOW)
    assert s.lifecycle_step == "Starting with problems: Launcher CrashLoopBackOff"
    assert s.launcher.exit_code == 1 and s.launcher.restarts == 3 and s.restarts == 3


def test_mpi_lifecycle_steps_speak_the_product_vocabulary():
    steps = [
        summarize(mpijob(), [], [], NOW).lifecycle_step,
        summarize(mpijob(conditions=[created()]), creating_pods(), None, NOW).lifecycle_step,
        summarize(*oom_failed_job(), [], NOW).lifecycle_step,
        summarize(succeeded_job(), [], [], NOW).lifecycle_step,
    ]
    for step in steps:
        assert not MPI_WORDS.search(str(step)), step


# --- pods of the job ------------------------------------------------------------------

def test_only_this_jobs_pods_are_counted():
    pods = [launcher("resnet"), worker("resnet", 0), worker("resnet", 1),
            worker("resnet-2", 0),
            v1_pod("resnet", "pytorchjob-controller", "Worker", 0)]
    other_ns = worker("resnet", 5)
    other_ns["metadata"]["namespace"] = "elsewhere"
    s = summarize(mpijob(conditions=[created(), running()]), pods + [other_ns], [], NOW)
    assert [w.name for w in s.workers] == ["resnet-worker-0", "resnet-worker-1"]


def test_the_launcher_is_the_newest_launcher_pod_and_retries_count_as_restarts():
    old = launcher("resnet", suffix="aaaaa", phase="Failed", ready=False, created_at=5,
                   state=container_terminated("Error", 1))
    new = launcher("resnet", suffix="bbbbb", created_at=200, restarts=1)
    s = summarize(mpijob(conditions=[created(), running()]),
                  [new, old, worker("resnet", 0), worker("resnet", 1)], [], NOW)
    assert s.launcher.name == "resnet-launcher-bbbbb"
    assert s.restarts == 2


def test_job_pods_name_the_launcher_and_each_worker_once():
    old = launcher("resnet", suffix="aaaaa", phase="Failed", ready=False, created_at=5,
                   state=container_terminated("Error", 1))
    new = launcher("resnet", suffix="bbbbb", created_at=200)
    pods = [worker("resnet", 1), new, worker("resnet", 0), old, worker("resnet-2", 0),
            v1_pod("resnet", "pytorchjob-controller", "Worker", 3)]
    found = job_pods(MPIJOB, {"metadata": {"name": "resnet", "namespace": NS}}, pods)
    assert found == [
        JobPod("resnet-launcher-bbbbb", "Launcher", None, "Running", ("launcher",)),
        JobPod("resnet-worker-0", "Worker", 0, "Running", ("worker",)),
        JobPod("resnet-worker-1", "Worker", 1, "Running", ("worker",))]
    assert [(p.tag, p.container) for p in found] == [
        ("launcher", "launcher"), ("worker-0", "worker"), ("worker-1", "worker")]


def test_job_pods_leave_out_pods_not_created_yet():
    job = pytorchjob([pt_condition("Created", "True", 1), pt_condition("Running", "True", 60)])
    op = "pytorchjob-controller"
    pods = [v1_pod("bert", op, "Worker", 1), v1_pod("bert", op, "Master", 0)]
    assert [(p.role, p.index, p.tag) for p in job_pods(PYTORCHJOB, job, pods)] == [
        ("Master", 0, "master-0"), ("Worker", 1, "worker-1")]
    assert job_pods(MPIJOB, mpijob(conditions=[created(), running()]), []) == []
    assert JobPod("x", "Worker", 2, "Pending").container == ""


def test_replica_state_of_a_crash_looping_worker():
    p = worker("resnet", 3, restarts=4, ready=False,
               state=container_waiting("CrashLoopBackOff", "back-off 1m20s restarting failed"),
               last_state=container_terminated("Error", 2))
    r = replica_from_pod(MPIJOB, p)
    assert (r.role, r.index, r.status, r.reason) == ("Worker", 3, "Running", "CrashLoopBackOff")
    assert (r.exit_code, r.restarts, r.ready, r.problem) == (2, 4, False, True)
    assert r.message == "back-off 1m20s restarting failed"


def test_replica_state_of_a_terminating_and_a_succeeded_pod():
    r = replica_from_pod(MPIJOB, worker("resnet", 0, deleting=True))
    assert r.status == "Terminating" and not r.problem
    done = worker("resnet", 1, phase="Succeeded", ready=False,
                  state=container_terminated("Completed", 0, started=40, finished=400))
    r = replica_from_pod(MPIJOB, done)
    assert (r.status, r.reason, r.exit_code) == ("Succeeded", "Completed", 0)
    assert r.started == T0 + timedelta(seconds=40) and r.finished == T0 + timedelta(seconds=400)


def test_replica_state_of_a_failing_init_container():
    p = worker("resnet", 0, phase="Pending", ready=False)
    p["status"]["initContainerStatuses"] = [{
        "name": "fetch-data", "ready": False, "restartCount": 2,
        "state": container_waiting("CrashLoopBackOff"), "lastState": {}}]
    r = replica_from_pod(MPIJOB, p)
    assert r.reason == "Init:CrashLoopBackOff" and r.problem and r.restarts == 2


def test_a_running_pod_without_trouble_has_no_reason():
    r = replica_from_pod(MPIJOB, worker("resnet", 0))
    assert (r.status, r.reason, r.problem, r.ready) == ("Running", "", False, True)
    assert r.started == T0 + timedelta(seconds=30)


def test_scheduling_reasons_are_shortened():
    assert scheduling_reasons(INSUFFICIENT_GPU) == "Insufficient nvidia.com/gpu"
    assert scheduling_reasons("0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient "
                              "memory.") == "Insufficient cpu, Insufficient memory"
    assert scheduling_reasons("something else") == "something else"


# --- other kinds ----------------------------------------------------------------------

def pytorchjob(conditions, workers=3):
    template = {"spec": {"containers": [{"name": "pytorch", "image": "pt:2", "resources": {
        "limits": {"nvidia.com/gpu": 1}}}]}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "bert", "namespace": NS, "uid": "uid-bert",
                         "creationTimestamp": at(0)},
            "spec": {"pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": template},
                "Worker": {"replicas": workers, "restartPolicy": "OnFailure",
                           "template": template}}},
            "status": {"conditions": conditions, "startTime": at(5),
                       "replicaStatuses": {"Master": {"active": 1}, "Worker": {"active": 2}}}}


def pt_condition(kind, status, seconds):
    return condition(kind, status, f"PyTorchJob{kind}", f"PyTorchJob bert is {kind.lower()}.",
                     seconds)


def test_a_running_pytorchjob_lists_the_master_first():
    job = pytorchjob([pt_condition("Created", "True", 1), pt_condition("Running", "True", 60)])
    op = "pytorchjob-controller"
    pods = [v1_pod("bert", op, "Worker", 1), v1_pod("bert", op, "Worker", 0),
            v1_pod("bert", op, "Master", 0)]
    s = summarize(job, pods, [], NOW)
    assert s.kind is PYTORCHJOB and s.status == JobStatus.RUNNING
    assert s.launcher is None
    assert [(w.role, w.index, w.reason) for w in s.workers] == [
        ("Master", 0, ""), ("Worker", 0, ""), ("Worker", 1, ""), ("Worker", 2, "Not created")]
    assert s.workers[3].name == "bert-worker-2"
    assert (s.ready, s.total, s.workers_ready, s.workers_total, s.gpus) == (3, 4, 3, 4, 4)
    assert s.lifecycle_step == "Training (3/4 pods running)"


def test_a_restarting_pytorchjob_is_running():
    job = pytorchjob([pt_condition("Created", "True", 1), pt_condition("Running", "False", 60),
                      pt_condition("Restarting", "True", 70)])
    s = summarize(job, [], [], NOW)
    assert s.status == JobStatus.RUNNING and s.lifecycle_step == "Restarting (0/4 pods ready)"


def test_a_pytorchjob_the_operator_has_not_seen():
    job = pytorchjob([])
    s = summarize(job, [], [], NOW)
    assert s.lifecycle_step == "Waiting for the Training Operator"


def test_a_succeeded_tfjob():
    template = {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}}
    job = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
           "metadata": {"name": "mnist", "namespace": NS, "creationTimestamp": at(0)},
           "spec": {"runPolicy": {"cleanPodPolicy": "None"}, "tfReplicaSpecs": {
               "Worker": {"replicas": 2, "template": template},
               "PS": {"replicas": 1, "template": template},
               "Chief": {"replicas": 1, "template": template}}},
           "status": {"startTime": at(10), "completionTime": at(70), "conditions": [
               condition("Created", "True", "TFJobCreated", "", 1),
               condition("Running", "False", "TFJobRunning", "", 70),
               condition("Succeeded", "True", "TFJobSucceeded",
                         "TFJob team-nlp/mnist successfully completed.", 70)]}}
    done = {"phase": "Succeeded", "ready": False, "gpus": 0,
            "state": container_terminated("Completed", 0)}
    op = "tfjob-controller"
    pods = [v1_pod("mnist", op, "Worker", 1, **done), v1_pod("mnist", op, "PS", 0, **done),
            v1_pod("mnist", op, "Worker", 0, **done), v1_pod("mnist", op, "Chief", 0, **done)]
    s = summarize(job, pods, None, NOW)
    assert s.kind is TFJOB and s.status == JobStatus.SUCCEEDED
    assert s.lifecycle_step == "Completed in 1m 0s"
    # as the pages name them (a sentence said "PS 0" while the Topology said this)
    assert [w.label for w in s.workers] == ["Chief 0", "Parameter server 0", "Worker 0",
                                            "Worker 1"]
    assert (s.total, s.gpus) == (4, 0)


def trainjob(conditions=None, jobs_status=None):
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "llm", "namespace": NS, "creationTimestamp": at(0)},
            "spec": {"runtimeRef": {"name": "deepspeed-distributed"},
                     "trainer": {"numNodes": 2,
                                 "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}}},
            "status": {"conditions": conditions or [], "jobsStatus": jobs_status or []}}


def test_trainjob_statuses():
    complete = trainjob([condition("Complete", "True", "JobsCompleted", "", 300)])
    s = summarize(complete, [], [], NOW)
    assert s.kind is TRAINJOB and s.status == JobStatus.SUCCEEDED and s.gpus == 8
    suspended = trainjob([condition("Suspended", "True", "Suspended", "", 3)])
    assert summarize(suspended, [], [], NOW).status == JobStatus.SUSPENDED
    active = trainjob(jobs_status=[{"name": "node", "active": 1, "ready": 0}])
    assert summarize(active, [], [], NOW).status == JobStatus.RUNNING
    failed = trainjob([condition("Failed", "True", "JobFailed", "node failed", 30)])
    assert summarize(failed, [], [], NOW).lifecycle_step == "Failed: JobFailed"


def test_trainjob_pods_are_found_by_their_jobset():
    labels = {"jobset.sigs.k8s.io/jobset-name": "llm",
              "jobset.sigs.k8s.io/replicatedjob-name": "node",
              "batch.kubernetes.io/job-completion-index": "1"}
    p = pod("llm-node-0-1-abcde", labels, gpus=4)
    s = summarize(trainjob(jobs_status=[{"name": "node", "active": 1}]), [p], [], NOW)
    assert [(w.name, w.role, w.index) for w in s.workers] == [
        ("llm-node-0-0", "Worker", 0), ("llm-node-0-1-abcde", "Worker", 1)]
    # upstream's word for them, on the pages and in sentences; the one not created yet too
    assert [w.label for w in s.workers] == ["Node 0", "Node 1"]
    assert [p.label for p in job_pods(TRAINJOB, trainjob(), [p])] == ["Node 1"]


def test_summarize_refuses_what_is_not_a_training_job():
    with pytest.raises(ValueError, match="not a training job"):
        summarize({"apiVersion": "batch/v1", "kind": "Job"}, [], [], NOW)


def test_created_by_is_empty_when_unknown():
    s = summarize(mpijob(annotations={"note": "x"}), [], [], NOW)
    assert s.created_by == ""


# --- robustness ----------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_leaf = st.none() | st.booleans() | st.integers(-2, 9) | st.sampled_from(
    ["", "True", "False", "Running", "Failed", "Pending", "Succeeded", "OOMKilled", "worker",
     "launcher", "master", "0", "resnet", "2024-05-01T10:00:00Z", "garbage", "1", "16Gi"])
_json = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["metadata", "labels", "status", "phase", "conditions", "type", "reason",
                     "containerStatuses", "state", "waiting", "terminated", "exitCode",
                     "restartCount", "spec", "containers", "resources", "limits",
                     "nvidia.com/gpu", "nodeName", "name", "namespace", "replicas",
                     "training.kubeflow.org/job-name", "training.kubeflow.org/job-role",
                     "training.kubeflow.org/replica-index", "involvedObject", "message",
                     "Launcher", "Worker", "mpiReplicaSpecs", "startTime", "x"]),
    inner, max_size=5), max_leaves=30)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json, st.lists(_json, max_size=4), st.one_of(st.none(), st.lists(_json, max_size=3)),
       st.sampled_from([MPIJOB, PYTORCHJOB, TFJOB, TRAINJOB]))
def test_property_odd_objects_never_break_a_summary(body, pods, events, kind):
    job = body if isinstance(body, dict) else {"spec": body}
    job = {**job, "apiVersion": kind.api_version, "kind": kind.kind,
           "metadata": {"name": "resnet", "namespace": NS}}
    pods = [p if isinstance(p, dict) else {"status": p} for p in pods]
    events = None if events is None else [e if isinstance(e, dict) else {} for e in events]
    s = summarize(job, pods, events, NOW)
    assert s.lifecycle_step and s.status in set(JobStatus)

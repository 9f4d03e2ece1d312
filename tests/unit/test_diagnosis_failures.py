"""The diagnosis of failed jobs (odh.training.diagnosis), from captured objects."""

from __future__ import annotations

from odh.training.diagnosis import Action, Culprit, Usage, diagnose
from tests.unit.diagnosis_objects import (
    GPU_NODE,
    TEAM_QUOTA,
    condition,
    container_terminated,
    facts,
    failed_job,
    failed_launcher,
    pod_event,
    tail,
    with_memory,
    worker,
)
from tests.unit.training_objects import pod


def _fixes(diagnosis):
    return [s.fix for s in diagnosis.suggestions if s.action == Action.FIX]


# -- OOMKilled --------------------------------------------------------------------------------
def _oom_pods(name="gpt2"):
    return [failed_launcher(name, restarts=2),
            with_memory(worker(name, 2, phase="Failed",
                               state=container_terminated("OOMKilled", 137)), "48Gi"),
            worker(name, 0, phase="Running")]


def test_it_names_the_oom_killed_worker_not_the_operators_backoff_limit():
    job = failed_job()
    found = diagnose(facts(job, _oom_pods(), nodes=[GPU_NODE], quotas=[TEAM_QUOTA]))
    assert found.scenario == "oom-killed"
    assert found.headline == "Worker 2 ran out of memory and was killed (exit code 137)"
    assert found.culprit == Culprit.CONFIGURATION
    assert found.affected_labels == ["Worker 2"]
    # the operator's generic reason is kept, as the consequence it is
    assert any("BackoffLimitExceeded" in e.text and "consequence" in e.text
               for e in found.evidence)
    assert any("limit 48Gi" in e.text for e in found.evidence)


def test_oom_offers_the_next_memory_size_that_fits_the_quota_and_a_node():
    found = diagnose(facts(failed_job(), _oom_pods(), nodes=[GPU_NODE], quotas=[TEAM_QUOTA]))
    first = _fixes(found)[0]
    assert first.changes == {"memory_per_worker": "64Gi"}
    assert first.label == "Clone with 64Gi of memory per Worker (now 48Gi)"


def test_oom_memory_fix_skips_sizes_the_quota_cannot_hold():
    quota = {**TEAM_QUOTA, "spec": {"hard": {"requests.memory": "300Gi"}},
             "status": {"used": {"requests.memory": "0"}}}
    found = diagnose(facts(failed_job(), _oom_pods(), nodes=[GPU_NODE], quotas=[quota]))
    memory = [f for f in _fixes(found) if "memory_per_worker" in f.changes]
    # 4 Workers x 64Gi + 2Gi for the Launcher fits 300Gi; 96Gi would not
    assert memory[0].changes == {"memory_per_worker": "64Gi"}
    tight = {**quota, "spec": {"hard": {"requests.memory": "200Gi"}}}
    found = diagnose(facts(failed_job(), _oom_pods(), nodes=[GPU_NODE], quotas=[tight]))
    assert not [f for f in _fixes(found) if "memory_per_worker" in f.changes]


def test_oom_shows_the_peak_memory_from_prometheus():
    peak = 47.6 * 2**30
    found = diagnose(facts(failed_job(), _oom_pods(), nodes=[GPU_NODE],
                           usage=Usage(memory_peak={"gpt2-worker-2": peak})))
    assert any("Peak memory use 47.6Gi, 99% of its limit" in e.text and "almost all" in e.text
               for e in found.evidence)
    # the next size is past the peak with room to spare
    assert _fixes(found)[0].changes == {"memory_per_worker": "64Gi"}


def test_oom_halves_the_batch_size_named_on_the_command_line():
    found = diagnose(facts(failed_job(), _oom_pods(), nodes=[GPU_NODE]))
    batch = [f for f in _fixes(found) if "command" in f.changes]
    assert batch[0].changes["command"][-2:] == ["--batch-size", "32"]


def test_an_oom_on_one_worker_wins_over_the_launchers_generic_failure_and_its_log():
    pods = _oom_pods()
    launcher_log = tail(pods[0], [
        "[1,2]<stderr>:Traceback (most recent call last):",
        "mpirun noticed that process rank 2 with PID 88 on node gpt2-worker-2 exited on "
        "signal 9 (Killed).",
        "ssh: connect to host gpt2-worker-2.gpt2.team-nlp.svc port 22: Connection refused"])
    found = diagnose(facts(failed_job(), pods, logs=[launcher_log]))
    assert found.scenario == "oom-killed"


# -- CUDA out of memory -------------------------------------------------------------------------
CUDA_LINE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB. GPU 0 "
             "has a total capacity of 79.15 GiB of which 3.12 GiB is free.")


def test_cuda_out_of_memory_quotes_the_line_and_names_the_worker_of_the_rank():
    pods = [failed_launcher("llama"), worker("llama", 0), worker("llama", 1)]
    log = tail(pods[0], ["Epoch 1/10: loss 2.1",
                         "[1,1]<stderr>:Traceback (most recent call last):",
                         f"[1,1]<stderr>:{CUDA_LINE}",
                         "Primary job  terminated normally, but 1 process returned"])
    found = diagnose(facts(failed_job("llama", workers=2), pods, logs=[log], nodes=[GPU_NODE],
                           quotas=[TEAM_QUOTA]))
    assert found.scenario == "cuda-out-of-memory"
    assert found.headline == "Worker 1 ran out of GPU memory (CUDA out of memory)"
    assert found.evidence[0].text == CUDA_LINE
    assert any("12.00 GiB" in e.text for e in found.evidence)
    labels = [s.text for s in found.suggestions]
    assert labels[0] == "Clone with --batch-size 32 (now 64)"
    assert any("mixed precision" in text for text in labels)
    more = [f for f in _fixes(found) if "workers" in f.changes]
    assert more and more[0].changes["workers"] == 4
    assert more[0].changes["command"][:3] == ["mpirun", "-np", "4"]  # -np kept in step


# -- exit codes -----------------------------------------------------------------------------------
def test_command_not_found_names_the_program_and_offers_the_spelling_fix():
    command = ["mpirun", "-np", "2", "pyhton", "/workspace/run_squad.py"]
    pods = [failed_launcher("roberta", code=127), worker("roberta", 0)]
    log = tail(pods[0], ["/bin/sh: 1: pyhton: not found"])
    found = diagnose(facts(failed_job("roberta", workers=2, command=command), pods, logs=[log]))
    assert found.scenario == "command-not-found"
    assert found.headline == ("Launcher could not start its program: “pyhton” was not found "
                              "(exit code 127)")
    first = _fixes(found)[0]
    assert first.changes == {"command": ["mpirun", "-np", "2", "python",
                                         "/workspace/run_squad.py"]}
    assert any(f.focus == "command" for f in _fixes(found))


def test_a_start_error_without_a_log_is_command_not_found_too():
    launcher = failed_launcher("x", code=128)
    launcher["status"]["containerStatuses"][0]["state"] = {"terminated": {
        "exitCode": 128, "reason": "StartError",
        "message": 'failed to create containerd task: exec: "trian.sh": executable file not '
                   "found in $PATH"}}
    found = diagnose(facts(failed_job("x"), [launcher]))
    assert found.scenario == "command-not-found"
    assert "“trian.sh”" in found.headline


def test_not_executable_is_exit_126():
    pods = [failed_launcher("x", code=126)]
    log = tail(pods[0], ["/bin/sh: 1: /workspace/train.py: Permission denied"])
    found = diagnose(facts(failed_job("x"), pods, logs=[log]))
    assert found.scenario == "command-not-found"
    assert "is not executable (exit code 126)" in found.headline


def test_a_segfault_is_your_code_and_names_the_rank_worker():
    pods = [failed_launcher("bench", code=139), worker("bench", 0), worker("bench", 1)]
    log = tail(pods[0], ["[1,1]<stderr>:*** Process received signal ***",
                         "[1,1]<stderr>:Signal: Segmentation fault (11)",
                         "mpirun noticed that process rank 1 with PID 120 on node bench-worker-1 "
                         "exited on signal 11 (Segmentation fault)."])
    found = diagnose(facts(failed_job("bench", workers=2), pods, logs=[log]))
    assert found.scenario == "segfault"
    assert found.culprit == Culprit.CODE
    assert found.headline == "Worker 1 crashed with a segmentation fault (exit code 139)"


def test_a_plain_exit_quotes_the_last_error_lines_of_the_launcher():
    pods = [failed_launcher("x", code=1), worker("x", 0)]
    log = tail(pods[0], ["Epoch 3/10: loss 1.1", "Traceback (most recent call last):",
                         '  File "/workspace/train.py", line 96, in train',
                         "    loss.backward()",
                         "RuntimeError: CUDA error: an illegal memory access was encountered",
                         "-" * 74, "Primary job  terminated normally"])
    found = diagnose(facts(failed_job("x"), pods, logs=[log]))
    assert found.scenario == "exit-code"
    assert found.culprit == Culprit.CODE
    assert found.headline == ("Launcher failed with exit code 1: RuntimeError: CUDA error: an "
                              "illegal memory access was encountered")
    logs = found.log_lines
    assert logs[0] == "Traceback (most recent call last):"
    assert logs[-1].startswith("RuntimeError")


def test_without_the_log_it_says_the_exit_code_and_what_it_did_not_see():
    pods = [failed_launcher("x", code=1)]
    found = diagnose(facts(failed_job("x"), pods,
                           unread=["the log of Launcher (you may not read it)"]))
    assert found.headline == "Launcher exited with code 1"
    assert found.unread == ["the log of Launcher (you may not read it)"]


# -- MPI -----------------------------------------------------------------------------------------
def test_mpi_connection_refused_names_the_worker_and_offers_the_sidecar_fix():
    pods = [failed_launcher("clip"), worker("clip", 0), worker("clip", 1)]
    pods[1]["status"]["podIP"] = "10.128.2.7"
    pods[0]["status"]["podIP"] = "10.128.0.5"
    log = tail(pods[0], ["ssh: connect to host clip-worker-0.clip.team-nlp.svc port 22: "
                         "Connection refused",
                         "ORTE was unable to reliably start one or more daemons."])
    found = diagnose(facts(failed_job("clip", workers=2), pods, logs=[log],
                           network_policies=[]))
    assert found.scenario == "mpi-communication"
    assert found.headline == ("The Launcher could not reach Worker 0 over SSH (connection "
                              "refused)")
    assert found.culprit == Culprit.PLATFORM
    assert any("Launcher 10.128.0.5, Worker 0 10.128.2.7" in e.text for e in found.evidence)
    assert _fixes(found)[0].changes == {"disable_sidecar_injection": True}


def test_mpi_blocked_by_a_network_policy_names_it_and_is_configuration():
    pods = [failed_launcher("clip"), worker("clip", 0)]
    deny = {"metadata": {"name": "deny-all"}, "spec": {"podSelector": {},
                                                       "policyTypes": ["Ingress"]}}
    log = tail(pods[0], ["ssh: connect to host clip-worker-0.clip.team-nlp.svc port 22: "
                         "Connection timed out"])
    found = diagnose(facts(failed_job("clip", workers=1), pods, logs=[log],
                           network_policies=[deny]))
    assert found.headline.endswith("(connection timed out)")
    assert found.culprit == Culprit.CONFIGURATION
    assert any("deny-all" in e.text for e in found.evidence)


def test_the_sidecar_asked_for_is_named_in_the_evidence():
    job = failed_job("mesh", workers=1)
    for role in ("Launcher", "Worker"):
        job["spec"]["mpiReplicaSpecs"][role]["template"]["metadata"] = {
            "annotations": {"sidecar.istio.io/inject": "true"}}
    pods = [failed_launcher("mesh"), worker("mesh", 0)]
    log = tail(pods[0], ["kex_exchange_identification: read: Connection reset by peer",
                         "Connection reset by 10.128.2.7 port 22"])
    found = diagnose(facts(job, pods, logs=[log]))
    assert found.scenario == "mpi-communication"
    assert found.culprit == Culprit.CONFIGURATION
    assert any("Istio sidecar" in e.text for e in found.evidence)


# -- the platform ----------------------------------------------------------------------------------
def test_an_evicted_worker_is_the_platform():
    evicted = worker("x", 1, phase="Failed", reason="Evicted",
                     message="The node was low on resource: memory. Threshold quantity: 100Mi",
                     state=container_terminated("Error", 137))
    found = diagnose(facts(failed_job("x"), [failed_launcher("x"), evicted]))
    assert found.scenario == "evicted"
    assert found.headline == "Worker 1 was evicted: the node ran low on memory"
    assert found.culprit == Culprit.PLATFORM


def test_a_lost_node_is_the_platform():
    lost = worker("x", 1, phase="Failed", reason="NodeLost", node="gpu-a100-2",
                  message="Node gpu-a100-2 which was running pod x-worker-1 is unresponsive")
    events = [pod_event(lost, "NodeNotReady", "Node is not ready")]
    found = diagnose(facts(failed_job("x"), [failed_launcher("x"), lost], events))
    assert found.scenario == "node-lost"
    assert found.headline == "Worker 1's node gpu-a100-2 stopped responding"


def test_a_preempted_worker_is_capacity_even_when_the_pod_is_gone():
    gone = pod("x-worker-1", {"training.kubeflow.org/job-name": "x"})
    events = [pod_event(gone, "Preempted", "Preempted by pod 1234 on node gpu-a100-1")]
    found = diagnose(facts(failed_job("x"), [failed_launcher("x")], events))
    assert found.scenario == "preempted"
    assert found.culprit == Culprit.CAPACITY


def test_deadline_exceeded_says_the_deadline():
    job = failed_job("x", reason=condition("Failed", "True", "DeadlineExceeded",
                                           "Job was active longer than specified deadline",
                                           700))
    job["spec"]["runPolicy"]["activeDeadlineSeconds"] = 3600
    found = diagnose(facts(job, [failed_launcher("x", code=143)]))
    assert found.scenario == "deadline-exceeded"
    assert found.headline == "The job ran longer than its deadline of 1h 0m 0s and was stopped"


def test_a_failure_nothing_explains_is_we_could_not_tell_with_the_raw_reason():
    job = failed_job("x", reason=condition("Failed", "True", "MPIJobFailed", "odd", 700))
    found = diagnose(facts(job, []))
    assert found.scenario == "unknown"
    assert found.headline == "We could not tell why the job failed"
    assert found.raw_reason == "MPIJobFailed"
    assert next(s.action for s in found.suggestions) == Action.EVENTS


def test_a_succeeded_or_suspended_job_has_no_diagnosis():
    from tests.unit.training_objects import mpijob

    done = mpijob("ok", conditions=[condition("Succeeded", "True", "MPIJobSucceeded", "", 9)])
    assert diagnose(facts(done, [])) is None


def test_a_launcher_job_that_gave_up_with_no_pod_left_says_so_and_offers_a_retry():
    job = failed_job("x", reason=condition("Failed", "True", "BackoffLimitExceeded",
                                           "Job has reached the specified backoff limit", 700))
    found = diagnose(facts(job, []))
    assert found.scenario == "backoff-limit"
    assert found.headline == ("The Launcher Job reached its backoff limit: its pods failed "
                              "too many times")
    assert Action.RETRY in [s.action for s in found.suggestions]


def _launcher_oom(pod_name: str, labels: dict) -> dict:
    return with_memory(pod(pod_name, labels, phase="Failed", gpus=0, container="launcher",
                           state=container_terminated("OOMKilled", 137)), "2Gi")


def test_a_trainjob_s_launcher_out_of_memory_offers_no_launcher_fix_an_mpijob_s_does():
    from tests.unit.training_objects import at
    # an MPIJob's Launcher is sized in its spec: the clone can give it more memory
    mpi = diagnose(facts(failed_job("gpt2"), [_launcher_oom("gpt2-launcher-x7k2p", {
        "training.kubeflow.org/job-name": "gpt2", "training.kubeflow.org/job-role": "launcher",
        "training.kubeflow.org/operator-name": "mpi-operator"})],
        nodes=[GPU_NODE], quotas=[TEAM_QUOTA]))
    assert mpi.scenario == "oom-killed"
    assert any("launcher_memory" in f.changes for f in _fixes(mpi))
    # a TrainJob's runtime sizes its Launcher, and TrainJob refuses launcher fields
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "pi", "namespace": "team-nlp", "uid": "u-pi",
                     "creationTimestamp": at(0)},
        "spec": {"runtimeRef": {"name": "mpi-distributed"},
                 "trainer": {"image": "mpi-pi:1", "numNodes": 2,
                             "resourcesPerNode": {"limits": {"memory": "4Gi"}}}},
        "status": {"conditions": [condition("Failed", "True", "FailedJobs",
                                            "jobset failed due to one or more job failures "
                                            "(first failed job: pi-launcher-0)", 700)]}}
    found = diagnose(facts(trainjob, [_launcher_oom("pi-launcher-0-0-abcde", {
        "jobset.sigs.k8s.io/jobset-name": "pi",
        "jobset.sigs.k8s.io/replicatedjob-name": "launcher"})],
        nodes=[GPU_NODE], quotas=[TEAM_QUOTA]))
    assert found.scenario == "oom-killed"
    assert found.headline.startswith("Launcher ran out of memory")
    assert not [f for f in _fixes(found) if "launcher_memory" in f.fields
                or "launcher_cpu" in f.fields]

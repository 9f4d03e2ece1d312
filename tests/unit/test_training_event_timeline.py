"""A job's events as a timeline in words (odh/training/status/event_timeline.py)."""

from __future__ import annotations

from typing import Any

from odh.training.kinds import MPIJOB, PYTORCHJOB
from odh.training.status.event_timeline import build, of_type
from tests.unit.training_objects import NS, T0, event, launcher, v1_pod, worker

JOB = "bert"
LAUNCHER_POD = f"{JOB}-launcher-x7k2p"
IMAGE = "quay.io/opendatahub/horovod:0.28.1"


def normal(kind: str, name: str, reason: str, message: str, seconds: float,
           **extra: Any) -> dict:
    return event(kind, name, reason, message, seconds, kind_of_event="Normal") | extra


def start_up(pod: str, seconds: float, node: str = "gpu-a100-0", *, pulled: bool = True
             ) -> list[dict]:
    """The five events the scheduler and the kubelet write as a pod starts."""
    image = (f'Successfully pulled image "{IMAGE}" in 4.2s' if pulled
             else f'Container image "{IMAGE}" already present on machine')
    return [normal("Pod", pod, "Scheduled", f"Successfully assigned {NS}/{pod} to {node}",
                   seconds),
            normal("Pod", pod, "Pulling", f'Pulling image "{IMAGE}"', seconds + 1),
            normal("Pod", pod, "Pulled", image, seconds + 5),
            normal("Pod", pod, "Created", "Created container worker", seconds + 5),
            normal("Pod", pod, "Started", "Started container worker", seconds + 5)]


def texts(lines) -> list[str]:
    return [line.text or f"{line.who}: {line.reason}" for line in lines]


def test_it_folds_a_pods_start_up_into_one_line_in_our_words():
    lines = build(MPIJOB, JOB, start_up(f"{JOB}-worker-1", 10), [worker(JOB, 1)])
    [line] = lines
    assert line.folded and line.type == "Normal"
    assert line.text == ("Worker 1 started (placed on node gpu-a100-0, image pulled, "
                         "container created and started)")
    assert line.events == 5
    assert line.at == T0.replace(second=15)  # the last of them


def test_it_names_the_launcher_and_workers_without_their_pods():
    # pods the operator already removed are named from their names
    events = start_up(LAUNCHER_POD, 0, "cpu-0", pulled=False) + start_up(f"{JOB}-worker-0", 2)
    assert texts(build(MPIJOB, JOB, events)) == [
        "Launcher started (placed on node cpu-0, image already on the node, "
        "container created and started)",
        "Worker 0 started (placed on node gpu-a100-0, image pulled, container created and "
        "started)"]
    assert [line.who for line in build(MPIJOB, JOB, events)] == ["", ""]


def test_it_names_a_pod_by_its_labels_when_it_is_there():
    events = start_up("bert-ddp-master-0", 0)
    pods = [v1_pod("bert-ddp", "pytorchjob-controller", "Master", 0)]
    assert texts(build(PYTORCHJOB, "bert-ddp", events, pods))[0].startswith("Master 0 started")


def test_it_keeps_a_warning_as_its_own_line_with_the_clusters_words():
    oom = event("Pod", f"{JOB}-worker-2", "OOMKilling", "Memory cgroup out of memory", 60)
    lines = build(MPIJOB, JOB, [*start_up(f"{JOB}-worker-2", 0), oom])
    assert len(lines) == 2
    warning = lines[1]
    assert not warning.folded and warning.type == "Warning"
    assert (warning.who, warning.reason, warning.message) == (
        "Worker 2", "OOMKilling", "Memory cgroup out of memory")
    assert of_type(lines, "Warning") == [warning]
    assert of_type(lines, "Normal") == [lines[0]] and of_type(lines, "") == lines


def test_it_folds_identical_warnings_into_one_line_with_their_count():
    pod = f"{JOB}-worker-0"
    text = "0/7 nodes are available: 7 Insufficient nvidia.com/gpu."
    repeated = [event("Pod", pod, "FailedScheduling", text, 10) | {"count": 31},
                event("Pod", pod, "FailedScheduling", text, 400) | {"count": 4},
                event("Pod", f"{JOB}-worker-1", "FailedScheduling", text, 400)]
    lines = build(MPIJOB, JOB, repeated)
    assert [(line.who, line.times, line.events) for line in lines] == [
        ("Worker 0", 35, 2), ("Worker 1", 1, 1)]  # another pod: a line of its own
    assert lines[0].at == T0.replace(minute=6, second=40)


def test_it_keeps_the_jobs_and_kueues_events_and_orders_all_by_time():
    events = [
        *start_up(f"{JOB}-worker-0", 20),
        normal("MPIJob", JOB, "MPIJobCreated", f"MPIJob {NS}/{JOB} is created.", 1),
        # Kueue says Started about the job: not a pod's start-up
        normal("MPIJob", JOB, "Started", "Admitted by clusterQueue team-nlp-a100", 2),
        normal("Job", f"{JOB}-launcher", "SuccessfulCreate", f"Created pod: {LAUNCHER_POD}", 3),
        event("MPIJob", JOB, "MPIJobFailed", "MPIJob failed", 90),
    ]
    events.reverse()  # as the page has them: newest first
    assert texts(build(MPIJOB, JOB, events)) == [
        "Job: MPIJobCreated", "Job: Started", "Launcher Job: SuccessfulCreate",
        "Worker 0 started (placed on node gpu-a100-0, image pulled, container created and "
        "started)",
        "Job: MPIJobFailed"]


def test_it_orders_the_steps_of_one_second_as_they_happen():
    pod = f"{JOB}-worker-0"
    same_second = [normal("Pod", pod, "Killing", "Stopping container worker", 5),
                   normal("Pod", pod, "Started", "Started container worker", 5),
                   normal("Pod", pod, "Created", "Created container worker", 5)]
    assert texts(build(MPIJOB, JOB, same_second)) == [
        "Worker 0 started (container created and started)", "Worker 0: Killing"]


def test_a_restart_after_a_warning_is_a_line_of_its_own_that_says_how_often():
    pod = f"{JOB}-worker-1"
    events = [*start_up(pod, 0),
              event("Pod", pod, "BackOff", "Back-off restarting failed container", 30),
              normal("Pod", pod, "Created", "Created container worker", 40) | {"count": 3},
              normal("Pod", pod, "Started", "Started container worker", 40) | {"count": 3}]
    assert texts(build(MPIJOB, JOB, events)) == [
        "Worker 1 started (placed on node gpu-a100-0, image pulled, container created and "
        "started)",
        "Worker 1: BackOff",
        "Worker 1 started 3 times (container created and started)"]


def test_a_pod_still_starting_says_so():
    pod = f"{JOB}-worker-3"
    lines = build(MPIJOB, JOB, start_up(pod, 0)[:2], [worker(JOB, 3), launcher(JOB)])
    assert texts(lines) == ["Worker 3 is starting (placed on node gpu-a100-0, pulling the image)"]


def test_it_reads_events_k8s_io_events_too():
    newer = {"regarding": {"kind": "Pod", "name": f"{JOB}-worker-0"}, "reason": "Started",
             "note": "Started container worker", "type": "Normal",
             "eventTime": "2024-05-01T10:00:05.123456Z", "series": {"count": 2}}
    assert texts(build(MPIJOB, JOB, [newer])) == [
        "Worker 0 started 2 times (container started)"]


def test_no_events_make_no_timeline():
    assert build(MPIJOB, JOB, []) == []

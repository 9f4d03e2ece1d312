"""The signs told before a job ends (odh/training/signs.py): each names what it saw and what
to do, and one occurrence has one key (a new one only when it happens anew)."""

from __future__ import annotations

from datetime import timedelta

from odh.training import signs
from odh.training.logs.progress import Progress
from tests.unit.diagnosis_objects import (
    T0,
    container_terminated,
    facts,
    launcher,
    pending_job,
    running_job,
    tail,
    worker,
)
from tests.unit.training_objects import container_running

GIB = 1024 ** 3


def _summary(job, pods, seconds):
    return facts(job, pods, seconds=seconds).s


def test_pending_longer_than_n_minutes_is_one_occurrence_per_wait_and_n():
    job = pending_job("vit")
    summary = _summary(job, [], 31 * 60)
    assert signs.pending_sign(summary, None, T0 + timedelta(minutes=29), 30) is None
    sign = signs.pending_sign(summary, None, T0 + timedelta(minutes=31), 30)
    assert sign is not None and sign.signal == "pending"
    assert sign.headline.startswith("Pending for 31m")
    assert sign.at == summary.since + timedelta(minutes=30)
    later = signs.pending_sign(summary, None, T0 + timedelta(minutes=45), 30)
    assert later.key == sign.key  # the same wait: told once
    assert signs.pending_sign(summary, None, T0 + timedelta(minutes=45), 10).key != sign.key
    assert signs.pending_sign(_summary(running_job("bert"), [], 31 * 60), None,
                              T0 + timedelta(hours=2), 30) is None


def test_a_restart_is_told_per_pod_and_restart_in_the_diagnosis_words():
    job = running_job("bert")
    job["spec"]["runPolicy"]["backoffLimit"] = 3
    crashed = worker("bert", 1, restarts=2,
                     last_state=container_terminated("OOMKilled", 137, finished=500))
    pods = [launcher("bert"), worker("bert", 0), crashed]
    now = T0 + timedelta(seconds=800)
    found = signs.restart_signs(_summary(job, pods, 800), job, pods, now)
    assert [(s.signal, s.key) for s in found] == [("restart", "bert-worker-1#2")]
    sign = found[0]
    assert "Worker 1 crashed and restarted (retry 2 of 3)" in sign.headline
    assert "OOMKilled" in sign.headline and sign.at == T0 + timedelta(seconds=500)
    assert "suspend or delete the job" in sign.advice
    again = worker("bert", 1, restarts=3,
                   last_state=container_terminated("OOMKilled", 137, finished=700))
    pods = [launcher("bert"), worker("bert", 0), again]
    assert [s.key for s in signs.restart_signs(_summary(job, pods, 800), job, pods, now)] == [
        "bert-worker-1#3"]


def test_a_hang_is_the_diagnosis_possible_hang_once_per_silence():
    job = running_job("bert")
    pod = launcher("bert")
    pods = [pod, worker("bert", 0), worker("bert", 1)]
    quiet = facts(job, pods, logs=[tail(pod, ["epoch 1/10", "step 40/100"], start=100)],
                  seconds=900)
    sign = signs.hang_sign(quiet)
    assert sign is not None and sign.headline.startswith("Possible hang")
    assert "delete the job and retry it" in sign.advice
    talking = facts(job, pods, logs=[tail(pod, ["epoch 1/10", "step 90/100"], start=880)],
                    seconds=900)
    assert signs.hang_sign(talking) is None
    later = facts(job, pods, logs=[tail(pod, ["step 90/100"], start=880)], seconds=1600)
    assert signs.hang_sign(later).key != sign.key  # a new silence, told anew


def test_memory_over_90_percent_of_the_limit_for_the_window_is_an_early_warning():
    job = running_job("bert")
    w0, w1 = worker("bert", 0), worker("bert", 1)
    for pod in (w0, w1):
        pod["spec"]["containers"][0]["resources"]["limits"]["memory"] = "16Gi"
    young = worker("bert", 2, state=container_running(700))
    young["spec"]["containers"][0]["resources"]["limits"]["memory"] = "16Gi"
    pods = [launcher("bert"), w0, w1, young]
    now = T0 + timedelta(seconds=800)
    lowest = {("bert-worker-0", "worker"): 15.2 * GIB, ("bert-worker-1", "worker"): 9 * GIB,
              ("bert-worker-2", "worker"): 15.9 * GIB}
    found = signs.memory_signs(_summary(job, pods, 800), pods, lowest, now, window=300)
    started = (T0 + timedelta(seconds=30)).isoformat()  # its container's run
    assert [s.key for s in found] == [f"bert-worker-0/worker@{started}"]
    assert "Worker 0 has used over 95% of its memory limit for 5m" in found[0].headline
    assert "(15.2Gi of 16Gi)" in found[0].headline
    assert "more memory per Worker" in found[0].advice


def test_an_eta_past_the_deadline_is_an_early_warning():
    job = running_job("bert")
    job["spec"]["runPolicy"]["activeDeadlineSeconds"] = 3600
    summary = _summary(job, [launcher("bert")], 1800)
    now = T0 + timedelta(seconds=1800)
    slow = Progress(current=3, total=10, unit="epoch", fraction=0.3, eta_seconds=4000,
                    as_of=now)
    sign = signs.deadline_sign(summary, job, slow, now)
    assert sign is not None and sign.key == summary.started.isoformat()
    assert "needs 1h 6m" in sign.headline and "deadline of 1h" in sign.headline
    assert "activeDeadlineSeconds" in sign.advice
    fast = Progress(current=9, total=10, unit="epoch", fraction=0.9, eta_seconds=600,
                    as_of=now)
    assert signs.deadline_sign(summary, job, fast, now) is None
    del job["spec"]["runPolicy"]["activeDeadlineSeconds"]
    assert signs.deadline_sign(summary, job, slow, now) is None

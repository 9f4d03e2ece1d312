"""The watcher's recorder of what finished jobs used: each history record it is told of gets
the Workers' use from Prometheus, asked again while Prometheus does not answer; a job
without a recorded run, or a dashboard without Prometheus, asks nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from odh.training import errors
from odh.training.metrics.usage import Usage
from odh.training.status.summarize import summarize
from tests.waiting import wait_until
from training.live.hub.keepers.transitions import Sighting
from training.live.hub.keepers.usage import ATTEMPTS, UsageRecorder

GI = 2 ** 30


def _finished(name: str = "bert") -> Sighting:
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": {"name": name, "namespace": "team-nlp", "uid": f"uid-{name}",
                        "creationTimestamp": "2026-05-01T10:00:00Z"},
           "spec": {"mpiReplicaSpecs": {}},
           "status": {"startTime": "2026-05-01T10:00:05Z",
                      "completionTime": "2026-05-01T11:00:05Z",
                      "conditions": [{"type": "Succeeded", "status": "True", "reason": "x",
                                      "lastTransitionTime": "2026-05-01T11:00:05Z"}]}}
    return Sighting.of(job, summarize(job, [], [], datetime(2026, 5, 1, 12, tzinfo=UTC)))


class Prometheus:
    """Answers after `silent` refusals: Worker 1 peaked at 41Gi, its GPU 80% busy."""

    def __init__(self, silent: int = 0) -> None:
        self.silent, self.asked, self.closed = silent, [], 0

    def query(self, promql: str, namespace: str, at: float | None = None) -> list:
        self.asked.append((namespace, at))
        if self.silent:
            self.silent -= 1
            raise errors.ClusterUnavailable("Prometheus did not answer in time.")
        if "working_set" in promql:
            return [{"metric": {"pod": "bert-worker-0"}, "value": [0, str(30 * GI)]},
                    {"metric": {"pod": "bert-worker-1"}, "value": [0, str(41 * GI)]}]
        return [{"metric": {"pod": "bert-worker-0"}, "value": [0, "80"]}]

    def close(self) -> None:
        self.closed += 1


def _recorder(prometheus):
    written: dict[str, Usage] = {}
    recorder = UsageRecorder(prometheus=lambda: prometheus,
                             write=lambda uid, usage: written.__setitem__(uid, usage),
                             retry_seconds=0.01)
    return recorder, written


def test_a_finished_job_gets_its_workers_use_asked_at_its_finish():
    prometheus = Prometheus()
    recorder, written = _recorder(prometheus)
    recorder.start()
    try:
        recorder.finished(_finished())
        wait_until(lambda: written, 10, message="the use written")
    finally:
        recorder.stop()
    assert written == {"uid-bert": Usage(peak_memory_bytes=41.0 * GI, gpu_utilization=80.0)}
    finish = datetime(2026, 5, 1, 11, 0, 5, tzinfo=UTC).timestamp()
    assert prometheus.asked[0] == ("team-nlp", finish)
    assert prometheus.closed == 1 and recorder.stats()["recorded"] == 1


def test_prometheus_that_does_not_answer_is_asked_again_then_given_up():
    recorder, written = _recorder(Prometheus(silent=1))
    recorder.start()
    try:
        recorder.finished(_finished())
        wait_until(lambda: written, 10, message="the use written on the second try")
    finally:
        recorder.stop()
    assert recorder.stats()["errors"] == 1

    recorder, written = _recorder(Prometheus(silent=ATTEMPTS + 5))
    recorder.start()
    try:
        recorder.finished(_finished())
        wait_until(lambda: recorder.stats()["errors"] == ATTEMPTS and recorder.idle(), 10,
                   message=lambda: str(recorder.stats()))
    finally:
        recorder.stop()
    assert written == {}


def test_without_prometheus_nothing_is_asked():
    recorder, written = _recorder(None)
    recorder._record(_finished(), 1)
    assert written == {} and recorder.stats()["errors"] == 0

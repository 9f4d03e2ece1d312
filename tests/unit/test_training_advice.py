"""Advice from history: which past runs are like a job, and what they suggest (or, with
too little history, do not)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from odh.training.advice.advise import (
    MEMORY_FIELD,
    WORKERS_FIELD,
    advise,
    nice_up,
    worker_counts,
)
from odh.training.advice.runs import (
    MAX_RUNS,
    PastRun,
    image_repository,
    is_similar,
    past_run,
)
from odh.training.metrics.usage import read_usage, usage_queries
from odh.training.spec import build_manifest, new_spec

GI = 2 ** 30
IMAGE = "quay.io/team/bert:v3"
COMMAND = ("mpirun", "python", "/train.py", "--epochs", "3")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def run(n: int = 0, *, workers: int = 2, limit: float | None = 64 * GI,
        peak: float | None = 40 * GI, outcome: str = "Succeeded", cause: str = "",
        duration: float | None = 3600.0, gpu: float | None = 85.0, image: str = IMAGE,
        command: tuple[str, ...] = COMMAND, kind: str = "MPIJob") -> PastRun:
    return PastRun(name=f"bert-{n}", kind=kind, image=image, command=command,
                   workers=workers, memory_limit_bytes=limit, gpus_per_worker=1,
                   outcome=outcome, cause_reason=cause, duration_seconds=duration,
                   peak_memory_bytes=peak, gpu_utilization=gpu,
                   finished=T0 + timedelta(hours=n))


def draft(**fields):
    values = {"name": "bert-new", "namespace": "team-nlp", "image": IMAGE,
              "command": list(COMMAND), "workers": 2, "memory_per_worker": "64Gi",
              "gpus_per_worker": 1}
    values.update(fields)
    return new_spec(**values)


# -- similar -------------------------------------------------------------------------------
def test_a_run_of_the_same_image_repository_and_command_is_similar_whatever_its_tag():
    assert is_similar(run(image="quay.io/team/bert:v1"), draft())
    assert is_similar(run(image="quay.io/team/bert@sha256:abc"), draft())
    assert is_similar(run(command=("mpirun  python", "/train.py --epochs 3")), draft())


def test_another_command_image_or_kind_is_not_similar():
    assert not is_similar(run(command=("mpirun", "python", "/train.py", "--epochs", "9")),
                          draft())
    assert not is_similar(run(image="quay.io/team/gpt:v3"), draft())
    assert not is_similar(run(kind="PyTorchJob"), draft())
    assert not is_similar(run(), draft(image=""))


def test_a_registry_port_is_not_a_tag():
    assert image_repository("registry:5000/team/bert") == "registry:5000/team/bert"
    assert image_repository("registry:5000/team/bert:v2") == "registry:5000/team/bert"


def test_no_similar_run_gives_no_advice():
    assert advise([], draft()) is None
    assert advise([run(image="quay.io/other/x:1"), run(1, kind="TFJob")], draft()) is None


def test_only_the_newest_runs_count():
    runs = [run(n) for n in range(MAX_RUNS + 5)]
    advice = advise(runs, draft())
    assert len(advice.runs) == MAX_RUNS
    assert advice.runs[0].name == f"bert-{MAX_RUNS + 4}"


# -- memory --------------------------------------------------------------------------------
def test_runs_that_peaked_at_41gi_make_48gi_enough():
    advice = advise([run(0, peak=38 * GI), run(1, peak=41 * GI)], draft())
    assert "Similar runs peaked at 41Gi per Worker: 48Gi is enough." in advice.sentences
    assert advice.memory_per_worker == "48Gi"
    assert advice.changes[MEMORY_FIELD] == "48Gi"
    assert advice.suggestion(MEMORY_FIELD).label == "Use 48Gi per Worker"


def test_one_measured_run_suggests_no_memory():
    advice = advise([run(0, peak=41 * GI), run(1, peak=None)], draft())
    assert advice is not None and advice.memory_per_worker is None
    assert not any("peaked" in s for s in advice.sentences)


def test_a_job_that_asks_about_enough_is_not_offered_a_change():
    advice = advise([run(0, peak=38 * GI), run(1, peak=41 * GI)],
                    draft(memory_per_worker="52Gi"))
    assert advice.memory_per_worker is None
    assert "Similar runs peaked at 41Gi per Worker: 48Gi is enough." in advice.sentences


def test_a_job_that_asks_for_too_little_is_offered_more():
    advice = advise([run(0, peak=38 * GI), run(1, peak=41 * GI)],
                    draft(memory_per_worker="32Gi"))
    assert advice.memory_per_worker == "48Gi"


def test_ooms_at_a_limit_raise_the_suggestion_above_it():
    runs = [run(0, limit=32 * GI, peak=32 * GI, outcome="Failed", cause="OOMKilled"),
            run(1, limit=32 * GI, peak=32 * GI, outcome="Failed", cause="OOMKilled")]
    advice = advise(runs, draft(memory_per_worker="32Gi"))
    assert advice.oom_killed == 2
    assert "2 of them were OOMKilled." in advice.sentences
    assert "Similar runs were OOMKilled at 32Gi per Worker: ask for 48Gi." in advice.sentences
    assert advice.memory_per_worker == "48Gi"


def test_a_failure_that_was_no_oom_tells_nothing_of_memory():
    runs = [run(0, peak=41 * GI), run(1, peak=2 * GI, outcome="Failed", cause="Error")]
    advice = advise(runs, draft())
    assert advice.memory_per_worker is None and advice.oom_killed == 0


def test_sizes_are_rounded_up_to_what_people_ask_for():
    assert nice_up(41 * GI * 1.15) == 48 * GI
    assert nice_up(3.2 * GI) == 4 * GI
    assert nice_up(0.3 * GI) == 512 * 2 ** 20
    assert nice_up(100 * GI) == 112 * GI


def test_rows_show_peak_memory_against_the_limit():
    advice = advise([run(0, peak=32 * GI, limit=64 * GI, gpu=87.4)], draft())
    row = advice.rows[0]
    assert row.memory == "32Gi of 64Gi (50%)"
    assert row.gpu == "87%" and row.duration == "1h 0m 0s" and row.workers == 2


# -- Workers -------------------------------------------------------------------------------
def test_four_workers_finishing_faster_than_two_are_suggested():
    runs = [run(0, workers=2, duration=3600), run(1, workers=2, duration=3700),
            run(2, workers=4, duration=2000), run(3, workers=4, duration=2100)]
    advice = advise(runs, draft(workers=2))
    assert advice.workers == 4
    assert "4 Workers finished 1.8x faster than 2." in advice.sentences
    assert advice.suggestion(WORKERS_FIELD).label == "Use 4 Workers"
    assert [(c.workers, c.runs) for c in advice.by_workers] == [(2, 2), (4, 2)]


def test_one_run_of_another_size_gives_no_worker_advice():
    runs = [run(0, workers=2, duration=3600), run(1, workers=2, duration=3700),
            run(2, workers=4, duration=1000)]
    assert advise(runs, draft(workers=2)).workers is None


def test_no_runs_of_the_jobs_own_size_give_no_worker_advice():
    runs = [run(0, workers=4, duration=2000), run(1, workers=4, duration=2100),
            run(2, workers=8, duration=1000), run(3, workers=8, duration=1100)]
    assert advise(runs, draft(workers=2)).workers is None


def test_fewer_workers_as_fast_are_suggested():
    runs = [run(0, workers=4, duration=2000), run(1, workers=4, duration=2000),
            run(2, workers=8, duration=1900), run(3, workers=8, duration=1950)]
    advice = advise(runs, draft(workers=8))
    assert advice.workers == 4
    assert any(s.startswith("4 Workers finished as fast as 8") for s in advice.sentences)


def test_failed_runs_do_not_time_a_worker_count():
    runs = [run(0, workers=4, duration=100, outcome="Failed"),
            run(1, workers=4, duration=100, outcome="Failed")]
    assert worker_counts(runs) == []


# -- GPUs ------------------------------------------------------------------------------------
def test_idle_gpus_are_told():
    advice = advise([run(0, gpu=30), run(1, gpu=36)], draft())
    assert any(s.startswith("Their GPUs were busy 33% of the time on average: they mostly "
                            "waited") for s in advice.sentences)


# -- from records and from Prometheus ------------------------------------------------------
def test_a_history_record_becomes_a_past_run():
    manifest = build_manifest(draft(name="bert-1", workers=3, memory_per_worker="40Gi"))
    found = past_run({"name": "bert-1", "spec": manifest, "outcome": "Failed",
                      "cause_reason": "OOMKilled", "duration_seconds": 60.0,
                      "peak_memory_bytes": 40.0 * GI, "gpu_utilization": None})
    assert found.oom_killed and found.workers == 3
    assert found.memory_limit_bytes == 40 * GI and found.image == IMAGE
    assert past_run({"spec": {"kind": "Pod"}}) is None


class Answers:
    """A Prometheus that answers instant queries from a table (the queries are checked)."""

    def __init__(self, memory: list, gpu: list) -> None:
        self.memory, self.gpu, self.asked = memory, gpu, []

    def query(self, promql: str, namespace: str, at: float | None = None) -> list:
        self.asked.append((promql, namespace, at))
        return self.memory if "working_set" in promql else self.gpu


def _sample(pod: str, value: float) -> dict:
    return {"metric": {"pod": pod}, "value": [0, str(value)]}


def test_usage_is_the_highest_workers_peak_and_the_gpus_mean_leaving_the_launcher_out():
    kind = draft().kind
    prom = Answers([_sample("bert-launcher-abcde", 90 * GI), _sample("bert-worker-0", 30 * GI),
                    _sample("bert-worker-1", 41 * GI)],
                   [_sample("bert-worker-0", 80), _sample("bert-worker-1", 90)])
    usage = read_usage(prom, "team-nlp", kind, "bert", 1000.0, 4600.0)
    assert usage.peak_memory_bytes == 41 * GI and usage.gpu_utilization == 85.0
    memory_q, gpu_q = usage_queries("team-nlp", kind, "bert", 3600)
    assert memory_q.startswith("max_over_time(container_memory_working_set_bytes{")
    assert memory_q.endswith("[61m])") and gpu_q.startswith("avg_over_time(DCGM_FI_DEV_GPU_UTIL")
    assert prom.asked[0][1:] == ("team-nlp", 4600.0)


@pytest.mark.parametrize("memory", [[], [_sample("bert-worker-0", float("nan"))]])
def test_no_series_is_no_usage(memory):
    usage = read_usage(Answers(memory, []), "team-nlp", draft().kind, "bert", 0.0, 10.0)
    assert not usage.known

"""Jobs side by side (odh.training.status.compare): settings as rows, what differs, similar runs."""

from __future__ import annotations

from odh.training.status.compare import (
    compare,
    differences,
    progress_over_time,
    settings_of,
    similar_to,
)
from tests.unit.diagnosis_objects import failed_job


def _job(name="a", memory="48Gi", image="quay.io/x/train:1", script="/w/train.py"):
    job = failed_job(name, memory=memory, command=["mpirun", "python", script])
    for role in ("Launcher", "Worker"):
        job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["containers"][0]["image"] = image
    return job


def test_the_rows_are_the_wizards_fields_and_the_differences_are_marked():
    rows = compare([settings_of(_job("a")), settings_of(_job("b", memory="64Gi"))])
    memory = next(r for r in rows if r.key == "memory_per_worker")
    assert memory.label == "Memory per worker"
    assert memory.values == ("48Gi", "64Gi") and memory.differs
    assert not next(r for r in rows if r.key == "image").differs
    assert differences(settings_of(_job("a")), settings_of(_job("b", memory="64Gi"))) == \
        ["Memory per worker 64Gi"]


def test_similar_runs_share_the_image_repository_and_the_script():
    mine = _job("failed", memory="48Gi")
    candidates = [("u1", _job("other-script", script="/w/eval.py")),
                  ("u2", _job("same-more-memory", memory="96Gi", image="quay.io/x/train:2")),
                  ("u3", _job("same", memory="48Gi"))]
    found = similar_to(mine, candidates)
    assert [ident for ident, _diffs in found] == ["u3", "u2"]  # fewest differences first
    assert found[1][1] == ["Training image quay.io/x/train:2", "Worker image quay.io/x/train:2",
                           "Memory per worker 96Gi"]


def test_progress_over_time_is_minutes_since_the_start_and_percent_done():
    lines = ["2024-05-01T10:01:00Z Epoch 1/4: loss 2.0",
             "2024-05-01T10:02:00Z Epoch 2/4: loss 1.0"]
    started = 1714557600.0  # 2024-05-01T10:00:00Z
    assert progress_over_time(lines, started) == [(1.0, 25.0), (2.0, 50.0)]

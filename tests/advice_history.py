"""A project's history of similar runs, for the tests of the advice from history: finished
MPIJobs of one image and command, as the watcher records them (with what their Workers
used), written straight into the dashboard's database.

Two runs with 2 Workers of 64Gi (peaks 38Gi and 41Gi, about an hour each) and two with 4
(about 33 minutes): "Similar runs peaked at 41Gi per Worker: 48Gi is enough." and "4
Workers finished 1.8x faster than 2."
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

IMAGE = "quay.io/opendatahub/advice-demo:1.0"
COMMAND = "mpirun python /workspace/advice_train.py --epochs 3"
GI = 2 ** 30
RUNS = ((2, 38, 3600), (2, 41, 3700), (4, 37, 2000), (4, 39, 2100))


def seed(namespace: str, prefix: str = "advice-run") -> list[str]:
    """The four runs in `namespace` (a project of that name, whatever its uid); their uids."""
    from odh.training.spec import build_manifest, new_spec
    from training.models import JobHistory

    uids = []
    now = datetime.now(UTC)
    for i, (workers, peak, seconds) in enumerate(RUNS):
        name = f"{prefix}-{i}"
        spec = new_spec(name=name, namespace=namespace, image=IMAGE, command=COMMAND.split(),
                        workers=workers, cpu_per_worker="4", memory_per_worker="64Gi",
                        gpus_per_worker=1)
        finished = now - timedelta(hours=10 - i)
        record, _written = JobHistory.record_once(
            uid=str(uuid.uuid4()), namespace=namespace, kind="MPIJob", name=name,
            outcome="Succeeded", created_by="alice", spec=build_manifest(spec),
            started=finished - timedelta(seconds=seconds), finished=finished,
            duration_seconds=float(seconds), gpu_hours=workers * seconds / 3600)
        JobHistory.objects.filter(pk=record.pk).update(peak_memory_bytes=float(peak * GI),
                                                       gpu_utilization=88.0)
        uids.append(record.uid)
    return uids

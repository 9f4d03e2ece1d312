"""Example 3 of the plan: follow a job's status: its phase and how many Workers run.

    python examples/status_loop.py

`job.watch()` yields each new status as the cluster reports it (a watch, not polling),
and ends once the job has finished.
"""

import os

from odh.training import MPIJob, ResourceSpec

job = MPIJob(
    name=os.environ.get("ODH_JOB_NAME", "status-demo"),
    namespace=os.environ.get("ODH_NAMESPACE"),
    workers=2,
    image=os.environ.get("ODH_IMAGE", "quay.io/opendatahub/horovod-mnist:1.0"),
    command=["horovodrun", "-np", "2", "python", "train_mnist.py"],
    worker_resources=ResourceSpec(cpu="1", memory="2Gi"),
).create()

for status in job.watch(timeout=3600):
    print(f"Phase: {status.phase}, Workers running: {status.workers_running}/"
          f"{status.workers_total}", flush=True)

final = job.status()
print(f"Final: {final.phase} after {final.duration_text}")

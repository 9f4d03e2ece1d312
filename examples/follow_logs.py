"""Example 4 of the plan: stream a Worker's log while the job runs.

    python examples/follow_logs.py

Lines come as they are written; a connection that drops is picked up again without
losing or repeating a line. The stream ends when the Worker's container ends.
"""

import os

from odh.training import MPIJob, ResourceSpec

job = MPIJob(
    name=os.environ.get("ODH_JOB_NAME", "logs-demo"),
    namespace=os.environ.get("ODH_NAMESPACE"),
    workers=2,
    image=os.environ.get("ODH_IMAGE", "quay.io/opendatahub/horovod-mnist:1.0"),
    command=["horovodrun", "-np", "2", "python", "train_mnist.py"],
    worker_resources=ResourceSpec(cpu="1", memory="2Gi"),
).create()

# the Worker's pod exists once the job runs
for status in job.watch(timeout=600):
    if status.workers_running or status.is_finished:
        break

# Worker 1's lines as they are written, until its container ends (when training is over,
# the operator stops the Workers); then the Launcher's log, which stays readable
for line in job.get_logs(component="worker", worker_id=1, follow=True):
    print(line, flush=True)
print("--- launcher ---")
for line in job.get_logs(component="launcher"):
    print(line)

"""Example 1 of the plan: create an MPIJob, wait for it, print how long it ran.

    KUBECONFIG=~/.kube/config python examples/basic_create.py

ODH_NAMESPACE (default: the kubeconfig context's project), ODH_JOB_NAME and ODH_IMAGE
change the names; everything else is as the plan writes it.
"""

import os

from odh.training import MPIJob, ResourceSpec

job = MPIJob(
    name=os.environ.get("ODH_JOB_NAME", "mnist-training"),
    namespace=os.environ.get("ODH_NAMESPACE"),
    workers=4,
    image=os.environ.get("ODH_IMAGE", "quay.io/opendatahub/horovod-mnist:1.0"),
    command=["horovodrun", "-np", "4", "python", "train_mnist.py"],
    worker_resources=ResourceSpec(cpu="1", memory="2Gi", gpus=0),
)

job.create(wait=True, timeout=3600)
print(f"Job completed in {job.status().duration:.0f}s")

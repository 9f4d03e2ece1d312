"""Example 2 of the plan: a pipeline step that runs a training job and fails the step,
with the job's own words, when the job fails.

    python examples/pipeline_step.py && echo "next step"

A failed job raises JobFailedError: its message is the dashboard's diagnosis ("Worker 1
ran out of memory and was killed (exit code 137)"), `logs` the lines it rests on,
`suggestions` what to do.
"""

import logging
import os
import sys

from odh.training import JobFailedError, MPIJob, ResourceSpec

log = logging.getLogger("pipeline.train")


def train_step(name: str, **job_options) -> float:
    job = MPIJob(
        name=name,
        namespace=os.environ.get("ODH_NAMESPACE"),
        workers=2,
        image=os.environ.get("ODH_IMAGE", "quay.io/opendatahub/bert-finetune:1.0"),
        command=["horovodrun", "-np", "2", "python", "finetune.py"],
        worker_resources=ResourceSpec(cpu="1", memory="2Gi"),
        **job_options,
    )
    try:
        job.create(wait=True, timeout=3600)
    except JobFailedError as e:
        log.error("Training failed: %s", e.message)
        for line in e.logs:
            log.error("  %s", line)
        for suggestion in e.suggestions:
            log.error("What to do: %s", suggestion)
        raise
    return job.status().duration


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        seconds = train_step(os.environ.get("ODH_JOB_NAME", "pipeline-train"))
    except JobFailedError:
        sys.exit(1)
    log.info("Training took %.0fs", seconds)

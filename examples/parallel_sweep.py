"""The plan's post-MVP example: ten jobs launched and awaited together with AsyncMPIJob.

    python examples/parallel_sweep.py

Each job is created, then all are awaited with asyncio.gather; a job that fails comes
back as its JobFailedError instead of stopping the others.
"""

import asyncio
import os

from odh.training import AsyncMPIJob, JobFailedError, ResourceSpec

PREFIX = os.environ.get("ODH_JOB_NAME", "sweep")


async def sweep(count: int = 10) -> int:
    jobs = [AsyncMPIJob(name=f"{PREFIX}-{i}", namespace=os.environ.get("ODH_NAMESPACE"),
                        workers=1,
                        image=os.environ.get("ODH_IMAGE", "quay.io/opendatahub/bert:1.0"),
                        command=["horovodrun", "-np", "1", "python", "train.py",
                                 f"--lr=0.00{i + 1}"],
                        worker_resources=ResourceSpec(cpu="500m", memory="1Gi"),
                        launcher_resources=ResourceSpec(cpu="250m", memory="512Mi"))
            for i in range(count)]
    await asyncio.gather(*(job.create() for job in jobs))
    results = await asyncio.gather(*(job.wait_for_completion(timeout=3600) for job in jobs),
                                   return_exceptions=True)
    failed = 0
    for job, result in zip(jobs, results, strict=True):
        if isinstance(result, JobFailedError):
            failed += 1
            print(f"{job.name}: failed: {result.message}")
        elif isinstance(result, BaseException):
            raise result
        else:
            print(f"{job.name}: {result.phase} in {result.duration_text}")
    return failed


if __name__ == "__main__":
    raise SystemExit(1 if asyncio.run(sweep()) else 0)

"""`AsyncMPIJob`: `MPIJob` with coroutines, so many jobs can be launched and awaited at once.

    import asyncio
    from odh.training import AsyncMPIJob, ResourceSpec

    async def sweep():
        jobs = [AsyncMPIJob(name=f"lr-{i}", namespace="team-nlp", workers=2,
                            image="quay.io/team-nlp/bert:1.0",
                            command=["horovodrun", "-np", "2", "python", "train.py"])
                for i in range(10)]
        await asyncio.gather(*(job.create() for job in jobs))
        return await asyncio.gather(*(job.wait_for_completion() for job in jobs),
                                    return_exceptions=True)

The kubernetes client is synchronous: each call runs in a thread of a pool of this
module's own (larger than asyncio's default, so ten jobs awaited together each get one
while they wait on their watch); the event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, Self, TypeVar

from odh.training.jobs import MPIJob, TrainingJob, TrainJob
from odh.training.jobstatus import JobStatus

__all__ = ["AsyncMPIJob", "AsyncTrainJob"]

T = TypeVar("T")
_POOL = ThreadPoolExecutor(max_workers=64, thread_name_prefix="odh-training")
_END = object()


async def _run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_POOL, functools.partial(fn, *args, **kwargs))


async def _iterate(make: Callable[[], Iterator[T]]) -> AsyncIterator[T]:
    """An iterator that blocks, read in the pool, one item at a time."""
    iterator = await _run(make)
    while True:
        item = await _run(next, iterator, _END)
        if item is _END:
            return
        yield item  # type: ignore[misc]


class AsyncJob:
    """The same arguments and methods as the job class it wraps (`_job_class`); the methods
    that talk to the cluster are coroutines, and `get_logs`/`watch` are async iterators."""

    _job_class: ClassVar[type[TrainingJob]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.job = self._job_class(*args, **kwargs)

    @classmethod
    def wrap(cls, job: TrainingJob) -> Self:
        wrapped = cls.__new__(cls)
        wrapped.job = job
        return wrapped

    @property
    def name(self) -> str:
        return self.job.name

    @property
    def spec(self):
        return self.job.spec

    @property
    def namespace(self) -> str:
        return self.job.namespace

    @property
    def client(self):
        return self.job.client

    @property
    def object(self) -> dict | None:
        return self.job.object

    def update(self, **settings: Any) -> Self:
        self.job.update(**settings)
        return self

    def __repr__(self) -> str:
        return "Async" + repr(self.job)

    # files and templates need no cluster
    @classmethod
    def from_yaml(cls, path: str | Path, **options: Any) -> Self:
        return cls.wrap(cls._job_class.from_yaml(path, **options))

    @classmethod
    def from_spec(cls, spec, **options: Any) -> Self:
        return cls.wrap(cls._job_class.from_spec(spec, **options))

    @classmethod
    def from_manifest(cls, manifest: dict, **options: Any) -> Self:
        return cls.wrap(cls._job_class.from_manifest(manifest, **options))

    @classmethod
    def from_manifest_text(cls, text: str | bytes, **options: Any) -> Self:
        return cls.wrap(cls._job_class.from_manifest_text(text, **options))

    def to_yaml(self, path: str | Path | None = None) -> str:
        return self.job.to_yaml(path)

    # the cluster, without blocking the event loop
    async def create(self, wait: bool = False, timeout: float = 3600, *,
                     dry_run: bool = False, force: bool = False) -> Self:
        await _run(self.job.create, dry_run=dry_run, force=force)
        if wait and not dry_run:
            await self.wait_for_completion(timeout)
        return self

    async def check(self):
        return await _run(self.job.check)

    async def status(self) -> JobStatus:
        return await _run(self.job.read_status)

    async def summary(self):
        return await _run(self.job.summary)

    async def wait_for_completion(self, timeout: float = 3600) -> JobStatus:
        return await _run(self.job.wait_for_completion, timeout)

    async def delete(self, wait: bool = False, timeout: float = 300) -> None:
        await _run(self.job.delete, wait, timeout)

    async def suspend(self) -> Self:
        await _run(self.job.suspend)
        return self

    async def resume(self) -> Self:
        await _run(self.job.resume)
        return self

    async def diagnose(self):
        return await _run(self.job.diagnose)

    async def cost(self):
        """What the job has cost (TrainingJob.cost), or None without prices."""
        return await _run(self.job.cost)

    async def get_metrics(self, names=None, start=None, end=None, *,
                          prometheus: str | None = None) -> dict[str, dict[str, list[dict]]]:
        """The job's series (TrainingJob.get_metrics)."""
        return await _run(lambda: self.job.get_metrics(names, start, end,
                                                       prometheus=prometheus))

    def watch(self, timeout: float | None = None) -> AsyncIterator[JobStatus]:
        return _iterate(lambda: self.job.watch(timeout))

    def get_logs(self, component: str = "launcher", worker_id: int | None = None,
                 follow: bool = False, tail: int | None = None,
                 previous: bool = False) -> AsyncIterator[str]:
        return _iterate(lambda: self.job.get_logs(component, worker_id, follow, tail,
                                                  previous))

    @classmethod
    async def get(cls, name: str, namespace: str | None = None, **options: Any
                  ) -> Self:
        return cls.wrap(await _run(cls._job_class.get, name, namespace, **options))

    @classmethod
    async def list(cls, namespace: str | None = None, status: str | None = None,
                   **options: Any) -> builtins.list[Self]:
        found = await _run(cls._job_class.list, namespace, status, **options)
        return [cls.wrap(job) for job in found]


class AsyncMPIJob(AsyncJob):
    """MPIJob with coroutines (see the module's docstring)."""

    _job_class = MPIJob

    @classmethod
    def from_template(cls, template_name: str, **overrides: Any) -> AsyncMPIJob:
        return cls.wrap(MPIJob.from_template(template_name, **overrides))


class AsyncTrainJob(AsyncJob):
    """TrainJob (odh.training.jobs.trainjob) with coroutines."""

    _job_class = TrainJob

"""The stored curves: one row per job uid, the `CurveReader`'s state (its points and how
far the log is read), written by the watcher as it reads, read by the pages.

Two watchers (a second hub during a rolling restart) may read the same lines: each
writes the points those lines give, the same points, so whichever writes last loses
nothing the other had. Rows are kept as long as the job's history (no pruning): a row
is at most MAX_NAMES x 2 x MAX_POINTS points, a few hundred kilobytes."""

from __future__ import annotations

from django.db import models

from odh.training.logs.curves import CurveReader


class TrainingCurves(models.Model):
    job_uid = models.CharField(max_length=64, unique=True)
    namespace = models.CharField(max_length=253)
    kind = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    pod = models.CharField(max_length=253, blank=True)  # the log read (the Launcher's)
    state = models.JSONField(default=dict)  # CurveReader.state()
    points = models.IntegerField(default=0)  # how many, for a quick "has curves"
    finished = models.BooleanField(default=False)  # the job ended and its log was read
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "training"
        indexes = [models.Index(fields=["namespace", "kind", "name"])]
        verbose_name_plural = "training curves"

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name} ({self.job_uid}): {self.points}"

    def reader(self) -> CurveReader:
        return CurveReader(self.state)


def stored_curves(job_uid: str) -> CurveReader | None:
    """The curves kept for the job of that uid, or None when none were found in its log."""
    if not job_uid:
        return None
    row = TrainingCurves.objects.filter(job_uid=job_uid, points__gt=0).first()
    return row.reader() if row is not None else None

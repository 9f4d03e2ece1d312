"""The diagnosis on the dashboard's pages: what odh.training.diagnosis computes, read with
the person's own token, plus what the dashboard knows better itself.

- The job page (`for_detail`): the diagnosis of one job, from its job, pods and events
  (already read for the page) and the bounded reads of `odh.training.diagnosis.gather`
  (log tails, quotas, LimitRanges, NetworkPolicies, pull secrets, claims, the project's
  jobs holding GPUs), with Prometheus asked as the person (after the same pods check as
  the Metrics tab), the nodes and the cluster's free GPUs read with the dashboard's
  service account (sizes and counts only, shared a short while), similar successful runs
  from the job history, and the hints this person dismissed for this job (session).
- The job list (`for_rows`): the same computation for the rows of the page shown that
  have something to say (Failed, Pending, or a pod in trouble), in parallel and bounded
  like the progress bars (training/job_progress.py), kept 20 s per person.
- The watch hub pushes what it can tell from the objects alone (`object_diagnosis`), and
  a signature of it: a page whose diagnosis changed fetches its own (static/js/live.js),
  so a pushed page never shows what its viewer could not read.

Answers are cached per person (a digest of their token) and job state, never shared.

The parts: one_job (a job's diagnosis, cached), rows (the list's), sources (what is read
besides the job's objects), dismissals (the person's session), cards (what pages show).
"""

from __future__ import annotations

from training.diagnoses.cards import (
    card_context,
    cell_key,
    fix_token,
    read_fix_token,
    row_cell_context,
    story_context,
    suggestion_links,
)
from training.diagnoses.dismissals import dismiss, dismissed, dismissed_all
from training.diagnoses.one_job import compute, for_detail, object_diagnosis, row_key, signature
from training.diagnoses.rows import RowDiagnosis, for_rows, indexed_row_events, wants_diagnosis
from training.diagnoses.sources import PROMETHEUS_TIMEOUT, gpu_capacity, similar_runs

__all__ = [
    "PROMETHEUS_TIMEOUT", "RowDiagnosis", "card_context", "cell_key", "compute", "dismiss",
    "dismissed", "dismissed_all", "fix_token", "for_detail", "for_rows", "gpu_capacity",
    "indexed_row_events", "object_diagnosis", "read_fix_token", "row_cell_context", "row_key",
    "signature", "similar_runs", "story_context", "suggestion_links", "wants_diagnosis",
]

"""The suggestions every rule reaches for: a pod's logs, the events, the guide, a fix."""

from __future__ import annotations

from odh.training.diagnosis.facts import Facts, SimilarRun
from odh.training.diagnosis.guide import page_title
from odh.training.diagnosis.model import Action, JobFix, Suggestion
from odh.training.i18n import _
from odh.training.status.pods import ReplicaState


def fix(job_fix: JobFix | None) -> list[Suggestion]:
    return [] if job_fix is None else [Suggestion(Action.FIX, job_fix.label, fix=job_fix)]


def logs(replica: ReplicaState | None, previous: bool = False) -> list[Suggestion]:
    if replica is None or not replica.exists:
        return []
    text = _("Read the log of %(pod)s's crashed run") if previous else \
        _("Read the log of %(pod)s")
    return [Suggestion(Action.LOGS, text % {"pod": replica.label}, pod=replica.name,
                       previous=previous)]


def events() -> Suggestion:
    return Suggestion(Action.EVENTS, _("Look at the job's events"))


def topology() -> Suggestion:
    return Suggestion(Action.TOPOLOGY, _("See which pods are where in Topology"))


def metrics(chart: str = "", text: str = "") -> Suggestion:
    """The Metrics tab; `chart`: the one to go to ("memory", "gpu_util", ...)."""
    return Suggestion(Action.METRICS, text or _("See the GPU and memory charts"), target=chart)


def guide(slug: str) -> Suggestion:
    return Suggestion(Action.GUIDE, _("Troubleshooting guide: %(title)s")
                      % {"title": page_title(slug)}, guide=slug)


def advice(text: str, command: str = "") -> Suggestion:
    return Suggestion(Action.ADVICE, text, command=command)


def retry(text: str) -> Suggestion:
    """Run the same job again, where nothing in it needs changing."""
    return Suggestion(Action.RETRY, text)


def dismiss() -> Suggestion:
    return Suggestion(Action.DISMISS, _("Dismiss this hint for this job"))


def similar(facts: Facts) -> list[Suggestion]:
    """"Compare with <name>", the last similar run that succeeded (from the history)."""
    runs: list[SimilarRun] = facts.similar or []
    if not runs:
        return []
    run = runs[0]
    values = {"name": run.name}
    if run.differences:
        values["differences"] = "; ".join(run.differences)
        text = _("Compare with %(name)s, a similar run that succeeded (%(differences)s)")
    else:
        text = _("Compare with %(name)s, a run of the same configuration that succeeded")
    return [Suggestion(Action.COMPARE, text % values, target=f"history:{run.uid}")]

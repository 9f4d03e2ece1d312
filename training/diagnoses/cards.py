"""What a page shows of a diagnosis: the card with its suggestions (each a link, a form or
a command; a fix signed for one job and one person), the list row's cell and the Status
card's line."""

from __future__ import annotations

from urllib.parse import urlencode

from django.core import signing

from odh.training.cluster.access import identity
from odh.training.diagnosis import Diagnosis, JobFix
from odh.training.diagnosis.story import tell
from odh.training.status.queries import JobDetail
from odh.training.status.summary import JobStatus, JobSummary
from training.diagnoses.one_job import job_ref, object_diagnosis, row_key, signature

FIX_SALT = "training.diagnosis.fix"
FIX_MAX_AGE = 7 * 24 * 3600


def fix_token(fix: JobFix, summary: JobSummary, token: str) -> str:
    """The fix, signed for one job and one person: a link made for alice's job cannot
    carry its changes (a whole command, say) into another job, or to someone else."""
    return signing.dumps({**fix.as_dict(), "job": job_ref(summary), "uid": summary.uid,
                          "who": identity(token)}, salt=FIX_SALT, compress=True)


def read_fix_token(value: str, ref: str, uid: str, token: str) -> JobFix | None:
    """The fix a link carries, if it was made for this job (`ref`; `uid` when the job
    still exists, "" for one cloned from its history record) and this person."""
    try:
        data = signing.loads(value, salt=FIX_SALT, max_age=FIX_MAX_AGE)
    except (signing.BadSignature, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("changes", {}), dict):
        return None
    if data.get("job") != ref or data.get("who") != identity(token):
        return None
    if uid and data.get("uid") != uid:
        return None  # another job of the same name
    return JobFix(str(data.get("label", "")), dict(data.get("changes") or {}),
                  str(data.get("focus", "")), str(data.get("note", "")))


SEVERITY_STYLE = {  # severity -> (PatternFly alert variant, icon)
    "error": ("danger", "fa-exclamation-circle"),
    "warning": ("warning", "fa-exclamation-triangle"),
    "info": ("info", "fa-info-circle"),
}


def suggestion_links(diagnosis: Diagnosis, summary: JobSummary, token: str) -> list[dict]:
    """Each suggestion with where it leads: a link, a form, or text with a command."""
    from django.urls import reverse

    from odh.training.diagnosis import Action

    ref = (summary.namespace, summary.kind.slug, summary.name)
    detail = reverse("training-job-detail", args=ref)
    out = []
    first_fix = True
    for s in diagnosis.suggestions:
        item = {"action": str(s.action), "text": s.text, "command": s.command, "url": "",
                "primary": False, "note": ""}
        if s.action == Action.FIX:
            # a fix opens the wizard on a clone: only of a kind its steps show
            if s.fix is None or not summary.kind.wizard_ready:
                continue
            item["url"] = (reverse("training-job-new") + "?" + urlencode(
                {"clone": "/".join(ref), "fix": fix_token(s.fix, summary, token)}))
            item["primary"], first_fix = first_fix, False
            item["note"] = s.fix.note
        elif s.action == Action.LOGS:
            item["url"] = f"{detail}?" + urlencode(
                {"tab": "logs", "pod": s.pod, **({"previous": "1"} if s.previous else {})})
        elif s.action == Action.EVENTS:
            item["url"] = f"{detail}?tab=events&type=Warning"
        elif s.action == Action.TOPOLOGY:
            item["url"] = f"{detail}?tab=topology"
        elif s.action == Action.METRICS:
            item["url"] = f"{detail}?tab=metrics" + (f"#chart-{s.target}-title" if s.target
                                                      else "")
        elif s.action == Action.GUIDE:
            item["url"] = reverse("training-help-page", args=[s.guide])
        elif s.action == Action.COMPARE:
            item["url"] = reverse("training-job-compare") + "?" + urlencode(
                [("job", "/".join(ref)), ("job", s.target)])
        elif s.action == Action.RETRY and summary.kind.wizard_ready:
            # of a job still at work too: its retry page offers to suspend it first
            item["url"] = reverse("training-job-retry", args=ref)
        elif s.action == Action.DISMISS:
            item["url"] = reverse("training-job-diagnosis-dismiss", args=ref)
            item["scenario"] = diagnosis.scenario
        out.append(item)
    return out


def card_context(diagnosis: Diagnosis | None, detail: JobDetail, token: str) -> dict:
    """What training/partials/diagnosis.html#card needs."""
    summary = detail.summary
    from django.urls import reverse

    ref = (summary.namespace, summary.kind.slug, summary.name)
    variant, icon = SEVERITY_STYLE.get(str(diagnosis.severity) if diagnosis else "info",
                                       SEVERITY_STYLE["info"])
    seen = object_diagnosis(detail.job, detail.pods, detail.events, summary)
    return {"diagnosis": diagnosis, "summary": summary, "alert_variant": variant,
            "alert_icon": icon,
            "suggestions": suggestion_links(diagnosis, summary, token) if diagnosis else [],
            "diagnosis_url": reverse("training-job-diagnosis", args=ref),
            "seen_diagnosis": seen, "diagnosis_signature": signature(summary, seen),
            # hangs and GPU use change with time alone: a running job's card looks again
            "diagnosis_refresh": summary.status == JobStatus.RUNNING}


def cell_key(summary: JobSummary, seen: Diagnosis | None) -> str:
    """A list row's diagnosis cell's key: the job's state and what its objects alone say
    is wrong, so a change of either (a new quota refusal event) makes a new cell."""
    return f"{row_key(summary)}-{seen.scenario if seen is not None else 'none'}"


def row_cell_context(diagnosis: Diagnosis | None, summary: JobSummary,
                     pushed: bool = False, seen: Diagnosis | None = None,
                     queued: str | None = None) -> dict:
    """What training/partials/diagnosis.html#row-cell needs: the job's story
    (odh.training.diagnosis.story) from `diagnosis`, and `queued` (where a job Kueue holds stands in
    its queue, when read). The cell's id carries the job's `row_key`: a pushed row keeps
    (hx-preserve) the cell the page has for the same state, which the page computed with
    the viewer's own reads; a pushed row of a new state that failed or waits fetches the
    viewer's own line as soon as it is swapped in (the hub reads no logs)."""
    from django.urls import reverse

    ref = (summary.namespace, summary.kind.slug, summary.name)
    refresh = ""
    if pushed and (diagnosis is not None or (
            summary.status in (JobStatus.FAILED, JobStatus.PENDING)
            and not summary.held_by_queue)):
        # a failed or waiting job's line is the viewer's diagnosis, not its step: a pushed
        # cell the page has not kept (another id) asks for it, even where what the push
        # knew said nothing (a snapshot read without events)
        refresh = reverse("training-job-diagnosis", args=ref) + "?part=line"
    key = cell_key(summary, seen if not pushed else diagnosis)
    told = tell(summary, diagnosis, queued)
    return {"story": told, "diagnosis": diagnosis, "job": summary, "refresh_url": refresh,
            "preserve": pushed, "cell_id": f"row-diagnosis-{'-'.join(ref)}-{key}",
            "queue_id": f"row-queue-{'-'.join(ref)}" if queued and told.scenario == "queued"
            else ""}


def story_context(diagnosis: Diagnosis | None, summary: JobSummary, seen: Diagnosis | None,
                  queued: str | None = None, pushed: bool = False, oob: bool = False) -> dict:
    """What training/partials/diagnosis.html#story (the Status card's line) needs. `seen`
    is what the objects alone tell (`object_diagnosis`): the line's id carries it and the
    job's state, so the page, the hub's push (`pushed`: kept if the page has the same id)
    and the card's fetch (`oob`) agree on which line is current."""
    return {"story": tell(summary, diagnosis, queued),
            "story_id": f"job-story-{cell_key(summary, seen)}", "preserve": pushed,
            "oob": oob}

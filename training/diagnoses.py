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
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django.db import DatabaseError
from django.http import HttpRequest
from django.utils import translation

from odh.training import errors
from odh.training.capacity.allocation import cluster_capacity
from odh.training.cluster.access import identity
from odh.training.diagnosis import Diagnosis, Facts, JobFix, SimilarRun, diagnose
from odh.training.diagnosis.gather import Sources, gather
from odh.training.diagnosis.story import tell
from odh.training.kinds import default_kind, kind_for_object
from odh.training.metrics.prometheus import PrometheusClient
from odh.training.status.compare import similar_to
from odh.training.status.queries import JobDetail, job_events
from odh.training.status.summarize import summarize
from odh.training.status.summary import JobStatus, JobSummary
from training import job_progress
from training.accounts import session
from training.cluster import client_for_token
from training.projects import project_uid
from training.web.language_threads import in_callers_language
from training.wizard.checks import every_pod, get_nodes

log = logging.getLogger("training.diagnosis")

CACHE_SECONDS = 20
FINISHED_CACHE_SECONDS = 300
CAPACITY_KEY = "diagnosis:gpu-capacity"
CAPACITY_TTL = 15
DISMISSED_KEY = "diagnosis_dismissed"
FIX_SALT = "training.diagnosis.fix"
FIX_MAX_AGE = 7 * 24 * 3600
LIST_MAX_JOBS = 25
LIST_THREADS = 6
LIST_DEADLINE = 5.0
PROMETHEUS_TIMEOUT = (1.0, 2.0)


# -- what a person dismissed ----------------------------------------------------------------------
def dismissed(request: HttpRequest, uid: str) -> frozenset[str]:
    return dismissed_all(request).get(uid, frozenset())


def dismissed_all(request: HttpRequest) -> dict[str, frozenset[str]]:
    found = request.session.get(DISMISSED_KEY) or {}
    if not isinstance(found, dict):
        return {}
    return {str(uid): frozenset(str(s) for s in scenarios)
            for uid, scenarios in found.items() if isinstance(scenarios, list)}


def dismiss(request: HttpRequest, uid: str, scenario: str) -> None:
    found = request.session.get(DISMISSED_KEY)
    found = dict(found) if isinstance(found, dict) else {}
    found[uid] = sorted(set(found.get(uid, [])) | {scenario})
    # a session keeps the last hundred jobs' dismissals, not every job ever seen
    if len(found) > 100:
        found = dict(list(found.items())[-100:])
    request.session[DISMISSED_KEY] = found


# -- what the dashboard reads better itself -------------------------------------------------
_CAPACITY_LOCK = threading.Lock()


def gpu_capacity() -> tuple[int | None, int | None]:
    """(free, requested) GPUs of the whole cluster, from the service account's view of the
    nodes and pods (counts only; kept CAPACITY_TTL seconds)."""
    cached = cache.get(CAPACITY_KEY)
    if cached is not None:
        return tuple(cached)  # type: ignore[return-value]
    with _CAPACITY_LOCK:  # the list's threads ask at once: one of them reads
        cached = cache.get(CAPACITY_KEY)
        if cached is not None:
            return tuple(cached)  # type: ignore[return-value]
        nodes = get_nodes()
        pods = every_pod() if nodes else None
        if pods is None:
            return None, None  # not known, which is not "0 free"
        capacity = cluster_capacity(nodes, pods)
        answer = (int(capacity.gpus.free), int(capacity.gpus.requested))
        cache.set(CAPACITY_KEY, answer, CAPACITY_TTL)
        return answer


def similar_runs(job: dict, namespace: str, uid: str | None) -> list[SimilarRun]:
    """Successful jobs of the job's kind in the project (as it is now: `uid`) in the
    history that ran the same script from the same image, fewest differences first."""
    from training.models import JobHistory

    kind = kind_for_object(job) or default_kind()
    records = list(JobHistory.of_project(namespace, uid).filter(
        kind=kind.kind, outcome=JobHistory.Outcome.SUCCEEDED).order_by("-finished")[:50])
    by_uid = {r.uid: r for r in records}
    found = similar_to(job, [(r.uid, r.spec) for r in records if r.spec])
    return [SimilarRun(by_uid[uid].name, namespace, uid, by_uid[uid].finished, tuple(diffs))
            for uid, diffs in found]


def _prometheus(token: str) -> PrometheusClient | None:
    from training.cluster import prometheus_tls
    if not settings.PROMETHEUS_URL:
        return None
    ca_file, verify = prometheus_tls()
    return PrometheusClient(settings.PROMETHEUS_URL, token, ca_file, timeout=PROMETHEUS_TIMEOUT,
                            verify=verify)


def _may_see_metrics(request_token: str, project: str) -> bool:
    from training.permissions import GET_PODS, may

    try:
        with client_for_token(request_token) as client:
            client.timeout = PROMETHEUS_TIMEOUT
            return may(client, request_token, project, GET_PODS)
    except errors.ClusterError:
        return False


def sources_for(token: str, job: dict, summary: JobSummary,
                dismissed_here: frozenset[str] = frozenset(), brief: bool = False,
                project: str | None = None) -> Sources:
    unscheduled = [r for r in summary.replicas if r.reason == "Unschedulable"]
    free, requested = gpu_capacity() if any(r.gpus for r in unscheduled) else (None, None)
    if brief:
        return Sources(nodes=get_nodes() if unscheduled else None, free_gpus=free,
                       read_nodes=False, brief=True,
                       hang_after_seconds=settings.DIAGNOSIS_HANG_SECONDS)
    wants_metrics = summary.status == JobStatus.RUNNING or any(
        r.reason == "OOMKilled" for r in summary.replicas)
    prometheus = _prometheus(token) if wants_metrics and _may_see_metrics(
        token, summary.namespace) else None
    return Sources(prometheus=prometheus, nodes=get_nodes(), free_gpus=free,
                   allocated_gpus=requested,
                   similar=lambda: similar_runs(job, summary.namespace, project),
                   dismissed=dismissed_here, read_nodes=False,
                   hang_after_seconds=settings.DIAGNOSIS_HANG_SECONDS)


# -- one job -------------------------------------------------------------------------------------
def row_key(summary: JobSummary) -> str:
    """The job's state as its pods and status tell (not the words its events add: a list
    computed without events and the hub's, with them, agree on it)."""
    parts = [summary.uid, str(summary.status)]
    parts += [f"{r.name}:{r.status}:{r.reason}:{r.restarts}:{r.exit_code}"
              for r in summary.replicas]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _state_key(summary: JobSummary) -> str:
    """`row_key` and what the events add (the reason and step of a waiting job)."""
    words = hashlib.sha256(f"{summary.reason}|{summary.lifecycle_step}".encode()).hexdigest()
    return f"{row_key(summary)}:{words[:16]}"


def _cache_key(token: str, summary: JobSummary, dismissed_here: frozenset[str]) -> str:
    return (f"diagnosis:{translation.get_language()}:{identity(token)}:{_state_key(summary)}:"
            f"{','.join(sorted(dismissed_here))}")


def kept_for(token: str, summary: JobSummary, pods: list[dict]
             ) -> tuple[list[dict], dict[str, str]]:
    """What the watcher kept of this job's pods that the cluster no longer has (their last
    state, and their last log lines: odh/training/diagnosis/evidence.py), for a person who may read
    the project's logs: ([ghost pods], {pod: log tail}); nothing for anyone else."""
    from odh.training.diagnosis.evidence import ghosts, kept_tails
    from training.live.log_subscriptions import GET_POD_LOGS
    from training.models import KeptEvidence
    from training.permissions import may
    if summary.status in (JobStatus.SUCCEEDED, JobStatus.SUSPENDED) or not summary.uid:
        return [], {}
    try:
        kept = KeptEvidence.of_job(summary.uid)
    except DatabaseError as e:  # the diagnosis goes on with what the cluster has
        log.warning("kept evidence of %s/%s not read: %s", summary.namespace, summary.name, e)
        return [], {}
    if not kept or not ghosts(pods, kept):
        return [], {}
    try:
        with client_for_token(token) as client:
            client.timeout = PROMETHEUS_TIMEOUT
            if not may(client, token, summary.namespace, GET_POD_LOGS):
                return [], {}
    except errors.ClusterError:
        return [], {}
    return ghosts(pods, kept), kept_tails(pods, kept)


def compute(token: str, job: dict, pods: list[dict], events: list[dict], summary: JobSummary,
            dismissed_here: frozenset[str] = frozenset(), brief: bool = False,
            project: str | None = None) -> tuple[Facts, Diagnosis | None]:
    """`project`: the uid of the job's project as the person sees it (its history's
    similar runs are of that project only); None reads no history. The pods the watcher
    kept of the job (`kept_for`) count as its pods, as the cluster had them."""
    gone, tails = kept_for(token, summary, pods)
    if gone:
        pods = pods + gone
        summary = summarize(job, pods, events, summary.observed_at, summary.layout)
    sources = sources_for(token, job, summary, dismissed_here, brief, project)
    sources.logs.update(tails)
    if brief and summary.status == JobStatus.RUNNING:
        read = cache.get(job_progress.tail_key(token, summary))
        troubled = any(r.exists and (r.problem or r.restarts) for r in summary.replicas)
        if read is None and not troubled:
            return Facts(job, pods, events, summary=summary), None  # no tail: nothing read
        if read is not None:
            sources.logs = {read[0]: read[1]}
    try:
        with client_for_token(token) as client:
            facts = gather(client, job, pods, events, summary=summary, sources=sources)
    finally:
        if sources.prometheus is not None:
            sources.prometheus.close()
    return facts, diagnose(facts)


def for_detail(request: HttpRequest, detail: JobDetail) -> Diagnosis | None:
    """The job page's diagnosis (cached for this person and this state of the job)."""
    token = session.token(request)
    summary = detail.summary
    if summary.status in (JobStatus.SUCCEEDED, JobStatus.SUSPENDED):
        return None
    mine = dismissed(request, summary.uid)
    key = _cache_key(token, summary, mine)
    found = cache.get(key, default=False)
    if found is not False:
        return found
    with client_for_token(token) as client:
        uid = project_uid(request, client, summary.namespace)
    _facts, found = compute(token, detail.job, detail.pods, detail.events, summary, mine,
                            project=uid)
    # a running job's hang or GPU use changes with time alone: a shorter reuse; a failed
    # job's is final (a change of its pods or events changes the key)
    seconds = {JobStatus.RUNNING: 10, JobStatus.FAILED: FINISHED_CACHE_SECONDS}
    cache.set(key, found, seconds.get(summary.status, CACHE_SECONDS))
    return found


def object_diagnosis(job: dict, pods: list[dict], events: list[dict],
                     summary: JobSummary) -> Diagnosis | None:
    """What the objects alone tell (no logs, quotas or metrics): what the hub pushes."""
    try:
        return diagnose(Facts(job, pods, events, now=summary.observed_at, summary=summary))
    except Exception:  # a rule's bug must not stop the pushes
        log.exception("diagnosis of %s/%s failed", summary.namespace, summary.name)
        return None


def signature(summary: JobSummary, seen: Diagnosis | None) -> str:
    """Changes when the job's state does, or what its objects alone say is wrong: the hub
    pushes it, and a page whose card was made for another signature fetches a new one.
    `seen` is `object_diagnosis` of the same objects (the hub's and the page's agree)."""
    headline = seen.headline if seen is not None else ""
    return hashlib.sha256(f"{_state_key(summary)}|{headline}".encode()).hexdigest()[:24]


# -- the job list ---------------------------------------------------------------------------------
def wants_diagnosis(summary: JobSummary) -> bool:
    """Rows with something to say: failed, waiting, a pod in trouble, or running (a hang;
    told from the tail its progress bar was read from, so it costs no read of its own)."""
    return summary.status in (JobStatus.FAILED, JobStatus.PENDING, JobStatus.RUNNING)


def _row_key(token: str, summary: JobSummary) -> str:
    # in the language it was written in: each person may switch
    return f"diagnosis-row:{translation.get_language()}:{identity(token)}:{row_key(summary)}"


@dataclass(frozen=True)
class RowDiagnosis:
    """A list row's line (`diagnosis`, None for none) and what its objects alone tell
    (`seen`, what the hub pushes: the cell's id carries its scenario, see
    `row_cell_context`)."""

    diagnosis: Diagnosis | None
    seen: Diagnosis | None


def rows_wanted(summaries: list[JobSummary]) -> list[JobSummary]:
    return [s for s in summaries if wants_diagnosis(s)][:LIST_MAX_JOBS]


def _waiting_namespaces(wanted: list[JobSummary]) -> set[str]:
    # the events say why a job failed or waits (a quota refusal, an invalid job)
    return {s.namespace for s in wanted if s.status in (JobStatus.FAILED, JobStatus.PENDING)}


def indexed_row_events(summaries: list[JobSummary], indexed_events
                       ) -> dict[str, list[dict]]:
    """The events `for_rows` needs, by row, from the watch hub's index (`Listing.
    indexed_events`; None: no hub here, {} is returned): asked while the person's client is
    open, since it may have to ask the cluster whether they may list events."""
    if indexed_events is None:
        return {}
    # every row's (in memory already): its cell's id carries what the objects tell with
    # them, as the hub's pushes of the row do
    found = {}
    for s in rows_wanted(summaries):
        events = indexed_events((s.namespace, s.kind.slug, s.name))
        if events is not None:
            found[_ref(s)] = events
    return found


def for_rows(token: str, summaries: list[JobSummary],
             objects: dict[tuple[str, str, str], tuple[dict, list[dict]]],
             dismissed_by_uid: dict[str, frozenset[str]] | None = None,
             known_events: dict[str, list[dict]] | None = None,
             ) -> dict[str, RowDiagnosis]:
    """The lines of the rows shown, by "<ns>/<kind>/<name>", within LIST_DEADLINE seconds
    in all (a row not done by then shows its status and step only). The events of a row
    in `known_events` (`indexed_row_events`) are not read again: only the projects of the
    other waiting rows have their events listed."""
    deadline = time.monotonic() + LIST_DEADLINE
    dismissed_by_uid = dismissed_by_uid or {}
    known_events = known_events or {}
    wanted = rows_wanted(summaries)
    waiting = _waiting_namespaces(wanted)
    events = _events_by_namespace(token, {s.namespace for s in wanted if s.namespace in waiting
                                          and _ref(s) not in known_events}, deadline)
    found: dict[str, RowDiagnosis] = {}
    work = []
    for s in wanted:
        job, pods = objects.get((s.namespace, s.kind.slug, s.name), ({}, []))
        if not job:
            continue
        candidates = known_events.get(_ref(s), events.get(s.namespace))
        mine = job_events(s.kind, job, pods, candidates) if candidates is not None else []
        # summarized again with its events, as the job's page and the hub do
        summary = summarize(job, pods, mine, s.observed_at, s.layout) if mine else s
        seen = object_diagnosis(job, pods, mine, summary)
        hit = cache.get(_row_key(token, summary), default=False)
        if hit is False:
            work.append((s, summary, job, pods, mine, seen))
        else:
            found[_ref(s)] = RowDiagnosis(hit, seen)
    if not work:
        return found
    pool = ThreadPoolExecutor(max_workers=min(LIST_THREADS, len(work)),
                              thread_name_prefix="diagnosis")
    try:
        futures = {}
        for item in work:
            s, summary, job, pods, mine, _seen = item
            mine_dismissed = dismissed_by_uid.get(s.uid, frozenset())
            futures[pool.submit(in_callers_language(_row_task), token, summary, job, pods,
                                mine, mine_dismissed, deadline)] = item
        done, _late = wait(futures, timeout=max(0.0, deadline - time.monotonic()))
        for future in done:
            s, summary, _job, _pods, _mine, seen = futures[future]
            try:
                diagnosis = future.result()
            except Exception as e:  # slow or refused: that row shows its status only
                log.info("no diagnosis for %s: %s", _ref(s), e)
                continue
            # a failed job's state is final (a change of its pods changes the key)
            cache.set(_row_key(token, summary), diagnosis,
                      FINISHED_CACHE_SECONDS if s.status == JobStatus.FAILED else CACHE_SECONDS)
            found[_ref(s)] = RowDiagnosis(diagnosis, seen)
    finally:
        # threads still reading finish on their own (each read is bounded): the page
        # does not wait for them
        pool.shutdown(wait=False, cancel_futures=True)
    return found


def _row_task(token: str, summary: JobSummary, job: dict, pods: list[dict],
              events: list[dict], dismissed_here: frozenset[str],
              deadline: float) -> Diagnosis | None:
    _facts, diagnosis = compute(token, job, pods, events, summary, dismissed_here, brief=True)
    if diagnosis is not None and diagnosis.scenario == "possible-hang" and \
            deadline - time.monotonic() > 1.0:
        # quiet, as far as the log tells: the page asks Prometheus whether the GPUs are
        # idle too, so ask the same before saying so here
        _facts, diagnosis = compute(token, job, pods, events, summary, dismissed_here)
    elif diagnosis is not None and diagnosis.scenario == "possible-hang":
        return None  # no time to ask: say nothing rather than something the page may not
    return diagnosis


def _events_by_namespace(token: str, namespaces: set[str],
                         deadline: float) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    with client_for_token(token) as client:
        for namespace in sorted(namespaces):
            left = deadline - time.monotonic()
            if left < 0.5:
                break
            client.timeout = (min(2.0, left), min(3.0, left))
            try:
                found[namespace] = client.list_events(namespace)
            except errors.ClusterError as e:
                log.info("no events of %s for the list's diagnoses: %s", namespace, e.message)
    return found


def _ref(summary: JobSummary) -> str:
    return f"{summary.namespace}/{summary.kind.slug}/{summary.name}"


# -- "Clone with this fix" links -----------------------------------------------------------------
def fix_token(fix: JobFix, summary: JobSummary, token: str) -> str:
    """The fix, signed for one job and one person: a link made for alice's job cannot
    carry its changes (a whole command, say) into another job, or to someone else."""
    return signing.dumps({**fix.as_dict(), "job": _ref(summary), "uid": summary.uid,
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


# -- what a page shows ----------------------------------------------------------------------------
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

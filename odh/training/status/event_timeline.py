"""A job's events as a timeline in words.

Kubernetes reports each pod's start-up as up to five events (Scheduled, Pulling, Pulled,
Created, Started): a job with 8 Workers makes some 40 rows that say "it started". Here
each pod's start-up is one line in our words ("Worker 1 started (placed on node gpu-a100-0,
image pulled, container created and started)"); anything else (warnings, the job's own
events, Kueue's, a pod being stopped) stays a line of its own with the cluster's reason
and message, identical ones (same type, reason, message and object) as one line with how
often it happened.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from odh.training.cluster.events import event_time, involved, message
from odh.training.i18n import _, ngettext
from odh.training.kinds import JobKind
from odh.training.paths import as_dict
from odh.training.status.pods import role_and_index, role_name

# a pod's routine start-up, in the order it happens
STEPS = ("Scheduled", "Pulling", "Pulled", "Created", "Started")
_NEVER = datetime.min.replace(tzinfo=UTC)
_ASSIGNED_TO = re.compile(r"\bto (?P<node>[\w.:-]+)\s*$")  # "Successfully assigned ns/pod to n"


@dataclass(frozen=True)
class Line:
    """One line of the timeline. A folded start-up has `text` (our words) and no reason;
    a kept event has `who` (the object in our words), the cluster's `reason` and
    `message`, and `times` (how often it happened: Kubernetes' count, summed)."""

    at: datetime | None
    type: str  # "Normal" or "Warning"
    text: str = ""
    who: str = ""
    reason: str = ""
    message: str = ""
    times: int = 1
    events: int = 1  # how many of the cluster's events the line stands for

    @property
    def folded(self) -> bool:
        return not self.reason


def build(kind: JobKind, job_name: str, events: Iterable[dict],
          pods: Iterable[dict] = ()) -> list[Line]:
    """The timeline of a job's events (as `queries.job_events` chooses them), oldest
    first. `pods` (the job's pods that still exist) name pods by their labels; a pod
    already removed is named from its name."""
    names = _Names(kind, job_name, pods)
    parts: list[_StartUp | _Kept] = []
    open_startups: dict[str, _StartUp] = {}
    kept: dict[tuple[str, ...], _Kept] = {}
    for seq, event in enumerate(sorted(events, key=_order)):
        pod = _pod_of(event)
        if pod and _routine(event):
            startup = open_startups.get(pod)
            if startup is None:
                startup = open_startups[pod] = _StartUp(names.pod(pod))
                parts.append(startup)
            startup.add(event, seq)
            continue
        # the pod's start-up events after something unusual about it are a new line
        open_startups.pop(pod, None)
        key = _identity(event)
        same = kept.get(key)
        if same is None:
            same = kept[key] = _Kept(names.about(involved(event)), event)
            parts.append(same)
        same.add(event, seq)
    ordered = sorted(parts, key=lambda p: (p.at or _NEVER, p.seq))
    return [part.line() for part in ordered]


def of_type(lines: list[Line], wanted: str) -> list[Line]:
    """The lines of one type ("Normal", "Warning"), all of them for ""."""
    return [line for line in lines if not wanted or line.type == wanted]


# -- what an event is ------------------------------------------------------------------------
def _pod_of(event: dict) -> str:
    about = involved(event)
    return str(about.get("name") or "") if about.get("kind") == "Pod" else ""


def _routine(event: dict) -> bool:
    return event.get("type", "Normal") == "Normal" and event.get("reason") in STEPS


def _count(event: dict) -> int:
    series = as_dict(event.get("series"))
    count = event.get("count") or series.get("count") or 1
    return count if isinstance(count, int) and count > 0 else 1


def _order(event: dict) -> tuple[datetime, int, int]:
    # events of the same second come in any order: a pod's steps in the order they happen,
    # before anything else of that second (a pod is stopped after it started), the others
    # as written (resourceVersion is opaque, but only breaks ties of one second here)
    rank = STEPS.index(event["reason"]) if _pod_of(event) and _routine(event) else len(STEPS)
    version = str(as_dict(event.get("metadata")).get("resourceVersion") or "")
    return event_time(event) or _NEVER, rank, int(version) if version.isdecimal() else 0


def _identity(event: dict) -> tuple[str, ...]:
    about = involved(event)
    return (str(event.get("type") or "Normal"), str(event.get("reason") or ""), message(event),
            str(about.get("kind") or ""), str(about.get("name") or ""))


# -- the parts of the timeline ---------------------------------------------------------------
@dataclass
class _StartUp:
    """One pod's start-up events, folded."""

    who: str
    at: datetime | None = None
    seq: int = 0
    events: int = 0
    steps: dict[str, int] = field(default_factory=dict)  # reason -> times (count, summed)
    node: str = ""
    pulled: set[bool] = field(default_factory=set)  # True: the image was there already

    def add(self, event: dict, seq: int) -> None:
        reason = str(event["reason"])
        self.steps[reason] = self.steps.get(reason, 0) + _count(event)
        self.events += 1
        self.at, self.seq = max(self.at or _NEVER, event_time(event) or _NEVER), seq
        text = message(event)
        if reason == "Scheduled":
            found = _ASSIGNED_TO.search(text)
            self.node = found.group("node") if found else self.node
        elif reason == "Pulled":
            self.pulled.add("already present" in text)

    def line(self) -> Line:
        return Line(at=None if self.at == _NEVER else self.at, type="Normal",
                    text=_startup_text(self.who, self._said(), self.steps.get("Started", 0)),
                    events=self.events)

    def _said(self) -> str:
        said = []
        if "Scheduled" in self.steps:
            said.append(_("placed on node %(node)s") % {"node": self.node} if self.node
                        else _("placed on a node"))
        if "Pulled" in self.steps:
            said.append(_("image already on the node") if self.pulled == {True}
                        else _("image pulled"))
        elif "Pulling" in self.steps:
            said.append(_("pulling the image"))
        if "Created" in self.steps and "Started" in self.steps:
            said.append(_("container created and started"))
        elif "Created" in self.steps:
            said.append(_("container created"))
        elif "Started" in self.steps:
            said.append(_("container started"))
        return ", ".join(said)


def _startup_text(who: str, steps: str, started: int) -> str:
    if started > 1:  # the container restarted: Kubernetes counts its starts on one event
        return ngettext("%(pod)s started %(count)d time (%(steps)s)",
                        "%(pod)s started %(count)d times (%(steps)s)", started) % {
            "pod": who, "count": started, "steps": steps}
    if started:
        return _("%(pod)s started (%(steps)s)") % {"pod": who, "steps": steps}
    return _("%(pod)s is starting (%(steps)s)") % {"pod": who, "steps": steps}


@dataclass
class _Kept:
    """Events kept as the cluster said them; identical ones as one."""

    who: str
    first: dict
    at: datetime | None = None
    seq: int = 0
    times: int = 0
    events: int = 0

    def add(self, event: dict, seq: int) -> None:
        self.times += _count(event)
        self.events += 1
        self.at, self.seq = max(self.at or _NEVER, event_time(event) or _NEVER), seq

    def line(self) -> Line:
        return Line(at=None if self.at == _NEVER else self.at,
                    type="Warning" if self.first.get("type") == "Warning" else "Normal",
                    who=self.who, reason=str(self.first.get("reason") or "?"),
                    message=message(self.first), times=self.times, events=self.events)


# -- naming the objects events are about -----------------------------------------------------
class _Names:
    """"Launcher", "Worker 2", "Job": the objects of a job as the product names them."""

    def __init__(self, kind: JobKind, job_name: str, pods: Iterable[dict]) -> None:
        self.kind, self.job_name = kind, job_name
        self.known = {str(as_dict(p.get("metadata")).get("name")): role_and_index(kind, p)
                      for p in pods}
        self.launcher = re.compile(rf"{re.escape(job_name)}-launcher(?:-[a-z0-9]{{5}})?")
        self.replica = re.compile(rf"{re.escape(job_name)}-(?P<role>[a-z]+)-(?P<index>\d+)")

    def pod(self, name: str) -> str:
        if name in self.known:
            return self.kind.pod_label(*self.known[name]) if self.known[name][0] \
                else name
        if self.launcher.fullmatch(name):
            return pod_label("Launcher", None, name)
        found = self.replica.fullmatch(name)
        if found:
            return pod_label(role_name(found["role"]), int(found["index"]), name)
        return name

    def about(self, about: dict) -> str:
        kind, name = str(about.get("kind") or ""), str(about.get("name") or "")
        if kind == "Pod":
            return self.pod(name)
        if kind == self.kind.kind and name == self.job_name:
            return _("Job")
        if kind == "Job" and name == f"{self.job_name}-launcher":
            return _("Launcher Job")
        return f"{kind}/{name}" if kind else name


def pod_label(role: str, index: int | None, name: str = "") -> str:
    """"Launcher", "Worker 2" (translated), as the logs and the diagnosis name pods."""
    if role == "Launcher":
        return _("Launcher")
    if index is None:
        return role or name
    if role == "Worker":
        return _("Worker %(index)d") % {"index": index}
    return _("%(role)s %(index)d") % {"role": role, "index": index}

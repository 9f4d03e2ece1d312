"""What a diagnosis says: a headline, the evidence it rests on, whose problem it is, which
pods it concerns, and what to do next (links, advice, and fixes a clone can apply)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from odh.training import richhtml as rich
from odh.training.i18n import _


class Culprit(StrEnum):
    """Whose problem it is: the question support teams ask first."""

    CODE = "code"
    CONFIGURATION = "configuration"
    PLATFORM = "platform"
    CAPACITY = "capacity"
    UNKNOWN = "unknown"


def culprit_title(culprit: Culprit | str) -> str:
    return {
        Culprit.CODE: _("Your code"),
        Culprit.CONFIGURATION: _("Your configuration"),
        Culprit.PLATFORM: _("The platform"),
        Culprit.CAPACITY: _("Capacity"),
        Culprit.UNKNOWN: _("Not known"),
    }.get(Culprit(culprit), str(culprit))


def culprit_help(culprit: Culprit | str) -> str:
    return {
        Culprit.CODE: _("The training program itself stopped or misbehaved: its code, its "
                        "inputs or its libraries."),
        Culprit.CONFIGURATION: _("The job asks for something that cannot work as written: "
                                 "change the job's configuration (a clone can carry the fix)."),
        Culprit.PLATFORM: _("Something outside the job went wrong: the cluster, a node, the "
                            "network or a registry. Retrying often works; tell your "
                            "administrator if it happens again."),
        Culprit.CAPACITY: _("The job is fine but there is no room for it yet: it waits for "
                            "GPUs, quota or a higher priority."),
        Culprit.UNKNOWN: _("The dashboard could not tell: the events and logs below are what "
                           "there is to go on."),
    }.get(Culprit(culprit), "")


class Severity(StrEnum):
    ERROR = "error"      # the job failed or can never start
    WARNING = "warning"  # it waits, restarts or may be stuck
    INFO = "info"        # a hint on a healthy job


class Action(StrEnum):
    FIX = "fix"            # "Clone with this fix"
    LOGS = "logs"          # the logs of one pod
    EVENTS = "events"      # the job's Events tab
    TOPOLOGY = "topology"  # the Topology tab
    METRICS = "metrics"    # the Metrics tab
    COMPARE = "compare"    # compare with another run
    GUIDE = "guide"        # a page of the troubleshooting guide
    ADVICE = "advice"      # something to do that no button does
    DISMISS = "dismiss"    # hide this hint for this job
    RETRY = "retry"        # run the same job again (the platform failed, not the job)


@dataclass(frozen=True)
class JobFix:
    """A change to the job's configuration that a clone applies.

    `changes` maps JobSpec attributes to new values (as `odh.training.capacity.fit.Fix` does);
    `focus` names the field to open when there is nothing to change for the person but a
    field to correct (the image, the command); `note` is said next to it.
    """

    label: str
    changes: dict[str, Any] = field(default_factory=dict)
    focus: str = ""
    note: str = ""

    @property
    def fields(self) -> list[str]:
        return list(self.changes) or ([self.focus] if self.focus else [])

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "changes": dict(self.changes), "focus": self.focus,
                "note": self.note}


@dataclass(frozen=True)
class Suggestion:
    action: Action
    text: str
    fix: JobFix | None = None
    pod: str = ""       # LOGS: the pod's name
    previous: bool = False  # LOGS: its crashed run (the container before its restart)
    guide: str = ""     # GUIDE: the page's slug
    command: str = ""   # ADVICE: a command to run, shown as code
    target: str = ""    # COMPARE: "<namespace>/<kind>/<name>" or "history:<uid>"; METRICS: a chart

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": str(self.action), "text": self.text}
        if self.fix is not None:
            data["fix"] = self.fix.as_dict()
        for key in ("pod", "previous", "guide", "command", "target"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        return data


@dataclass(frozen=True)
class Evidence:
    """One thing the diagnosis rests on: a log line, an event, a number, a state."""

    kind: str           # "log" | "event" | "number" | "state"
    text: str
    source: str = ""    # "Worker 2", "Launcher", "ResourceQuota team-quota", ...
    at: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.source:
            data["source"] = self.source
        if self.at is not None:
            data["at"] = self.at.isoformat()
        return data


@dataclass
class Diagnosis:
    """Why a job failed, waits or looks unwell, and what to do about it.

    `scenario` is the slug of the troubleshooting guide's page about it; `affected` are
    the pods it concerns (names), `affected_labels` how the product names them ("Worker
    2"). `unread` says what could not be read (no log access, Prometheus away), so a
    person knows what the diagnosis did not see. `raw_reason`/`raw_message` keep the
    cluster's own words for support.
    """

    scenario: str
    severity: Severity
    culprit: Culprit
    headline: str
    evidence: list[Evidence] = field(default_factory=list)
    affected: list[str] = field(default_factory=list)
    affected_labels: list[str] = field(default_factory=list)
    suggestions: list[Suggestion] = field(default_factory=list)
    raw_reason: str = ""
    raw_message: str = ""
    unread: list[str] = field(default_factory=list)
    dismissable: bool = False

    @property
    def guide(self) -> str:
        return self.scenario

    @property
    def culprit_title(self) -> str:
        return culprit_title(self.culprit)

    @property
    def culprit_help(self) -> str:
        return culprit_help(self.culprit)

    @property
    def fixes(self) -> list[JobFix]:
        return [s.fix for s in self.suggestions if s.fix is not None]

    @property
    def is_problem(self) -> bool:
        return self.severity in (Severity.ERROR, Severity.WARNING)

    @property
    def log_lines(self) -> list[str]:
        return [e.text for e in self.evidence if e.kind == "log"]

    def signature(self) -> str:
        """What changes when the diagnosis says something new (not its numbers' ages)."""
        return "|".join([self.scenario, str(self.severity), self.headline,
                         ",".join(self.affected)])

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario, "severity": str(self.severity),
            "culprit": str(self.culprit), "culprit_title": self.culprit_title,
            "headline": self.headline,
            "evidence": [e.as_dict() for e in self.evidence],
            "affected": list(self.affected), "affected_labels": list(self.affected_labels),
            "suggestions": [s.as_dict() for s in self.suggestions],
            "raw_reason": self.raw_reason, "raw_message": self.raw_message,
            "unread": list(self.unread), "dismissable": self.dismissable,
        }

    def _repr_html_(self) -> str:
        """The diagnosis in a notebook, as the job page's card says it: its severity (colour,
        symbol, word) and headline, whose problem it is, the evidence, what to do (commands
        as code), what could not be read; everything from the cluster escaped."""
        words = {Severity.ERROR: _("Error"), Severity.WARNING: _("Warning"),
                 Severity.INFO: _("Information")}
        head = rich.badge(str(self.severity), words.get(self.severity, str(self.severity))) + \
            f" <strong>{rich.esc(self.headline)}</strong>"
        body = rich.rows([(_("Cause"), rich.esc(self.culprit_title)),
                          (_("Affected"), rich.esc(", ".join(self.affected_labels)))])
        if self.evidence:
            body += rich.heading(_("Evidence")) + rich.items(
                (rich.muted(f"{e.source}: ") if e.source else "")
                + (rich.code(e.text) if e.kind == "log" else rich.esc(e.text))
                for e in self.evidence)
        if self.suggestions:
            body += rich.heading(_("What to do")) + rich.items(
                [rich.esc(s.text) + (" " + rich.code(s.command) if s.command else "")
                 for s in self.suggestions], ordered=True)
        if self.unread:
            body += rich.heading(_("Not seen")) + rich.items(rich.esc(u) for u in self.unread)
        if self.raw_reason or self.raw_message:
            body += rich.unavailable(_("The cluster said"),
                                     f"{self.raw_reason} {self.raw_message}".strip())
        return rich.box(_("Diagnosis"), head, body)

    def text(self) -> str:
        """The diagnosis as plain text, as `odh training describe` prints it."""
        lines = [self.headline, _("Cause: %(culprit)s") % {"culprit": self.culprit_title}]
        if self.affected_labels:
            lines.append(_("Affected: %(pods)s") % {"pods": ", ".join(self.affected_labels)})
        if self.evidence:
            lines.append(_("Evidence:"))
            for item in self.evidence:
                prefix = f"{item.source}: " if item.source else ""
                lines.append(f"  {prefix}{item.text}")
        if self.suggestions:
            lines.append(_("What to do:"))
            for number, s in enumerate(self.suggestions, 1):
                line = f"  {number}. {s.text}"
                if s.command:
                    line += f"  $ {s.command}"
                lines.append(line)
        for note in self.unread:
            lines.append(_("Not seen: %(what)s") % {"what": note})
        if self.raw_reason or self.raw_message:
            lines.append(_("The cluster said: %(reason)s %(message)s")
                         % {"reason": self.raw_reason, "message": self.raw_message})
        return "\n".join(line.rstrip() for line in lines)

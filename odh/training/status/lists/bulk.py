"""Actions on several jobs at once (the job list's ticks): which jobs were named, what
each action needs the person to be allowed, and the result of each job in plain words.

The dashboard makes each change through its one mutation path (training/mutations.py),
one job at a time, with the person's own token; this module only says what to do and
how to tell it, so the page and its tests read the same words."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from odh.training.cluster.api import is_namespace_name
from odh.training.i18n import _, ngettext
from odh.training.kinds import KINDS, JobKind

MAX_JOBS = 100  # the most jobs one bulk action names (a page of the list is far fewer)


class Action(enum.StrEnum):
    SUSPEND = "suspend"
    RESUME = "resume"
    DELETE = "delete"

    @property
    def needs(self) -> str:
        """The verb the cluster must allow on the job's kind: `update` to suspend or
        resume (a patch of its spec), `delete` to delete."""
        return "delete" if self is Action.DELETE else "update"

    @property
    def label(self) -> str:
        return {Action.SUSPEND: _("Suspend"), Action.RESUME: _("Resume"),
                Action.DELETE: _("Delete")}[self]


class Outcome(enum.StrEnum):
    DONE = "done"
    ALREADY = "already"
    REFUSED = "refused"


@dataclass(frozen=True)
class JobRef:
    namespace: str
    kind: JobKind
    name: str

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.kind.slug}/{self.name}"


@dataclass(frozen=True)
class Result:
    job: JobRef
    outcome: Outcome
    text: str  # what happened, in a sentence


def parse_refs(values: Iterable[str]) -> tuple[list[JobRef], list[str]]:
    """The jobs named `<project>/<type>/<name>`, each once, in the order given; and the
    values that name no job (shown back, never acted on)."""
    jobs: dict[str, JobRef] = {}
    unreadable: list[str] = []
    for value in values:
        parts = str(value).strip().split("/")
        kind = KINDS.get(parts[1]) if len(parts) == 3 else None
        if kind is None or not is_namespace_name(parts[0]) or not parts[2]:
            unreadable.append(str(value)[:120])
            continue
        job = JobRef(parts[0], kind, parts[2][:253])
        jobs.setdefault(job.ref, job)
    return list(jobs.values()), unreadable


def done_text(action: Action) -> str:
    return {Action.SUSPEND: _("Suspended: its Workers are stopped until you resume it."),
            Action.RESUME: _("Resuming."),
            Action.DELETE: _("Being deleted with its Launcher and Workers.")}[action]


def already_text(action: Action) -> str:
    return {Action.SUSPEND: _("Already suspended: nothing was changed."),
            Action.RESUME: _("Not suspended: nothing was changed."),
            Action.DELETE: _("Already gone.")}[action]


def gone_text() -> str:
    return _("It no longer exists: nothing was changed.")


def no_access_text(job: JobRef) -> str:
    return _("Not changed: you have no access to the project “%(project)s”.") % {
        "project": job.namespace}


def not_exported_text(job: JobRef) -> str:
    return _("Not exported: you have no access to the project “%(project)s”.") % {
        "project": job.namespace}


def not_allowed_text(action: Action, job: JobRef, visible: bool) -> str:
    """Why a job in a project the person may not change is left alone."""
    if not visible:
        return no_access_text(job)
    if action is Action.DELETE:
        return _("Not deleted: you may not delete %(kinds)s in “%(project)s”.") % {
            "kinds": job.kind.plural_label, "project": job.namespace}
    return _("Not changed: you may view but not change %(kinds)s in “%(project)s”.") % {
        "kinds": job.kind.plural_label, "project": job.namespace}


def summary(results: list[Result]) -> str:
    """"2 done, 1 refused, 1 already so": the line announced when the results are shown."""
    counts = {o: sum(r.outcome is o for r in results) for o in Outcome}
    parts = []
    if counts[Outcome.DONE]:
        parts.append(ngettext("%(count)d job done", "%(count)d jobs done",
                              counts[Outcome.DONE]) % {"count": counts[Outcome.DONE]})
    if counts[Outcome.ALREADY]:
        parts.append(ngettext("%(count)d already so", "%(count)d already so",
                              counts[Outcome.ALREADY]) % {"count": counts[Outcome.ALREADY]})
    if counts[Outcome.REFUSED]:
        parts.append(ngettext("%(count)d refused", "%(count)d refused",
                              counts[Outcome.REFUSED]) % {"count": counts[Outcome.REFUSED]})
    return ", ".join(parts)

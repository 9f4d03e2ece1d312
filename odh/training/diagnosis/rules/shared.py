"""What the failure rules share: the meaning of an exit code, and a cause's evidence with
the job's own verdict after it."""

from __future__ import annotations

from odh.training.diagnosis.common import job_verdict
from odh.training.diagnosis.facts import Facts
from odh.training.diagnosis.model import Evidence
from odh.training.i18n import _


def exit_meaning(code: int | None) -> str:
    meanings = {
        1: _("a general error in the program"), 2: _("wrong arguments or a missing file"),
        126: _("the program is not executable"), 127: _("the program was not found"),
        130: _("interrupted (SIGINT)"), 134: _("aborted (SIGABRT)"),
        137: _("killed (SIGKILL), usually for memory"),
        139: _("a segmentation fault (SIGSEGV)"), 143: _("stopped (SIGTERM)"),
    }
    return meanings.get(code or 0, "")


def consequence(facts: Facts, evidence: list[Evidence]) -> list[Evidence]:
    """The cause's evidence, then what the job itself said of its end (its verdict)."""
    verdict = job_verdict(facts)
    return evidence + ([verdict] if verdict else [])

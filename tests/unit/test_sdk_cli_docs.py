"""docs/: the SDK reference names every public name and method, the CLI reference every
command and flag that --help shows, and the getting-started guide the three ways in."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from odh.training import errors
from odh.training.asyncjobs import AsyncMPIJob
from odh.training.cli.parsing import VERBS, verb_parser
from odh.training.jobs import MPIJob, TrainJob
from odh.training.sdk import TrainingClient

DOCS = Path(__file__).resolve().parents[2] / "docs"
SDK_NAMES = ["MPIJob", "AsyncMPIJob", "TrainJob", "AsyncTrainJob", "list_runtimes",
             "NotServed", "ResourceSpec", "JobStatus", "Phase", "QuotaWarning",
             "SettingWarning",
             "TrainingClient", "ODHError", "ValidationError", "AuthenticationError",
             "ResourceQuotaExceeded", "JobFailedError", "JobTimeoutError", "ClusterError",
             "Unauthorized", "Forbidden", "QuotaExceeded", "NotFound", "Conflict", "Invalid",
             "ClusterUnavailable"]


def _public(cls: type) -> list[str]:
    return sorted(name for name, _value in inspect.getmembers(cls)
                  if not name.startswith("_") and name not in ("kind",))


def _headings(path: Path) -> str:
    return "\n".join(line for line in path.read_text().splitlines() if line.startswith("#"))


@pytest.mark.parametrize("name", SDK_NAMES)
def test_the_sdk_reference_has_a_heading_for_every_public_name(name):
    assert re.search(rf"^#+ .*`{name}[`(.]", _headings(DOCS / "sdk-reference.md"), re.M), name


@pytest.mark.parametrize("cls", [MPIJob, AsyncMPIJob, TrainJob, TrainingClient])
def test_the_sdk_reference_documents_every_method(cls):
    text = (DOCS / "sdk-reference.md").read_text()
    missing = [m for m in _public(cls) if f"{m}(" not in text and f".{m}`" not in text]
    assert not missing, (cls.__name__, missing)


def test_every_exception_attribute_is_documented():
    text = (DOCS / "sdk-reference.md").read_text()
    for attribute in ("message", "code", "details", "suggestions", "field", "logs", "status",
                      "summary", "diagnosis", "culprit"):
        assert f"`{attribute}`" in text, attribute
    assert errors.ODHError.__doc__


@pytest.mark.parametrize("verb", VERBS)
def test_the_cli_reference_documents_every_flag(verb):
    text = (DOCS / "cli-reference.md").read_text()
    assert f"odh training {verb}" in text
    for action in verb_parser(verb, "odh training")._actions:
        if action.help == "==SUPPRESS==":
            continue
        longest = max(action.option_strings, key=len, default="")
        if longest and longest != "--help":
            assert f"`{longest}" in text, (verb, longest)


def test_the_cli_reference_has_the_exit_codes_completion_and_the_ci_example():
    text = (DOCS / "cli-reference.md").read_text()
    assert "odh completion bash" in text and "odh-training" in text
    assert "grep -q 'Status: Running'" in text
    for code in ("0", "1", "2"):
        assert re.search(rf"`{code}`", text), code


def test_getting_started_shows_the_browser_the_cli_and_the_sdk():
    text = (DOCS / "getting-started.md").read_text()
    for needed in ("make demo", "http://127.0.0.1:8000", "pip install .",
                   "odh training create mpijob", "from odh.training import", "MPIJob(",
                   "JobFailedError", "oc login"):
        assert needed in text, needed

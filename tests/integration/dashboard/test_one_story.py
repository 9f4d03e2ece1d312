"""One story per job: every place that says why a demo job is where it is says the same
line (odh/training/diagnosis/story.py): the job list's row, the Status card, the administrator's
waiting table, `odh training describe`'s Step and the SDK's `status().headline`, in English;
and the dashboard's places in French too, translated, not left in English."""

from __future__ import annotations

import io
import re

import pytest
from django.conf import settings
from django.urls import reverse
from kubernetes import client as k8s

from odh.training import MPIJob
from odh.training.cli import main as odh_training
from odh.training.sdk import TrainingClient
from tests.page_text import ids_starting, text_of

SEVERITY = re.compile(r"^(Error|Warning|Hint|Erreur|Avertissement|Astuce|Conseil) ?: ?")
DURATION = re.compile(r"\b\d+[dhms](?: \d+[hms])*\b")


def _demo_jobs(cluster) -> list[tuple[str, str, str]]:
    with cluster.api_client("admin") as api:
        custom = k8s.CustomObjectsApi(api)
        found = []
        for group, version, plural, slug in (("kubeflow.org", "v2beta1", "mpijobs", "mpijob"),
                                             ("kubeflow.org", "v1", "pytorchjobs", "pytorchjob"),
                                             ("kubeflow.org", "v1", "tfjobs", "tfjob")):
            for job in custom.list_cluster_custom_object(group, version, plural)["items"]:
                found.append((job["metadata"]["namespace"], slug, job["metadata"]["name"]))
    return sorted(found)


def _line(text: str) -> str:
    """The line as said, its severity's word aside, and a duration in it (a hang's "no new
    log line for 19m 18s", counted as each place reads it) as <duration>."""
    return DURATION.sub("<duration>", SEVERITY.sub("", " ".join(text.split())))


def _dashboard_lines(admin, jobs) -> dict[tuple[str, str, str], dict[str, str]]:
    """Each job's line in the list row, its Status card and (waiting jobs) the admin's
    waiting table, as the page shows them in the client's language."""
    lines: dict[tuple[str, str, str], dict[str, str]] = {}
    listed = admin.get(reverse("training-job-list"), {"all": "1"}).content.decode()
    waiting = admin.get(reverse("training-cluster-overview")).content.decode()
    for cell in ids_starting(listed, "row-diagnosis-"):
        rest = cell.removeprefix("row-diagnosis-")
        for (ns, slug, name) in jobs:  # the cell's id: the job, then its state's key
            key = rest.removeprefix(f"{ns}-{slug}-{name}-")
            if key != rest and re.match(r"[0-9a-f]{16}-", key):
                lines.setdefault((ns, slug, name), {})["list"] = _line(text_of(listed, cell))
    for ref in jobs:
        page = admin.get(reverse("training-job-detail", args=ref)).content.decode()
        story = ids_starting(page, "job-story-")
        assert len(story) == 1, (ref, story)
        lines.setdefault(ref, {})["status card"] = _line(text_of(page, story[0]))
        if f'id="waiting-{ref[0]}-{ref[1]}-{ref[2]}"' in waiting:
            lines[ref]["admin"] = _line(text_of(waiting, "why-waiting-" + "-".join(ref)))
    return lines


def _cli_and_sdk_lines(cluster, ref) -> dict[str, str]:
    ns, slug, name = ref
    user = "bob" if ns == "research" else "alice"
    out = io.StringIO()
    assert odh_training(["describe", slug, name, "-n", ns, "--kubeconfig",
                         str(cluster.kubeconfig(user))], out=out) == 0
    step = re.search(r"^\s*Step: (.*)$", out.getvalue(), re.M).group(1).strip()
    found = {"describe": _line(step)}
    if slug == "mpijob":
        with TrainingClient(kubeconfig=str(cluster.kubeconfig(user))) as client:
            found["status()"] = _line(MPIJob.get(name, ns, client=client).status().headline)
    return found


@pytest.fixture(scope="module")
def jobs(demo_cluster):
    return _demo_jobs(demo_cluster)


def _agree(lines: dict[str, str]) -> bool:
    return len(set(lines.values())) == 1


def test_every_place_tells_each_demo_job_the_same_story(admin, demo_cluster, jobs):
    # jobs move on while they are read (the demo runs at 20x): a job whose places disagree
    # is read again, and must agree then
    told = _dashboard_lines(admin, jobs)
    disagree = {}
    for ref in jobs:
        lines = {**told.get(ref, {}), **_cli_and_sdk_lines(demo_cluster, ref)}
        if not _agree(lines):
            again = {**_dashboard_lines(admin, jobs).get(ref, {}),
                     **_cli_and_sdk_lines(demo_cluster, ref)}
            if not _agree(again):
                disagree[ref] = again
    assert disagree == {}, __import__("pprint").pformat(disagree, width=200)
    # the stories are the diagnosis' where it has something to say, never the old steps
    assert told[("team-cv", "mpijob", "vit-l-cpu-heavy")]["status card"].startswith(
        "The project's LimitRange refuses the Workers")
    assert told[("team-nlp", "mpijob", "llama-70b-lora")]["list"].startswith("Queued")
    assert told[("team-nlp", "mpijob", "bert-qa-squad")]["admin"] == (
        "The volume claim “squad-data” does not exist in team-nlp")


def test_the_dashboards_stories_are_translated(admin, demo_cluster, jobs):
    english = _dashboard_lines(admin, jobs)
    admin.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
    french = _dashboard_lines(admin, jobs)
    untranslated = {ref: lines for ref, lines in french.items()
                    if set(lines.values()) & set(english.get(ref, {}).values())}
    disagree = {ref: lines for ref, lines in french.items() if not _agree(lines)}
    if disagree:  # read again: a job may have moved on between two pages
        again = _dashboard_lines(admin, jobs)
        disagree = {ref: again[ref] for ref in disagree if not _agree(again[ref])}
    assert disagree == {}, __import__("pprint").pformat(disagree, width=200)
    assert untranslated == {}


@pytest.mark.parametrize("name", ["llama2-7b-sft", "bert-qa-squad", "t5-wandb-logging"])
def test_the_sdks_step_tells_the_story_describe_and_diagnose_tell(demo_cluster, name):
    """`status().step` (what the SDK's examples print) is the job's story, as `headline`,
    `diagnose()` and `describe`'s Step say it, not the lifecycle step ("Failed: Launcher
    exited with code 1" where the job's Worker 1 ran out of GPU memory)."""
    described = _cli_and_sdk_lines(demo_cluster, ("team-nlp", "mpijob", name))["describe"]
    with TrainingClient(kubeconfig=str(demo_cluster.kubeconfig("alice"))) as client:
        job = MPIJob.get(name, "team-nlp", client=client)
        status = job.status()
        found = job.diagnose()
        lifecycle = client.summary(name, "team-nlp").lifecycle_step
    assert found is not None
    assert status.step == status.headline == found.headline, (status.step, found.headline)
    assert _line(status.step) == described
    assert str(lifecycle) != status.step  # the lifecycle step, still there, is another line

"""The job list's row as the watch hub pushes it tells the story the page told: for every
demo job, a pushed row's line either carries the page's cell id (the browser keeps the
page's cell: hx-preserve) or says the same line, or fetches it as it is swapped in; so a
list never flips, half a second after it loads, to a line the job's diagnosis card
contradicts. In English, French, Japanese and Chinese (no cluster's English in their rows)."""

from __future__ import annotations

import html as htmllib
import re
import time

import pytest
from django.urls import reverse

import training.live.hub.snapshots
from tests.dashboard_support import sign_in
from tests.integration.hub.conftest import NS, Subscriber, embedded_hub
from tests.page_text import ids_starting, text_of
from tests.training_jobs import mpijob
from tests.waiting import wait_until

Cell = tuple[str, str, str]  # id, line, the address it fetches its line from ("" none)


def _cells(html: str) -> dict[str, Cell]:
    """{"<ns>-<kind>-<name>": (cell id, line, refresh)} of the rows in `html`."""
    found = {}
    for row in ids_starting(html, "job-row-"):
        ref = row.removeprefix("job-row-")
        cell = next((c for c in ids_starting(html, f"row-diagnosis-{ref}-")
                     if re.fullmatch(r"[0-9a-f]{16}-[a-z-]+", c.removeprefix(
                         f"row-diagnosis-{ref}-"))), None)
        if cell is not None:
            refresh = re.search(rf'id="{cell}"[^>]*\bhx-get="([^"]*)"', html)
            found[ref] = (cell, text_of(html, cell),
                          htmllib.unescape(refresh.group(1)) if refresh else "")
    return found


def _page_cells(client) -> dict[str, Cell]:
    found: dict[str, Cell] = {}
    page = 1
    while True:
        html = client.get(reverse("training-job-list"), {"page": page}).content.decode()
        found |= _cells(html)
        if f"page={page + 1}" not in html:
            return found
        page += 1


def _pushed_cells(hub, loop_thread, groups: list[str], language: str, expected: set[str]
                  ) -> dict[str, Cell]:
    """The rows the hub pushes to a viewer who names `groups` in `language`, when every
    job is sent again (as it is when a job changes, or a group is watched anew)."""
    from channels.layers import get_channel_layer

    from training.live.hub.groups import CONTROL_GROUP
    from training.live.hub.languages import localized, renew_message

    layer = get_channel_layer()
    listener = Subscriber(loop_thread, layer, *[localized(g, language) for g in groups])
    loop_thread.run(layer.group_send(CONTROL_GROUP, renew_message(language, groups)))
    wait_until(lambda: all(language in hub.languages.for_group(g) for g in groups), 10,
               message="the hub to hear of the viewer's language")
    hub.resend(set(hub.summaries))
    pushed: dict[str, Cell] = {}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not expected <= set(pushed):
        message = listener.poll(0.5)
        if message and "job-row-" in str(message.get("html", "")):
            pushed |= _cells(message["html"])
    listener.leave()
    return pushed


def _snapshot_cells(token: str, namespaces: list[str], language: str
                    ) -> dict[str, Cell]:
    """The rows a socket's snapshot sends when it connects (from the hub's index)."""
    from training.live import subscriptions
    from training.live.hub.languages import set_viewer_language
    from training.live.subscriptions import ViewState

    set_viewer_language(language)
    try:
        subs = [subscriptions.parse("ns", ns) for ns in namespaces]
        view = ViewState()
        subscriptions.check_access(token, subs, view)
        frames = subscriptions.snapshots(token, subs, view)
    finally:
        set_viewer_language("")
    found: dict[str, Cell] = {}
    for frame in frames:
        if "job-row-" in str(frame):
            found |= _cells(str(frame))
    return found


@pytest.mark.parametrize("language", ["en", "fr", "ja", "zh-hans"])
def test_a_pushed_row_keeps_or_tells_the_pages_line(language, demo, loop_thread, client, db,
                                                    settings, monkeypatch):
    with embedded_hub(demo, loop_thread) as hub:
        token = sign_in(client, demo, "admin")
        client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
        page = _page_cells(client)
        assert "team-cv-mpijob-vit-l-cpu-heavy" in page, sorted(page)
        if language != "en":  # every line in the viewer's language
            client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
            english = _page_cells(client)
            client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
            untranslated = {ref: cell[1] for ref, cell in page.items()
                            if cell[1] == english[ref][1]}
            assert untranslated == {}, untranslated
        namespaces = ["research", "team-cv", "team-nlp"]
        pushed = _pushed_cells(hub, loop_thread, [f"ns.{ns}" for ns in namespaces], language,
                               set(page))
        snapshot = _snapshot_cells(token, namespaces, language)
        # a web process without the hub (runwatcher elsewhere) reads its snapshot from the
        # API, without the events
        with monkeypatch.context() as m:
            m.setattr(training.live.hub.snapshots, "get_hub", lambda: None)
            unindexed = _snapshot_cells(token, namespaces, language)
        assert set(page) <= set(unindexed)
        assert set(page) <= set(pushed) and set(page) <= set(snapshot), (
            sorted(set(page) - set(pushed)), sorted(set(page) - set(snapshot)))
        differ = {}
        for source, cells in (("push", pushed), ("snapshot", snapshot),
                              ("snapshot without a hub", unindexed)):
            for ref, cell in cells.items():
                told = _told(client, cell, page[ref]) if ref in page else ""
                if told and told != page[ref][1]:
                    differ[f"{source} {ref}"] = {"page": page[ref][:2], source: cell[:2],
                                                 "fetched": told}
    assert differ == {}, __import__("pprint").pformat(differ, width=200)


def _told(client, cell: Cell, on_page: Cell) -> str:
    """The line a viewer of the page reads once a pushed `cell` is swapped in: the page's
    ("" : the same id, kept), else the pushed one, or the one it fetches."""
    if cell[0] == on_page[0]:
        return ""
    if not cell[2]:
        return cell[1]
    fetched = client.get(cell[2]).content.decode()
    found = re.search(r'\bid="(row-diagnosis-[^"]*)"', fetched)
    return text_of(fetched, found.group(1)) if found else fetched


def test_a_failed_jobs_announcement_does_not_contradict_its_card(demo, loop_thread, client, db,
                                                                 jobs):
    """The Istio sidecar resets mpirun's ssh connections (as for the demo's
    clip-mesh-finetune): the objects alone say "Launcher exited with code 1", the card
    (with the Launcher's log) that the SSH connection was reset. What the page's aria-live
    region is told of the new status says nothing the card contradicts."""
    from channels.layers import get_channel_layer

    name = "mesh-announce"
    body = mpijob(name, run_seconds=60, runPolicy={"backoffLimit": 0})
    body["spec"]["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] = "Never"
    body["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"] = {
        "annotations": {"sidecar.istio.io/inject": "true"}}
    with embedded_hub(demo, loop_thread):
        viewer = Subscriber(loop_thread, get_channel_layer(), f"job.{NS}.{name}")
        jobs.create(body)
        failed = viewer.wait_for(lambda m: m.get("status") == "Failed" and m.get("announce"),
                                 timeout=60, what="the announcement of Failed")
        viewer.leave()
        sign_in(client, demo, "alice")
        card = client.get(reverse("training-job-diagnosis", args=[NS, "mpijob", name]))
        headline = text_of(card.content.decode(), "job-diagnosis-title")
    assert "SSH connection" in headline, headline
    assert failed["announce"] in (f"Job {name} is now Failed.",
                                  f"Job {name} is now Failed: {headline}"), failed["announce"]

"""The Topology tab: the Launcher and Workers as cards grouped by node, each a link to its
logs; and the live socket each page opens (its address, what the page needs for it)."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs

from django.urls import reverse

from tests.html_checks import assert_valid

GPT2 = reverse("training-job-detail", args=["team-nlp", "mpijob", "gpt2-finetune"])
BERT = reverse("training-job-detail", args=["team-nlp", "mpijob", "bert-large-pretrain"])
VIT = reverse("training-job-detail", args=["team-cv", "mpijob", "vit-huge-pretrain"])


def _groups(body: str) -> dict[str, list[str]]:
    """Node heading -> the pod names of its cards, in page order."""
    sections = re.findall(r'<section class="dash-topo-node[^"]*"[^>]*>(.*?)</section>', body,
                          re.S)
    groups = {}
    for section in sections:
        heading = re.search(r'<h2[^>]*>(.*?)<span class="dash-topo-node__facts', section, re.S)
        title = re.sub(r"<[^>]+>", " ", heading.group(1))
        title = " ".join(title.replace("Node", "").split())
        groups[title] = re.findall(r'id="topology-pod-([^"]+)"', section)
    return groups


def test_the_tab_sits_between_overview_and_logs(alice):
    body = alice.get(BERT).content.decode()
    tabs = re.findall(r'class="pf-v6-c-tabs__link" href="\?tab=(\w+)"', body)
    assert tabs[:3] == ["overview", "topology", "logs"]


def test_eight_workers_and_the_launcher_grouped_by_node(alice):
    r = alice.get(BERT, {"tab": "topology"})
    assert r.status_code == 200
    body = r.content.decode()
    assert_valid(body)
    assert 'id="job-topology"' in body
    groups = _groups(body)
    pods = [p for names in groups.values() for p in names]
    assert len(pods) == 9
    assert sum(1 for p in pods if "-worker-" in p) == 8
    assert pods[0].startswith("bert-large-pretrain-launcher-")
    # every group is a node the pods run on; worker numbers grow down the page
    assert all(node.startswith(("gpu-a100-", "cpu-")) for node in groups)
    workers = [int(p.rsplit("-", 1)[1]) for p in pods if "-worker-" in p]
    assert workers == sorted(workers)
    assert "9 pods" in body and "Select a pod to read its logs." in body


def test_each_card_links_to_its_logs(alice):
    body = alice.get(BERT, {"tab": "topology"}).content.decode()
    card = re.search(r'<a id="topology-pod-bert-large-pretrain-worker-3"[^>]*>', body).group(0)
    assert 'href="?tab=logs&amp;pod=bert-large-pretrain-worker-3"' in card
    assert 'hx-get="?tab=logs&amp;pod=bert-large-pretrain-worker-3"' in card
    assert 'data-status="Running"' in card


def test_the_oom_killed_worker_stands_out(alice):
    body = alice.get(GPT2, {"tab": "topology"}).content.decode()
    assert_valid(body)
    card = re.search(r'<a id="topology-pod-gpt2-finetune-worker-2"[^>]*>(.*?)</a>', body, re.S)
    assert card, "no card for worker 2"
    assert "dash-topo-card--problem" in card.group(0)
    assert "OOMKilled" in card.group(1) and "exit code 137" in card.group(1)
    assert "fa-exclamation-triangle" in card.group(1)
    assert "need attention" in body or "needs attention" in body
    # the other pods were removed when the job failed (cleanPodPolicy: Running)
    assert len(re.findall(r'class="dash-topo-card dash-topo-card--problem[ "]', body)) == 1
    # the diagnosis names it: highlighted, with the same words as the Overview's card
    assert "dash-topo-card--diagnosed" in card.group(0)
    assert ("The diagnosis names this pod: Worker 2 ran out of memory and was killed (exit "
            "code 137)") in " ".join(card.group(1).split())


def test_unscheduled_workers_have_a_group_of_their_own(alice):
    body = alice.get(VIT, {"tab": "topology"}).content.decode()
    assert_valid(body)
    groups = _groups(body)
    assert "Not scheduled" in groups
    assert list(groups)[-1] == "Not scheduled"
    assert groups["Not scheduled"]


def test_the_job_page_opens_its_socket_for_this_job(alice):
    body = alice.get(BERT).content.decode()
    socket = re.search(r'<div id="live-socket"[^>]*>', body).group(0)
    assert 'hx-ext="ws,live"' in socket
    assert ('ws-connect="/ws/live/?job=team-nlp%2Fmpijob%2Fbert-large-pretrain'
            '&amp;tab=overview"') in socket
    # the htmx websocket extension (from django-htmx) and the page's live script
    assert "django_htmx/ext/hx-ws-2.min.js" in body and "js/live.js" in body
    assert 'id="live-announcer"' in body and 'aria-live="polite"' in body
    assert re.search(r'<div id="live-status"[^>]*role="status"', body)


def _socket_query(html: str) -> dict[str, list[str]]:
    socket = re.search(r'<div id="live-socket"[^>]*>', html).group(0)
    url = unescape(re.search(r'ws-connect="([^"]*)"', socket).group(1))
    assert url.startswith("/ws/live/?"), url
    return parse_qs(url.split("?", 1)[1], keep_blank_values=True)


def test_the_list_opens_one_socket_for_the_projects_its_filters_cover(alice):
    body = alice.get(reverse("training-job-list"), {"project": ""}).content.decode()
    query = _socket_query(body)
    assert query["ns"] == ["team-cv", "team-nlp"]
    # the rows the page shows, which alone are sent to it, and when it listed them
    shown = re.findall(r'<tr id="job-row-([a-z0-9-]+)-(mpijob|pytorchjob|tfjob|trainjob)-', body)
    assert len(shown) >= 3
    rows = query["rows"][0].split(",")
    assert "team-nlp/mpijob/bert-large-pretrain" in rows and len(rows) == len(shown)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:]+Z", query["listed"][0])
    only_cv = alice.get(reverse("training-job-list"), {"project": "team-cv"}).content.decode()
    assert _socket_query(only_cv)["ns"] == ["team-cv"]
    # no row shown, yet the project is followed: a job created there shows up
    none = alice.get(reverse("training-job-list"),
                     {"project": "team-nlp", "q": "no-such-job"}).content.decode()
    assert "No jobs match these filters" in none
    assert _socket_query(none)["ns"] == ["team-nlp"]
    assert _socket_query(none)["rows"] == [""]


def test_the_list_s_socket_is_outside_the_table_which_brings_its_own_out_of_band(alice):
    body = alice.get(reverse("training-job-list"), {"project": "team-cv"}).content.decode()
    assert body.index('id="live-socket"') < body.index('id="job-table"')
    assert body.count('id="live-socket"') == 1 and "hx-swap-oob" not in body.split(
        'id="live-socket"')[1].split(">")[0]
    # when the jobs were listed: the page fetches its table again for a job made later
    assert re.search(r'<div id="job-table"[^>]*data-listed-at="\d{4}-[0-9T:-]+Z"', body)
    # the table fetched by htmx (a filter, a refresh): its socket element swapped out of band
    table = alice.get(reverse("training-job-list"), {"project": "team-cv"},
                      headers={"HX-Request": "true"}).content.decode()
    assert table.lstrip().startswith('<div id="job-table"')
    socket = re.search(r'<div id="live-socket"[^>]*>', table).group(0)
    assert 'hx-swap-oob="true"' in socket and _socket_query(table)["ns"] == ["team-cv"]
    # and the notice of changes to jobs it does not show, empty until one is pushed
    assert re.search(r'<div id="job-list-off-page" class="dash-off-page" role="status"></div>',
                     table)


def test_the_list_s_socket_follows_what_it_may():
    from training.live.subscriptions import MAX_SUBSCRIPTIONS, list_namespaces

    # a project it could not wholly list is left out (every kind refused there would close
    # the socket), unless rows of it are shown
    assert list_namespaces(["a", "b", "c"], ["c"], unreadable=["b"]) == ["a", "c"]
    assert list_namespaces(["a", "b"], ["b", "b"], unreadable=["b"]) == ["a", "b"]
    # more projects than a socket may follow: those of the rows shown
    many = [f"p{i}" for i in range(MAX_SUBSCRIPTIONS + 1)]
    assert list_namespaces(many, ["p3", "p1", "p3"]) == ["p3", "p1"]


def test_a_list_of_no_project_opens_no_socket(charlie):
    body = charlie.get(reverse("training-job-list")).content.decode()
    assert "ws-connect" not in body
    # only the place a filtered table's socket would take
    assert re.search(r'<div id="live-socket"[^>]*hidden></div>', body)


def test_a_hundred_workers_get_compact_cards_grouped_by_node(db):
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from django.template.loader import render_to_string

    from odh.training.status.pods import ReplicaState

    workers = [ReplicaState(name=f"big-worker-{i}", role="Worker", index=i,
                            node=f"gpu-{i // 8}" if i < 96 else "", status="Running", gpus=1)
               for i in range(100)]
    workers[37] = ReplicaState(name="big-worker-37", role="Worker", index=37, node="gpu-4",
                               status="Failed", reason="OOMKilled", exit_code=137, gpus=1)
    launcher = ReplicaState(name="big-launcher-abcde", role="Launcher", node="cpu-0",
                            status="Running")
    html = render_to_string("training/tabs/topology.html#topology", {
        "summary": SimpleNamespace(replicas=[launcher, *workers]), "now": datetime.now(UTC),
        "oob": True})
    assert_valid(html, page=False)
    assert html.startswith('<div id="job-topology" class="dash-topology dash-topology--compact"')
    assert 'hx-swap-oob="true"' in html.split(">", 1)[0]
    groups = _groups(html)
    assert list(groups)[:3] == ["cpu-0", "gpu-0", "gpu-1"] and list(groups)[-1] == "Not scheduled"
    assert len(groups) == 14 and groups["gpu-11"] == [f"big-worker-{i}" for i in range(88, 96)]
    assert html.count("dash-topo-card--problem") == 1

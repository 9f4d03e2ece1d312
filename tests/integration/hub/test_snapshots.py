"""A connecting socket's snapshot comes from the embedded hub's index: after the access
review, no API read per viewer (training/live/hub/snapshots.py); without a hub, from the API."""

from __future__ import annotations

import re
from collections import Counter

import requests

import training.live.hub.snapshots
from tests.integration.hub.conftest import NS
from training.live import subscriptions
from training.live.subscriptions import ViewState

BERT = f"{NS}/mpijob/bert-large-pretrain"


def reads(sim) -> Counter:
    """GET and LIST requests the API server has answered, by resource."""
    text = requests.get(f"{sim.api_url}/metrics", verify=str(sim.ca_file), timeout=10,
                        headers={"Authorization": f"Bearer {sim.token('admin')}"}).text
    found = Counter()
    for labels, value in re.findall(r"^apiserver_request_total\{([^}]*)\} (\S+)$", text, re.M):
        seen = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if seen.get("verb") in ("GET", "LIST"):
            found[seen.get("resource", "")] += int(float(value))
    return found


def snapshot_and_reads(sim, kind: str, value: str) -> tuple[list, Counter]:
    """alice's snapshot of one subscription, and the API reads it took (the access
    reviews before it are not counted)."""
    token = sim.token("alice")
    subs = [subscriptions.parse(kind, value)]
    view = ViewState()
    subscriptions.check_access(token, subs, view)
    before = reads(sim)
    frames = subscriptions.snapshots(token, subs, view)
    after = reads(sim)
    return frames, Counter({r: after[r] - before[r] for r in after})


def test_a_jobs_snapshot_reads_nothing_from_the_api(hub, demo):
    frames, took = snapshot_and_reads(demo, "job", BERT)
    assert (took["mpijobs"], took["pods"], took["events"]) == (0, 0, 0)
    assert any("job-header-status" in str(f) and "Running" in str(f) for f in frames)


def test_a_projects_snapshot_reads_nothing_from_the_api(hub, demo):
    frames, took = snapshot_and_reads(demo, "ns", NS)
    assert (took["mpijobs"], took["pods"]) == (0, 0)
    assert any("job-row-team-nlp-mpijob-bert-large-pretrain" in str(f) for f in frames)


def test_without_a_hub_the_snapshot_is_read_from_the_api(hub, demo, monkeypatch):
    monkeypatch.setattr(training.live.hub.snapshots, "get_hub", lambda: None)
    frames, took = snapshot_and_reads(demo, "job", BERT)
    assert took["mpijobs"] == 1
    assert any("Running" in str(f) for f in frames)


def test_viewers_connecting_together_share_one_rendering(hub, demo):
    """Twenty sockets opening one job's page at once: its state is rendered once, not per
    socket (each still gets every frame, and its own view remembers the status)."""
    from concurrent.futures import ThreadPoolExecutor

    from training.live.hub.snapshots import RENDERS

    token = demo.token("alice")
    subs = [subscriptions.parse("job", BERT)]
    views = [ViewState() for _ in range(20)]
    for view in views:  # the reviews (asked once, then kept): pods and events allowed
        subscriptions.check_access(token, subs, view)
    made = RENDERS.made
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda v: subscriptions.snapshots(token, subs, v), views))
    assert RENDERS.made - made <= 2  # once (twice if the job changed meanwhile)
    assert all(r == results[0] for r in results)
    assert any("job-event-rows" in str(f) for f in results[0])  # the whole page, not status
    assert all(v.statuses[BERT] == "Running" for v in views)


def test_the_job_list_comes_from_the_hub_and_shows_what_the_api_would(hub, demo, client, db,
                                                                     settings):
    """alice's list with the hub in this process: the same jobs and statuses as listing
    them with her token, and no list of jobs or pods asked of the API server."""
    settings.JOBS_PER_PAGE = 100  # all of her two projects' jobs on one page
    from odh.training.cluster.client import ClusterClient
    from odh.training.kinds import KINDS
    from odh.training.status import queries
    from tests.dashboard_support import sign_in

    token = sign_in(client, demo, "alice")
    client.get("/jobs/?project=")  # warms her access answers (reviews, not counted)
    before = reads(demo)
    page = client.get("/jobs/?project=").content.decode()
    took = Counter({r: reads(demo)[r] - before[r] for r in before})
    assert (took["mpijobs"], took["pods"], took["pytorchjobs"]) == (0, 0, 0)
    with ClusterClient(demo.api_client("alice")) as api:
        expected = queries.list_summaries(api, ["team-nlp", "team-cv"], list(KINDS.values()))
    assert token
    for s in expected.summaries:
        row = f'id="job-row-{s.namespace}-{s.kind.slug}-{s.name}"'
        assert row in page, f"{s.namespace}/{s.name} missing"
    rows = re.findall(r'id="job-row-([a-z0-9-]+)"', page)
    assert len(rows) == len(expected.summaries)


def test_the_lists_diagnoses_read_the_hubs_events_not_the_projects(hub, demo, client, db,
                                                                    monkeypatch):
    """The lines that say why a listed job failed or waits need its events: with the hub
    in this process they come from its index (no list of a project's events, which grows
    with the project), and say what reading the events with alice's token says."""
    from django.core.cache import cache

    from tests.dashboard_support import sign_in

    def lines(page: str) -> dict[str, str]:  # durations as "#m #s": a second may pass
        found = re.findall(r'dash-diagnosis-line--\w+" id="([^"]+)".*?</span>([^<]*)</div>',
                           page)
        return {cell: re.sub(r"\d+", "#", line) for cell, line in found}

    sign_in(client, demo, "alice")
    with monkeypatch.context() as without_hub:
        without_hub.setattr(training.live.hub.snapshots, "get_hub", lambda: None)
        client.get("/jobs/?project=")  # warms her access answers
        cache.clear()  # no row's diagnosis kept: each is made again
        read = lines(client.get("/jobs/?project=").content.decode())
    client.get("/jobs/?project=")
    cache.clear()
    before = reads(demo)
    indexed = lines(client.get("/jobs/?project=").content.decode())
    took = Counter({r: reads(demo)[r] - before[r] for r in before})
    assert took["events"] == 0
    assert len(read) >= 3  # the demo's failed jobs say why
    assert indexed == read


def test_a_jobs_page_reads_its_events_and_pods_from_the_hub(hub, demo, client, db,
                                                         monkeypatch):
    """A job's page (Events, Topology) with the hub in this process: its events and pods
    come from the hub's index (no list of the project's events, nor of its pods by label:
    both grow with the project), the same rows as listing them with alice's token."""
    from tests.dashboard_support import sign_in

    def event_rows(page: str) -> list[str]:
        return sorted(set(re.findall(r'<tr id="(event-[^"]+)"', page)))

    def pods(page: str) -> list[str]:
        return sorted(set(re.findall(r"bert-large-pretrain-(?:worker-\d+|launcher-\w{5})",
                                     page)))

    tabs = {"events": event_rows, "topology": pods}
    sign_in(client, demo, "alice")
    read = {}
    with monkeypatch.context() as without_hub:
        without_hub.setattr(training.live.hub.snapshots, "get_hub", lambda: None)
        for tab, found in tabs.items():
            client.get(f"/jobs/{BERT}/?tab={tab}")  # warms her access answers
            read[tab] = found(client.get(f"/jobs/{BERT}/?tab={tab}").content.decode())
    for tab, found in tabs.items():
        client.get(f"/jobs/{BERT}/?tab={tab}")
        before = reads(demo)
        indexed = found(client.get(f"/jobs/{BERT}/?tab={tab}").content.decode())
        took = Counter({r: reads(demo)[r] - before[r] for r in before})
        assert (took["events"], took["pods"]) == (0, 0), tab
        assert read[tab] and indexed == read[tab], tab
    assert len(read["topology"]) == 9  # the Launcher and 8 Workers


def test_the_cluster_overview_comes_from_the_hub_with_the_numbers_the_api_gives(
        hub, demo, client, db):
    """The admin's /cluster/ with the hub in this process: the jobs, what every pod holds
    (a pod of no training job too) and the quotas from its index (no list of jobs, pods or
    quotas), the same capacity, project rows, counts and waiting jobs as reading
    everything with the admin's token."""
    from datetime import UTC, datetime

    from kubernetes import client as k8s

    from odh.training.cluster.client import ClusterClient
    from odh.training.overviews import cluster as capacity
    from tests.dashboard_support import sign_in
    from tests.waiting import wait_until
    from training.live.hub.snapshots import hub_cluster_state
    other = "not-a-training-pod"
    k8s.CoreV1Api(demo.api_client("alice")).create_namespaced_pod(NS, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": other},
        "spec": {"restartPolicy": "Never", "containers": [{
            "name": "main", "image": "registry.access.redhat.com/ubi9/ubi-minimal:9.4",
            "command": ["sleep", "infinity"],
            "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}]}})
    try:
        def held_by_the_hub() -> bool:
            return hub.index.holdings().by_namespace("cpu").get(NS, 0) >= 3
        wait_until(held_by_the_hub, 30, message="the hub adding up the pod's requests")
        sign_in(client, demo, "admin")
        assert client.get("/cluster/").status_code == 200  # warms the access answers
        before = reads(demo)
        page = client.get("/cluster/")
        took = Counter({r: reads(demo)[r] - before[r] for r in before})
        assert page.status_code == 200
        assert (took["mpijobs"], took["pytorchjobs"], took["tfjobs"], took["pods"],
                took["resourcequotas"]) == (0, 0, 0, 0, 0)
        now = datetime.now(UTC)
        with ClusterClient(demo.api_client("admin")) as api:
            kinds = api.served_kinds()
            from_api = capacity.overview(capacity.read_cluster(api, kinds, now))
            from_hub = capacity.overview(hub_cluster_state(api, kinds, now))
    finally:
        k8s.CoreV1Api(demo.api_client("alice")).delete_namespaced_pod(
            other, NS, grace_period_seconds=0)
    assert from_hub.capacity == from_api.capacity
    assert from_hub.projects == from_api.projects
    assert from_hub.jobs_by_kind == from_api.jobs_by_kind
    assert [(w.summary.namespace, w.summary.name, w.reason, w.detail)
            for w in from_hub.waiting] == [(w.summary.namespace, w.summary.name, w.reason,
                                            w.detail) for w in from_api.waiting]
    assert from_hub.waiting and from_hub.projects  # the demo has both


def test_the_hub_knows_a_trainjob_s_runtime_and_so_its_launcher(hub, demo):
    # xgboost-mpi-bench runs on mpi-distributed: a Launcher and 2 nodes, counted as the
    # job's page counts them, from the runtime the hub watches
    from datetime import UTC, datetime

    from odh.training.kinds import TRAINJOB
    from tests.waiting import wait_until

    key = ("research", "trainjob", "xgboost-mpi-bench")
    wait_until(lambda: (hub.index.job_data(key) or None) and hub.index.job_data(key).layout,
               30, message="the hub to have read the runtime")
    data = hub.index.job_data(key)
    assert data.layout["metadata"]["name"] == "mpi-distributed"
    detail = training.live.hub.snapshots.detail_of(TRAINJOB, data, datetime.now(UTC))
    assert [r.role for r in detail.summary.replicas] == ["Launcher", "Worker", "Worker"]
    assert (detail.summary.ready, detail.summary.total) == (3, 3)

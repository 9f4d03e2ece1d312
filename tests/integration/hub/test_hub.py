"""The embedded watch hub against the demo cluster, through the in-memory channel layer.

The hub is started the way the websocket consumer starts it (`ensure_started()` called
on the event loop), and a test channel joins the groups a browser tab would.
"""

from __future__ import annotations

import re

from odh.training.cluster.watch import ResilientWatch, WatchedResource
from tests.integration.hub.conftest import NS, Subscriber, dashboard_client, job_ref
from tests.training_jobs import mpijob
from tests.waiting import wait_until


def test_the_hub_watches_every_served_kind_with_the_dashboard_account(hub):
    stats = hub.stats()
    assert stats["kinds"] == ["MPIJob", "PyTorchJob", "TFJob", "TrainJob"]
    names = [w["resource"] for w in stats["watches"]]
    assert names == ["mpijobs.kubeflow.org", "pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org",
                     "trainjobs.trainer.kubeflow.org", "pods", "pods-jobset.sigs.k8s.io",
                     "events", "resourcequotas"]
    assert all(w["synced"] and w["errors"] == 0 for w in stats["watches"]), stats
    assert stats["index"]["jobs"] >= 7  # the demo's jobs in every project


def test_a_workload_that_moves_tells_the_queue_pages(hub, loop_thread, layer, jobs):
    """The demo serves Kueue: the hub watches its Workloads (apart from the job watches)
    and tells the `queues` group, with no word of what moved, when one does."""
    from training.live.hub.groups import QUEUES_GROUP

    assert hub.queue_watch is not None and hub.queue_watch.synced.wait(30)
    queues = Subscriber(loop_thread, layer, QUEUES_GROUP)
    try:
        body = mpijob("hub-queued", workers=1, run_seconds=120)
        body["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-nlp-queue"}
        jobs.create(body)  # Kueue makes it a Workload, which waits: bert holds the GPUs
        notice = queues.wait_for(lambda m: m.get("queue") is True, what="a queue notice")
        assert notice["type"] == "hub.update" and notice["job"] == "" and notice["html"] == ""
    finally:
        queues.leave()


def test_a_new_job_is_pushed_to_its_page_and_the_list(hub, loop_thread, layer, jobs):
    name = "hub-new"
    page = Subscriber(loop_thread, layer, f"job.{NS}.{name}")
    listing = Subscriber(loop_thread, layer, f"ns.{NS}")
    # long enough (at speed 50: 2.4 s) to be seen Running on a busy machine too
    jobs.create(mpijob(name, workers=2, run_seconds=120))

    row = listing.wait_for(lambda m: m["job"] == job_ref(name), what="a list row")
    assert row["type"] == "hub.update" and row["change"] == "added"
    assert f'<tr id="job-row-{NS}-mpijob-{name}" hx-swap-oob="true"' in row["html"]

    running = page.wait_for(lambda m: m["job"] == job_ref(name) and m["status"] == "Running",
                            what="Running on the job page")
    # the new status first, alone (quick to render), announced; then the page's parts
    # (the pods' own watch may be a moment behind the job's on a loaded machine: the count
    # is the one the hub has at the time the status changes)
    assert re.fullmatch(rf"Job {name} is now Running: [0-2]/2 workers", running["announce"]), \
        running["announce"]
    assert 'data-status="Running"' in running["html"]
    assert 'id="job-overview-state"' not in running["html"]
    parts = page.wait_for(lambda m: m["job"] == job_ref(name) and m["status"] == "Running"
                          and 'id="job-overview-state"' in m["html"],
                          what="the rest of the page after Running")
    order = [id(m) for m in page.messages]
    assert order.index(id(parts)) > order.index(id(running)) and parts["announce"] == ""
    html = parts["html"]
    for element in ('id="job-header-status"', 'id="job-overview-state"',
                    'id="job-overview-facts"', 'id="job-replicas"', 'id="job-conditions"'):
        assert element in html
    assert html.count('hx-swap-oob="true"') >= 5
    assert 'data-status="Running"' in html
    assert f'id="replica-{name}-worker-1"' in html
    # events arrive as new rows on top of the Events tab, in a frame of their own: the
    # HTML parser drops a <tbody> that does not start its fragment
    rows = "".join(m["event_rows"] for m in page.about(job_ref(name)) if m["event_rows"])
    assert "job-event-rows" not in html
    assert rows.startswith('<tbody hx-swap-oob="afterbegin:#job-event-rows"')
    assert "MPIJobCreated" in rows
    assert re.findall(r'<tr id="event-[^"]+" data-event-type="(Normal|Warning)"', rows)

    done = page.wait_for(lambda m: m["job"] == job_ref(name) and m["status"] == "Succeeded",
                         what="Succeeded on the job page")
    assert done["announce"].startswith(f"Job {name} is now Succeeded")
    # with new rows, the Events tab's timeline in words comes whole: a Worker's start-up
    # is one line
    timelines = [m["event_timeline"] for m in page.about(job_ref(name))
                 if m.get("event_timeline")]
    assert timelines[-1].startswith('<div id="job-event-timeline" hx-swap-oob="true"')
    assert "Worker 1 started (" in "".join(timelines)
    # the same to every viewer: nothing personal in what is pushed
    for message in page.messages + listing.messages:
        assert "csrfmiddlewaretoken" not in message["html"]
        assert "alice" not in message["html"]
    # the list row follows the status too
    listing.wait_for(lambda m: m["job"] == job_ref(name) and m["status"] == "Succeeded",
                     what="Succeeded in the list")


def test_suspending_a_job_is_announced(hub, loop_thread, layer, jobs):
    name = "hub-suspend"
    page = Subscriber(loop_thread, layer, f"job.{NS}.{name}")
    jobs.create(mpijob(name, workers=1, run_seconds=3600))
    page.wait_for(lambda m: m["status"] == "Running", what="Running")
    jobs.patch(name, {"spec": {"runPolicy": {"suspend": True}}})
    suspended = page.wait_for(lambda m: m["status"] == "Suspended", what="Suspended")
    assert suspended["announce"] == f"Job {name} is now Suspended."
    assert 'data-status="Suspended"' in suspended["html"]
    # only a change of status is announced
    later = [m for m in page.messages if m["status"] == "Suspended"][1:]
    assert all(m["announce"] == "" for m in later)


def test_a_burst_of_pod_changes_is_coalesced(hub, demo, loop_thread, layer, jobs):
    """Eight Workers starting change pods dozens of times; viewers get a few updates."""
    name = "hub-burst"
    page = Subscriber(loop_thread, layer, f"job.{NS}.{name}")
    pod_changes = ResilientWatch(dashboard_client(demo), WatchedResource(
        "pods", label_selector=f"training.kubeflow.org/job-name={name}")).start()
    try:
        assert pod_changes.wait_synced(30)
        jobs.create(mpijob(name, workers=8, run_seconds=3600))
        # Running is announced once, with the Workers running at that moment (all 8, or
        # fewer on a busy machine): the burst is the pods' changes around it
        page.wait_for(lambda m: m["status"] == "Running", what="Running")
        wait_until(lambda: pod_changes.events >= 9 * 3, message=lambda: pod_changes.stats())
        # let the last pod changes reach the page, then compare
        wait_until(lambda: page.poll(0.5) is None, message="the page to settle")
        updates = len(page.about(job_ref(name)))
        assert updates < pod_changes.events, (updates, pod_changes.events)
    finally:
        pod_changes.stop()


def test_a_new_status_goes_out_at_once_and_the_pods_ending_after_it(hub, demo, loop_thread,
                                                                     layer, jobs):
    """A suspend changes the job, then its pods (terminating, deleted) and events: the
    first update is the new status, and what follows is coalesced into few more."""
    name = "hub-status-first"
    page = Subscriber(loop_thread, layer, f"job.{NS}.{name}")
    jobs.create(mpijob(name, workers=4, run_seconds=3600))
    # Running is announced once, with the Workers running at that moment (fewer than 4 on a
    # busy machine): wait for the hub to see all 4, then for their updates to settle
    page.wait_for(lambda m: m["status"] == "Running", what="Running")
    key = (NS, "mpijob", name)
    wait_until(lambda: hub.summaries[key].workers_ready == 4,
               message=lambda: f"4/4 Workers running: {hub.summaries[key].workers_ready}")
    wait_until(lambda: page.poll(0.5) is None, message="the page to settle")
    pod_changes = ResilientWatch(dashboard_client(demo), WatchedResource(
        "pods", label_selector=f"training.kubeflow.org/job-name={name}")).start()
    try:
        assert pod_changes.wait_synced(30)
        before = len(page.about(job_ref(name)))
        jobs.patch(name, {"spec": {"runPolicy": {"suspend": True}}})

        def since_suspend() -> list[dict]:
            page.poll()
            return page.about(job_ref(name))[before:]
        wait_until(lambda: any(m["status"] != "Running" for m in since_suspend()),
                   message="the first update")
        # a running job's progress may have been on its way as the suspend was made: at
        # most one such update, then the new status
        updates = since_suspend()
        turn = next(i for i, m in enumerate(updates) if m["status"] != "Running")
        assert turn <= 1, updates[:turn]
        first = updates[turn]
        assert first["status"] == "Suspended"
        assert first["announce"] == f"Job {name} is now Suspended."
        assert 'data-status="Suspended"' in first["html"] and 'id="job-replicas"' not in \
            first["html"]  # the status alone: the page's parts follow
        wait_until(lambda: pod_changes.events >= 2 * 5, message=lambda: pod_changes.stats())
        wait_until(lambda: page.poll(0.5) is None, message="the page to settle")
        updates = since_suspend()[turn:]
        assert all(m["status"] == "Suspended" for m in updates)
        assert 'id="job-replicas"' in updates[-1]["html"]
        # the status, the page's parts, the pods' ending (one more if the window split it)
        assert len(updates) <= 4 < pod_changes.events, (len(updates), pod_changes.events)
    finally:
        pod_changes.stop()


def test_nothing_is_rendered_for_a_job_nobody_watches_until_a_page_names_it(
        hub, loop_thread, layer, jobs):
    """The hub renders only for the groups pages name to it; a page that names its group
    after a change (its snapshot may predate the change) is sent the job's state at once."""
    name = "hub-unwatched"
    ref = job_ref(name)
    jobs.create(mpijob(name, workers=1, run_seconds=3600, runPolicy={"suspend": True}))
    key = (NS, "mpijob", name)
    wait_until(lambda: key in hub.summaries and hub.summaries[key].status == "Suspended",
               message="the hub to see the job")
    # in the group, but not named to the hub: like a page whose word has not arrived yet
    page = Subscriber.__new__(Subscriber)
    page.loop, page.layer, page.groups, page.messages = loop_thread, layer, (), []
    page.named_at = float("inf")  # it does not renew either
    page.channel = loop_thread.run(layer.new_channel())
    loop_thread.run(layer.group_add(f"job.{NS}.{name}", page.channel))
    jobs.patch(name, {"spec": {"runPolicy": {"suspend": False}}})
    wait_until(lambda: hub.summaries[key].status == "Running", message="Running")
    assert page.poll(0.5) is None and not page.about(ref)  # nothing rendered for it
    # now it names its group: the job's current state comes at once, changed or not
    page.groups = (f"job.{NS}.{name}",)
    page.name_groups()
    sent = page.wait_for(lambda m: m.get("job") == ref, what="the job's state")
    assert sent["status"] == "Running" and 'data-status="Running"' in sent["html"]
    assert "event_rows" in sent and "MPIJobCreated" in sent["event_rows"]


def test_a_deleted_job_leaves_the_list(hub, loop_thread, layer, jobs):
    name = "hub-delete"
    page = Subscriber(loop_thread, layer, f"job.{NS}.{name}")
    listing = Subscriber(loop_thread, layer, f"ns.{NS}")
    jobs.create(mpijob(name, workers=1, run_seconds=3600))
    listing.wait_for(lambda m: m["job"] == job_ref(name), what="the row")
    jobs.delete(name)
    gone = listing.wait_for(lambda m: m["job"] == job_ref(name) and m["change"] == "deleted",
                            what="the row removed")
    assert gone["html"] == f'<tr id="job-row-{NS}-mpijob-{name}" hx-swap-oob="delete"></tr>'
    told = page.wait_for(lambda m: m["change"] == "deleted", what="the page told")
    assert told["announce"] == f"Job {name} was deleted."


def test_the_hub_keeps_one_compact_copy_of_each_pod_and_event(hub):
    """What the watches cache is what the index holds (one copy each), without
    managedFields, its repeated strings shared between objects read separately."""
    watches = {w.resource.name: w for w in hub.watches}
    pods, events = watches["pods"].items(), watches["events"].items()
    assert pods and events
    for obj in pods + events:
        assert "managedFields" not in obj["metadata"]
    namespaces = [p["metadata"]["namespace"] for p in pods
                  if p["metadata"]["namespace"] == NS]
    assert len(namespaces) >= 2 and all(n is namespaces[0] for n in namespaces)
    pod = next(p for p in pods if p["metadata"]["namespace"] == NS
               and p["metadata"].get("labels", {}).get("training.kubeflow.org/job-name"))
    job = pod["metadata"]["labels"]["training.kubeflow.org/job-name"]
    data = hub.index.job_data((NS, "mpijob", job))
    assert data is not None
    assert any(p is pod for p in data.pods)

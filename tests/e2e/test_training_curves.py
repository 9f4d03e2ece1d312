"""The Metrics tab's Training group on a finished demo job: the watcher read its Launcher's
log (loss, accuracy, throughput, learning rate) and the charts draw, by step."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.conftest import sign_in
from tests.waiting import wait_until

RESNET = "/jobs/team-cv/mpijob/resnet50-imagenet/?tab=metrics"
TRACES = "key => { const gd = document.querySelector('[data-curve=\"' + key + '\"]" \
         ".js-plotly-plot'); return gd && gd.data ? gd.data.map(t => t.x.length) : []; }"


def test_a_finished_jobs_training_charts_draw(page, live_dashboard, screenshot):
    sign_in(page, live_dashboard, "alice", RESNET)
    # the page's websocket starts the embedded watcher, which reads the finished job's log
    # once: until then the tab has no Training group
    training = page.get_by_role("heading", name="Training", exact=True)

    def shown() -> bool:
        if training.count():
            return True
        page.reload()
        return False
    wait_until(shown, 60, interval=2, message="the Training group")

    expect(page.get_by_role("heading", name="Loss", exact=True)).to_be_visible()
    expect(page.get_by_role("heading", name="Accuracy", exact=True)).to_be_visible()
    expect(page.get_by_role("heading", name="Learning rate", exact=True)).to_be_visible()
    expect(page.get_by_role("heading", name="Images per second", exact=True)).to_be_visible()
    # loss: a point mid-epoch and one at each epoch's end, for its 12 epochs
    wait_until(lambda: page.evaluate(TRACES, "loss") == [12, 12], 30,
               message=lambda: f"the loss chart drawn: {page.evaluate(TRACES, 'loss')}")
    assert page.evaluate(TRACES, "accuracy") == [12]
    chart = page.get_by_role("group", name=re.compile(r"^Chart of Loss by Step"))
    expect(chart.locator(".xtitle")).to_have_text("Step")
    expect(chart.locator(".legendtext")).to_have_text(["During epochs", "End of epoch"])

    page.get_by_text("Numbers: Accuracy").click()
    table = page.get_by_role("table", name="Accuracy")
    expect(table.get_by_role("row", name=re.compile("End of epoch"))).to_contain_text("12")
    screenshot("training-curves")

    # the Overview's success card says what the run ended with, from the same curves
    page.goto(live_dashboard + RESNET.split("?", 1)[0])
    card = page.get_by_role("region", name="What this run ended with")
    expect(card).to_be_visible()
    for title in ("Loss", "Accuracy", "Duration"):
        expect(card.get_by_role("term").filter(has_text=re.compile(f"^{title}$"))) \
            .to_be_visible()
    expect(card.locator("[data-figure=final]").first).to_have_text(re.compile(r"^\d"))

"""The job page's Queue card (training/queue_standing.py) against simcluster's Kueue: a
waiting job says where it stands and fetches the card again while it waits; an admitted
one says so; a job without a queue has no card."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.html_checks import assert_valid
from tests.integration.kueue.support import NS, _queued_job, _reserved, _waiting_with
from tests.page_text import text_of
from tests.waiting import wait_until


@pytest.fixture
def alice_page(signed_in):
    return signed_in("alice")


def _detail(name: str) -> str:
    return reverse("training-job-detail", args=[NS, "mpijob", name])


def test_a_waiting_job_says_where_it_stands_and_keeps_asking(alice_page, api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=2)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    waiting, _ = _queued_job(api, made, "waiting", "gpu-queue", workers=1)
    _waiting_with(api, waiting)
    html = alice_page.get(_detail(waiting)).content.decode()
    assert_valid(html)
    # held suspended by Kueue, it waits to start: Pending, not Suspended
    assert text_of(html, "job-header-status").startswith("Pending")
    # alice may not read the ClusterQueue: the dashboard reads what it has free with its
    # own account (a cluster setting), and the holder's end from its launcher's log
    assert text_of(html, "job-queue-standing") == (
        "Queued in gpu-queue: position 1 of 1 in this queue (ClusterQueue gpu-a100), "
        "needs 8 GPUs, 0 free now")
    # labelled lines: the estimate said no more precisely than it is
    assert re.fullmatch(r"in about (\d+h )?\d+m|unknown: .*|as soon as .*",
                        text_of(html, "job-queue-expected"))
    assert text_of(html, "job-queue-kueue").startswith(
        "couldn't assign flavors to pod set worker: insufficient unused quota")
    assert "<dt>Expected start</dt>" in html and "<dt>Kueue says</dt>" in html
    card = html[html.index('<section id="job-queue"'):].split(">", 1)[0]
    queue_url = reverse("training-job-queue", args=[NS, "mpijob", waiting])
    assert f'hx-get="{queue_url}"' in card
    assert f"&amp;queue={NS}&amp;" in html  # the page's socket is told when queues move
    # fetched again when the page's socket is told the queues moved, and every 30 s
    assert "hx-trigger=\"live:message[detail.type=='queue-changed'] from:body, every 30s\"" \
        in html.replace("&#x27;", "'")
    # the card alone, as it fetches itself; once the holder goes, it is admitted
    api["jobs"].delete_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs",
                                                holder)
    wait_until(lambda: _reserved(api, waiting), 30, message="the waiting job's admission")
    card = alice_page.get(queue_url).content.decode()
    assert text_of(card, "job-queue-standing") == (
        "Admitted by the ClusterQueue gpu-a100 (queue gpu-queue).")
    assert "hx-trigger" not in card  # nothing more to wait for


def test_a_job_without_a_queue_has_no_queue_card(alice_page, api, made):
    from tests.training_jobs import mpijob

    name = "no-queue"
    api["jobs"].create_namespaced_custom_object("kubeflow.org", "v2beta1", NS, "mpijobs",
                                                mpijob(name, workers=1, run_seconds=3600))
    made.append(name)
    html = alice_page.get(_detail(name)).content.decode()
    assert 'id="job-queue"' not in html


def test_the_list_says_where_each_waiting_row_stands(alice_page, api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=2)
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    first, _ = _queued_job(api, made, "first", "gpu-queue", workers=1)
    second, _ = _queued_job(api, made, "second", "gpu-queue", workers=1)
    _waiting_with(api, second)
    html = alice_page.get(reverse("training-job-list"), {"project": NS}).content.decode()
    assert_valid(html)
    assert text_of(html, f"row-queue-{NS}-mpijob-{first}") == "Queued: 1 of 2 in gpu-queue"
    assert text_of(html, f"row-queue-{NS}-mpijob-{second}") == "Queued: 2 of 2 in gpu-queue"
    # the row's one line is where it stands: no other step beside it
    assert f'id="row-queue-{NS}-mpijob-{holder}"' not in html  # running: not waiting

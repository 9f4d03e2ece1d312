"""The administrators' queue page (/cluster/queues/, training/views/cluster/queues.py) against
simcluster's Kueue: each ClusterQueue's quota per flavor, its admitted jobs, and its
waiting ones in Kueue's order with why they wait; it fetches itself again while open, so a
queue draining shows; people who may not see the cluster pages are refused."""

from __future__ import annotations

import re

from django.urls import reverse

from tests.html_checks import assert_valid
from tests.integration.kueue.support import (
    GROUP,
    MPI_VERSION,
    NS,
    _queued_job,
    _reserved,
    _waiting_with,
)
from tests.page_text import text_of
from tests.waiting import wait_until

URL = reverse("training-cluster-queues")


def _rows(html: str, table_id: str) -> list[str]:
    table = re.search(rf'<table[^>]*id="{table_id}".*?</table>', html, re.S).group(0)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row)).strip()
            for row in re.findall(r"<tr[^>]*data-workload=[^>]*>(.*?)</tr>", table, re.S)]


def test_an_administrator_sees_each_queue_its_quota_and_its_order(signed_in, api, made):
    holder, _ = _queued_job(api, made, "holder", "gpu-queue", workers=1, priority="low")
    wait_until(lambda: _reserved(api, holder), 30, message="the holder's admission")
    first, _ = _queued_job(api, made, "first", "gpu-queue", workers=2)
    urgent, _ = _queued_job(api, made, "urgent", "gpu-queue", workers=2, priority="high")
    _waiting_with(api, first)
    _waiting_with(api, urgent)
    admin = signed_in("admin")
    html = admin.get(URL).content.decode()
    assert_valid(html)
    assert text_of(html, "cluster-queue-gpu-a100-title") == "gpu-a100"
    facts = text_of(html, "cluster-queue-gpu-a100-facts")
    assert "Queueing BestEffortFIFO" in facts and "Admitted 1" in facts
    assert "Pending 2" in facts
    quota = re.search(r'<tr[^>]*data-flavor="a100" data-resource="nvidia.com/gpu".*?</tr>',
                      html, re.S).group(0)
    assert "8/16" in quota  # the holder's 8 GPUs of 16
    # Kueue's order: the high priority job first, though it came later
    pending = _rows(html, "cluster-queue-gpu-a100-pending")
    assert [row.split()[:2] for row in pending] == [["1", urgent], ["2", first]]
    assert "high (1000)" in pending[0]
    assert "insufficient unused quota for nvidia.com/gpu" in pending[1]
    admitted = _rows(html, "cluster-queue-gpu-a100-admitted")
    assert len(admitted) == 1 and holder in admitted[0] and "8 GPUs" in admitted[0]
    assert f'href="{reverse("training-job-detail", args=[NS, "mpijob", holder])}"' in html
    # the cohort's limits: pool-b lends at most 4 GPUs
    lending = re.search(r'id="cluster-queue-pool-b-quota".*?data-resource="nvidia.com/gpu"'
                        r'.*?</tr>', html, re.S).group(0)
    assert ">4<" in lending.replace(" ", "")
    # the part the page fetches again: the holder goes, the urgent job is admitted
    assert "live:message[detail.type=='queue-changed'] from:body, every 30s" in \
        html.replace("&#x27;", "'")
    assert "queue=%2A" in html  # its socket follows every queue
    api["jobs"].delete_namespaced_custom_object(GROUP, MPI_VERSION, NS, "mpijobs", holder)
    wait_until(lambda: _reserved(api, urgent), 30, message="the urgent job's admission")
    part = admin.get(URL, HTTP_HX_REQUEST="true").content.decode()
    assert part.lstrip().startswith('<div id="queues"')
    assert [row.split()[:2] for row in _rows(part, "cluster-queue-gpu-a100-pending")] == [
        ["1", first]]
    assert urgent in _rows(part, "cluster-queue-gpu-a100-admitted")[0]


def test_people_who_may_not_see_the_cluster_pages_are_refused(signed_in):
    response = signed_in("alice").get(URL)
    assert response.status_code == 403
    assert "cluster administrators" in response.content.decode()

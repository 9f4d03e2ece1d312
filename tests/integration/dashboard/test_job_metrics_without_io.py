"""A cluster whose Prometheus has no network or disk series (its scrape drops cAdvisor's
container_network_* and container_fs_*: simcluster's --prometheus-drop): the Metrics tab
draws GPU, CPU and memory, no empty network or disk chart, and says why in one sentence."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests import simcluster_process
from tests.html_checks import assert_valid

pytestmark = pytest.mark.usefixtures("demo_prometheus")
BERT = reverse("training-job-detail", args=["team-nlp", "mpijob", "bert-large-pretrain"])
BERT_JSON = reverse("training-job-metrics", args=["team-nlp", "mpijob", "bert-large-pretrain"])


@pytest.fixture(scope="module")
def demo_cluster(tmp_path_factory):
    """The demo, its Prometheus without network and disk series (this module's alone)."""
    cluster = simcluster_process.start(tmp_path_factory.mktemp("no-io") / "state",
                                       scenario="demo", speed=20,
                                       extra=["--prometheus-drop", "container_(network|fs)_.*"])
    yield cluster
    cluster.stop()




def test_no_empty_io_chart_but_one_sentence(alice):
    body = alice.get(BERT, {"tab": "metrics", "range": "15m"}).content.decode()
    assert_valid(body)
    assert re.findall(r'data-chart="([a-z_]+)"', body) == ["gpu_util", "gpu_memory", "cpu",
                                                           "memory"]
    sentence = re.search(r"<p[^>]*data-metrics-io-missing[^>]*>(.*?)</p>", body, re.S)
    assert sentence and "no network or disk I/O series" in sentence.group(1)
    data = alice.get(BERT_JSON, {"range": "15m"}).json()
    assert data["charts"]["cpu"]["series"]
    assert data["charts"]["network_receive"]["series"] == []

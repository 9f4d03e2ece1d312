"""The Overview's CPU and memory per pod (odh.training.metrics.podnow): used now beside the
containers' requests and limits, "-" where Prometheus said nothing."""

from __future__ import annotations

from decimal import Decimal

from odh.training.metrics.podnow import pod_figures


def _pod(name: str, *containers: dict) -> dict:
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": f"c{i}", "resources": r}
                                    for i, r in enumerate(containers)]}}


def test_used_against_the_sum_of_the_containers_requests_and_limits():
    pods = [_pod("job-worker-0", {"requests": {"cpu": "2", "memory": "8Gi"},
                                  "limits": {"cpu": "4", "memory": "8Gi"}},
                 {"requests": {"cpu": "500m", "memory": "1Gi"}})]
    usage = {"job-worker-0": {"cpu": Decimal("1.234"), "memory": Decimal(4 * 2**30)}}
    cpu, memory = pod_figures(pods, usage)["job-worker-0"]
    assert cpu.text == "1.23 / 2.5 (limit 4)"
    assert memory.text == "4Gi / 9Gi (limit 8Gi)"


def test_without_prometheus_or_requests():
    pods = [_pod("job-launcher", {"limits": {"cpu": "1"}}), _pod("job-worker-0", {})]
    figures = pod_figures(pods, None)
    assert [f.text for f in figures["job-launcher"]] == ["- / 1 (limit 1)", "- / -"]
    assert [f.text for f in figures["job-worker-0"]] == ["- / -", "- / -"]

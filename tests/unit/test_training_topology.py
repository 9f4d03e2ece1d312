"""Grouping a job's Launcher and Workers by node, in reading order
(odh.training.status.topology)."""

from __future__ import annotations

from odh.training.status import topology
from odh.training.status.pods import ReplicaState, placeholder
from odh.training.status.summarize import summarize
from tests.unit.training_objects import (
    container_terminated,
    created,
    launcher,
    mpijob,
    running,
    worker,
)


def replica(name: str, role: str = "Worker", index: int | None = None, node: str = "",
            **kw) -> ReplicaState:
    return ReplicaState(name=name, role=role, index=index, node=node, **kw)


def test_replicas_are_grouped_by_node_launcher_first():
    replicas = [
        replica("j-worker-1", index=1, node="gpu-2", gpus=8),
        replica("j-launcher-abcde", role="Launcher", node="cpu-1"),
        replica("j-worker-0", index=0, node="gpu-1", gpus=8),
        replica("j-worker-2", index=2, node="gpu-2", gpus=8),
    ]
    topo = topology.build(replicas)
    assert [g.node for g in topo.groups] == ["cpu-1", "gpu-1", "gpu-2"]
    assert [r.name for r in topo.groups[2].replicas] == ["j-worker-1", "j-worker-2"]
    assert topo.groups[2].gpus == 16
    assert (topo.launchers, topo.others, topo.nodes, topo.unscheduled) == (1, 3, 3, 0)


def test_workers_order_by_index_as_numbers_and_nodes_follow_the_workers():
    replicas = [replica(f"j-worker-{i}", index=i, node=f"gpu-{10 - i // 4}") for i in range(12)]
    topo = topology.build(replicas)
    # gpu-10 holds workers 0-3, gpu-9 4-7, gpu-8 8-11: nodes in the order of their workers
    assert [g.node for g in topo.groups] == ["gpu-10", "gpu-9", "gpu-8"]
    assert [r.index for r in topo.groups[2].replicas] == [8, 9, 10, 11]
    order = [r.index for r in topo.replicas]
    assert order == sorted(order)


def test_node_names_compare_numbers_as_numbers_on_ties():
    assert topology.natural_key("gpu-2") < topology.natural_key("gpu-10")
    same = [replica("a", role="Worker", index=None, node="gpu-10"),
            replica("a", role="Worker", index=None, node="gpu-2")]
    assert [g.node for g in topology.build(same).groups] == ["gpu-2", "gpu-10"]


def test_pods_without_a_node_come_last_in_their_own_group():
    replicas = [
        replica("j-worker-0", index=0, node="",  reason="Unschedulable"),
        placeholder("j-worker-1", "Worker", 1, gpus=12),
        replica("j-launcher-abcde", role="Launcher", node="cpu-1"),
    ]
    topo = topology.build(replicas)
    assert [g.node for g in topo.groups] == ["cpu-1", ""]
    last = topo.groups[-1]
    assert not last.scheduled and last.dom_id == "topology-unscheduled"
    assert [r.name for r in last.replicas] == ["j-worker-0", "j-worker-1"]
    assert topo.unscheduled == 2 and topo.nodes == 1


def test_problems_are_counted_per_node():
    replicas = [replica("j-worker-0", index=0, node="gpu-1", status="Running"),
                replica("j-worker-1", index=1, node="gpu-1", status="Failed",
                        reason="OOMKilled", exit_code=137)]
    topo = topology.build(replicas)
    assert topo.groups[0].problems == 1 and topo.problems == 1
    assert topo.groups[0].dom_id == "topology-node-gpu-1"


def test_no_replicas_no_groups():
    topo = topology.build([])
    assert topo.groups == () and topo.nodes == 0 and topo.problems == 0


def test_a_summarized_job_with_an_oom_killed_worker():
    job = mpijob(workers=2, conditions=[created(), running()])
    pods = [launcher("resnet", node="cpu-1"),
            worker("resnet", 0, node="gpu-1"),
            worker("resnet", 1, node="gpu-1", phase="Failed", ready=False,
                   state=container_terminated("OOMKilled", 137, finished=870))]
    summary = summarize(job, pods)
    topo = topology.build(summary.replicas)
    assert [g.node for g in topo.groups] == ["cpu-1", "gpu-1"]
    failed = topo.groups[1].replicas[1]
    assert failed.problem and failed.reason == "OOMKilled"
    assert topo.problems == 1

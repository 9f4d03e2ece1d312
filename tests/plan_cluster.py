"""The cluster the plan's SDK and CLI tests run against: two 8-GPU nodes and a CPU node, a
16-GPU quota in team-nlp (alice edits it), a research project bob may only view."""

from __future__ import annotations

NS = "team-nlp"
IMAGE = "quay.io/team-nlp/bert:1.0"
PLAN_SCENARIO = {
    "name": "plan",
    "description": "Two 8-GPU nodes, a 16-GPU quota, alice editing team-nlp.",
    "users": [{"name": "alice", "password": "alice", "groups": ["data-scientists"]},
              {"name": "bob", "password": "bob", "groups": ["researchers"]},
              {"name": "admin", "password": "admin", "groups": ["cluster-admins"]}],
    "namespaces": [{"name": NS}, {"name": "research"}],
    "nodes": [{"name": "gpu-{i}", "count": 2, "cpu": 64, "memory": "512Gi", "gpus": 8},
              {"name": "cpu-0", "cpu": 32, "memory": "128Gi"}],
    "access": [{"user": "alice", "role": "edit", "namespaces": [NS]},
               {"user": "bob", "role": "view", "namespaces": ["research"]},
               {"user": "admin", "clusterRole": "cluster-admin"}],
    "objects": [{"apiVersion": "v1", "kind": "ResourceQuota",
                 "metadata": {"name": "team-quota", "namespace": NS},
                 "spec": {"hard": {"requests.nvidia.com/gpu": "16"}}}],
}

"""The demo scenario with and without Kubeflow Trainer, for the tests of the wizard's
TrainJobs: `demo_with_trainer()` is demo.yaml serving the Trainer and JobSet (the upstream
ClusterTrainingRuntimes of trainer-runtimes.yaml, the Trainer's roles aggregated into the
project roles: editors create TrainJobs, viewers read them, and a TrainJob running in
research), unless demo.yaml serves them itself; in both, everyone signed in may read the
cluster's runtimes; `demo_without_trainer()` is demo.yaml with
neither."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

SCENARIOS = Path(__file__).resolve().parent.parent / "simcluster" / "scenarios"
TRAINER_APIS = ("trainer", "jobset")
ROLES = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "kubeflow-trainer-edit",
                  "labels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
     "rules": [{"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs"],
                "verbs": ["create", "delete", "deletecollection", "get", "list", "patch",
                          "update", "watch"]},
               {"apiGroups": ["trainer.kubeflow.org"],
                "resources": ["trainjobs/status", "trainingruntimes",
                              "clustertrainingruntimes"],
                "verbs": ["get", "list", "watch"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "kubeflow-trainer-view",
                  "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
     "rules": [{"apiGroups": ["trainer.kubeflow.org"],
                "resources": ["trainjobs", "trainjobs/status", "trainingruntimes",
                              "clustertrainingruntimes"],
                "verbs": ["get", "list", "watch"]},
               {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets", "jobsets/status"],
                "verbs": ["get", "list", "watch"]}]},
]
# everyone signed in may read the cluster's runtimes (to choose one), as OpenShift AI grants
READERS = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "kubeflow-trainer-runtime-reader"},
     "rules": [{"apiGroups": ["trainer.kubeflow.org"], "resources": ["clustertrainingruntimes"],
                "verbs": ["get", "list", "watch"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "kubeflow-trainer-runtime-readers"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                 "name": "kubeflow-trainer-runtime-reader"},
     "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                   "name": "system:authenticated"}]},
]
RESEARCH_TRAINJOB = {
    "ago": "20m", "as": "admin",
    "manifest": {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "xgboost-mpi-bench", "namespace": "research",
                     "annotations": {"opendatahub.io/username": "bob",
                                     "simcluster.io/run-seconds": "7200"}},
        "spec": {"runtimeRef": {"name": "mpi-distributed"},
                 "trainer": {"image": "mpioperator/mpi-pi:openmpi",
                             "command": ["mpirun", "-n", "4", "/home/mpiuser/pi"],
                             "numNodes": 2, "numProcPerNode": 2,
                             "resourcesPerNode": {"limits": {"cpu": "2", "memory": "4Gi"}}}}},
}


def _demo() -> dict:
    return yaml.safe_load((SCENARIOS / "demo.yaml").read_text())


def serves_trainer(scenario: dict) -> bool:
    return "trainer" in (scenario.get("apis") or [])


def demo_with_trainer() -> dict:
    scenario = _demo()
    if serves_trainer(scenario):
        scenario["objects"] = [*scenario.get("objects", []), *READERS]
        return scenario
    scenario = copy.deepcopy(scenario)
    scenario["name"] = "demo-trainer"
    scenario["apis"] = [*scenario.get("apis", []), *TRAINER_APIS]
    runtimes = yaml.safe_load((SCENARIOS / "trainer-runtimes.yaml").read_text())
    scenario["objects"] = [*scenario.get("objects", []), *runtimes, *ROLES, *READERS]
    scenario["jobs"] = [*scenario.get("jobs", []), RESEARCH_TRAINJOB]
    return scenario


def demo_without_trainer() -> dict:
    scenario = _demo()
    scenario["name"] = "demo-no-trainer"
    scenario["apis"] = [a for a in scenario.get("apis") or [] if a not in TRAINER_APIS]
    scenario["objects"] = [o for o in scenario.get("objects") or []
                           if "trainer.kubeflow.org" not in str(o.get("apiVersion", ""))]
    scenario["jobs"] = [j for j in scenario.get("jobs") or []
                        if "trainer.kubeflow.org" not in str(j.get("manifest", {})
                                                             .get("apiVersion", ""))]
    return scenario

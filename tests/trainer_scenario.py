"""The demo scenario with and without Kubeflow Trainer, for the tests of the wizard's
TrainJobs: `demo_with_trainer()` is demo.yaml (which serves the Trainer and JobSet, with
the upstream ClusterTrainingRuntimes and the Trainer's roles aggregated into the project
roles) where everyone signed in may read the cluster's runtimes (as demo.yaml has it
too), so that the wizard lists them all; `demo_without_trainer()` is demo.yaml without the
Trainer, its runtimes and its TrainJobs."""

from __future__ import annotations

from pathlib import Path

import yaml

SCENARIOS = Path(__file__).resolve().parent.parent / "simcluster" / "scenarios"
TRAINER_APIS = ("trainer", "jobset")
# everyone signed in may read the cluster's runtimes, so that the wizard lists them all (the
# Trainer's edit and view roles, bound in a project, do not reach cluster-scoped objects)
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


def _demo() -> dict:
    return yaml.safe_load((SCENARIOS / "demo.yaml").read_text())


def demo_with_trainer() -> dict:
    scenario = _demo()
    assert "trainer" in scenario.get("apis", []), "demo.yaml serves Kubeflow Trainer"
    scenario["name"] = "demo-trainer"
    names = {(o.get("kind"), o.get("metadata", {}).get("name")) for o in scenario["objects"]}
    scenario["objects"] += [o for o in READERS
                            if (o["kind"], o["metadata"]["name"]) not in names]
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

"""What a manifest keeps from its base that the wizard does not show
(odh.training.manifests.kept)."""

from __future__ import annotations

import dataclasses

from odh.training import MPIJobSpec
from odh.training.manifests.importing import parse_manifest_text
from odh.training.manifests.kept import kept_fields
from odh.training.spec import (
    EnvVar,
    PVCVolume,
    Toleration,
    build_manifest,
    read_manifest,
)

CARRYING = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: shared}
spec:
  slotsPerWorker: 1
  runPolicy: {cleanPodPolicy: Running, schedulingPolicy: {minAvailable: 3}}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          serviceAccountName: cluster-powerful
          containers:
          - name: launcher
            image: quay.io/team/horovod:0.28
            command: [mpirun, python, train.py]
            securityContext: {privileged: true}
    Worker:
      replicas: 2
      template:
        spec:
          hostNetwork: true
          containers:
          - name: worker
            image: quay.io/team/horovod:0.28
            volumeMounts:
            - {name: host-root, mountPath: /host}
          volumes:
          - name: host-root
            hostPath: {path: /}
"""


def test_the_fields_the_wizard_does_not_show_are_named():
    spec = parse_manifest_text(CARRYING)
    assert kept_fields(spec) == [
        "spec.runPolicy.schedulingPolicy",
        "Launcher: spec.serviceAccountName",
        "Launcher: spec.containers[launcher].securityContext",
        "Worker: spec.hostNetwork",
        "Worker: spec.containers[worker].volumeMounts[host-root]",
        "Worker: spec.volumes[host-root]",
    ]


def test_changing_what_the_wizard_shows_keeps_them_named():
    spec = parse_manifest_text(CARRYING)
    changed = dataclasses.replace(spec, workers=5, image="quay.io/team/other:1",
                                  volumes=[PVCVolume("datasets", "/data")])
    kept = kept_fields(changed)
    assert "Worker: spec.volumes[host-root]" in kept
    assert "Worker: spec.volumes[datasets]" not in kept  # the wizard shows that one
    assert "Launcher: spec.serviceAccountName" in kept


def test_nothing_is_named_without_a_base_or_for_what_the_wizard_itself_wrote():
    spec = MPIJobSpec(
        name="resnet", namespace="team-nlp", image="quay.io/team/horovod:0.28",
        command=["mpirun", "-np", "8", "python", "train.py"], workers=4, cpu_per_worker="8",
        memory_per_worker="32Gi", gpus_per_worker=2,
        env=[EnvVar("NCCL_DEBUG", "INFO"),
             EnvVar("TOKEN", value_from={"secretKeyRef": {"name": "hf", "key": "token"}})],
        volumes=[PVCVolume("datasets", "/data", read_only=True)],
        node_selector={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        tolerations=[Toleration("nvidia.com/gpu", "Exists", effect="NoSchedule")],
        priority_class="high", queue_name="q", labels={"team": "nlp"})
    assert kept_fields(spec) == []
    # a template the wizard saved, started from again (and edited): nothing hidden in it
    again = read_manifest(build_manifest(spec))
    assert kept_fields(again) == []
    assert kept_fields(dataclasses.replace(again, workers=2, cpu_per_worker="4")) == []

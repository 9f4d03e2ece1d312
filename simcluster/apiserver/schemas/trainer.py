"""Structural schemas of Kubeflow Trainer v2 (`trainer.kubeflow.org/v1alpha1`) and JobSet
(`jobset.x-k8s.io/v1alpha2`), written compactly for simcluster like schema_types.py.

They follow the Go API types of kubeflow/trainer (pkg/apis/trainer/v1alpha1) and
kubernetes-sigs/jobset (api/jobset/v1alpha2), as their CRDs publish them: unknown fields
are pruned (refused under `fieldValidation=Strict`), values are typed, required keys and
enums are checked and the CRDs' defaults are applied. Fields of the releases still in use
(Trainer v2.0's `labels`, `annotations` and `podSpecOverrides`, v2.1's
`podTemplateOverrides`, later `runtimePatches`) are all declared, so none is lost here.
Sub-objects that are long to spell out and that nothing in simcluster reads (overrides,
failure-policy rules, gang-scheduling plugins, volume claim policies) are typed at their
top and keep what they hold. The CEL rules (`x-kubernetes-validations`: immutability,
"only one of torch and mpi", name formats) are not modelled.
"""

from __future__ import annotations

from typing import Any

from simcluster.apiserver.schemas.kubeflow import (
    BOOL,
    CONDITIONS,
    CONTAINER_FIELDS,
    ENV_VAR,
    INT32,
    INT64,
    INT_OR_STRING,
    KEPT,
    LABEL_SELECTOR,
    POD_TEMPLATE,
    RESOURCES,
    ROOT_METADATA,
    STRING,
    STRING_MAP,
    STRINGS,
    array,
    default,
    kept,
    obj,
)

Obj = dict[str, Any]

INT: Obj = {"type": "integer"}
INT_OR_STR: Obj = {INT_OR_STRING: True}
ENVS = array(ENV_VAR, map_keys=("name",))
LOCAL_REF = obj(name=default(STRING, ""))
# an embedded ObjectMeta, as controller-gen writes it with generateEmbeddedObjectMeta
EMBEDDED_META = obj(annotations=STRING_MAP, finalizers=STRINGS, labels=STRING_MAP,
                    name=STRING, namespace=STRING)


def enum(*values: str) -> Obj:
    return dict(STRING, enum=list(values))


def _root(spec: Obj, status: Obj | None = None, spec_required: bool = False) -> Obj:
    fields: Obj = {"apiVersion": STRING, "kind": STRING, "metadata": ROOT_METADATA,
                   "spec": spec}
    if status is not None:
        fields["status"] = status
    return obj(*(("spec",) if spec_required else ()), **fields)


# -- JobSet (jobset.x-k8s.io/v1alpha2) ------------------------------------------------------
# batchv1.JobSpec in its CRD flavour (the pod template is schema_types' own)
JOB_SPEC = obj(
    "template",
    activeDeadlineSeconds=INT64,
    backoffLimit=INT32,
    backoffLimitPerIndex=INT32,
    completionMode=STRING,
    completions=INT32,
    managedBy=STRING,
    manualSelector=BOOL,
    maxFailedIndexes=INT32,
    parallelism=INT32,
    podFailurePolicy=kept("rules"),
    podReplacementPolicy=STRING,
    selector=LABEL_SELECTOR,
    successPolicy=kept("rules"),
    suspend=BOOL,
    template=POD_TEMPLATE,
    ttlSecondsAfterFinished=INT32,
)
JOB_TEMPLATE = obj(metadata=EMBEDDED_META, spec=JOB_SPEC)

REPLICATED_JOB = obj(
    "name", "template",
    dependsOn=array(obj("name", "status", name=STRING, status=enum("Ready", "Complete")),
                    map_keys=("name",)),
    groupName=STRING,
    name=STRING,
    replicas=default(INT32, 1),
    template=JOB_TEMPLATE,
)

JOBSET_SPEC = obj(
    coordinator=obj("replicatedJob", jobIndex=INT, podIndex=INT, replicatedJob=STRING),
    failurePolicy=obj(maxRestarts=INT32,
                      restartStrategy=enum("Recreate", "BlockingRecreate", "InPlaceRestart"),
                      rules=array(kept("action", "name"))),
    managedBy=STRING,
    network=obj(enableDNSHostnames=BOOL, publishNotReadyAddresses=BOOL, subdomain=STRING),
    replicatedJobs=array(REPLICATED_JOB, map_keys=("name",)),
    startupPolicy=obj("startupPolicyOrder",
                      startupPolicyOrder=enum("AnyOrder", "InOrder")),
    successPolicy=obj("operator", operator=enum("All", "Any"),
                      targetReplicatedJobs=STRINGS),
    suspend=BOOL,
    ttlSecondsAfterFinished=dict(INT32, minimum=0),
    volumeClaimPolicies=array(KEPT),
)

JOBSET_STATUS = obj(
    conditions=CONDITIONS,
    currentInPlaceRestartAttempt=INT32,
    previousInPlaceRestartAttempt=INT32,
    replicatedJobsStatus=array(obj(
        "active", "failed", "name", "ready", "succeeded", "suspended",
        active=INT32, failed=INT32, jobRestarts=array(INT32),
        jobRestartsCountTowardsMax=array(INT32), name=STRING, ready=INT32,
        succeeded=INT32, suspended=INT32), map_keys=("name",)),
    restarts=INT32,
    restartsCountTowardsMax=INT32,
    terminalState=STRING,
)

JOBSET = _root(JOBSET_SPEC, JOBSET_STATUS)

# -- TrainingRuntime and ClusterTrainingRuntime (trainer.kubeflow.org/v1alpha1) -------------
NUM_PROC = default(INT_OR_STR, "auto")  # `auto`, `cpu`, `gpu` or a number
ML_POLICY = obj(
    numNodes=INT32,
    torch=obj(numProcPerNode=NUM_PROC,
              elasticPolicy=obj(maxNodes=INT32, maxRestarts=INT32, metrics=array(KEPT),
                                minNodes=INT32)),
    mpi=obj(numProcPerNode=default(INT32, 1),
            mpiImplementation=dict(default(STRING, "OpenMPI"),
                                   enum=["OpenMPI", "Intel", "MPICH", ""]),
            runLauncherAsNode=default(BOOL, False),
            sshAuthMountPath=default(STRING, "/root/.ssh")),
    flux=obj(numProcPerNode=NUM_PROC),
)
RUNTIME_SPEC = obj(
    mlPolicy=ML_POLICY,
    podGroupPolicy=obj(coscheduling=obj(scheduleTimeoutSeconds=default(INT32, 60)),
                       volcano=KEPT),
    template=obj(metadata=EMBEDDED_META, spec=JOBSET_SPEC),
)
TRAINING_RUNTIME = _root(RUNTIME_SPEC)

# -- TrainJob ---------------------------------------------------------------------------------
STORAGE_INITIALIZER = obj(env=ENVS, secretRef=LOCAL_REF, storageUri=STRING)
# the trainer container's args, command, env and image are typed as a Container's
TRAINER = obj(
    numNodes=INT32,
    # int32 in Trainer >= v2.1, int-or-string (`auto`...) in v2.0: both are accepted
    numProcPerNode=INT_OR_STR,
    resourcesPerNode=RESOURCES,
    **{key: CONTAINER_FIELDS[key] for key in ("args", "command", "env", "image")},
)
TRAINJOB_SPEC = obj(
    "runtimeRef",
    activeDeadlineSeconds=dict(INT64, minimum=1),
    annotations=STRING_MAP,
    initializer=obj(dataset=STORAGE_INITIALIZER, model=STORAGE_INITIALIZER),
    labels=STRING_MAP,
    managedBy=default(STRING, "trainer.kubeflow.org/trainjob-controller"),
    podSpecOverrides=array(KEPT),
    podTemplateOverrides=array(KEPT),
    runtimePatches=array(kept("manager"), map_keys=("manager",)),
    runtimeRef=obj("name", apiGroup=default(STRING, "trainer.kubeflow.org"),
                   kind=default(STRING, "ClusterTrainingRuntime"), name=STRING),
    suspend=default(BOOL, False),
    trainer=TRAINER,
)
TRAINJOB_STATUS = obj(
    conditions=CONDITIONS,
    jobsStatus=array(obj("name", active=INT32, failed=INT32, name=STRING, ready=INT32,
                         succeeded=INT32, suspended=INT32), map_keys=("name",)),
    trainerStatus=obj(estimatedRemainingSeconds=INT32, lastUpdatedTime=STRING,
                      metrics=array(obj("name", "value", name=STRING, value=STRING)),
                      progressPercentage=INT32),
)
TRAINJOB = _root(TRAINJOB_SPEC, TRAINJOB_STATUS)

TRAINER_SCHEMAS: dict[str, Obj] = {
    "trainer.kubeflow.org/trainjobs": TRAINJOB,
    "trainer.kubeflow.org/trainingruntimes": TRAINING_RUNTIME,
    "trainer.kubeflow.org/clustertrainingruntimes": TRAINING_RUNTIME,
    "jobset.x-k8s.io/jobsets": JOBSET,
}

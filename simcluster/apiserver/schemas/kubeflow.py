"""The structural schemas of the Kubeflow custom resources, written compactly for simcluster.

They follow the shape of the CRDs the MPI and training operators install: every field of
PodSpec and Container is declared (so an unknown field is pruned there, as upstream does,
and rejected under `fieldValidation=Strict`), the commonly used parts are typed down to
their leaves with their required keys and defaults, and the rarely used sub-objects are
typed at their top and keep whatever they hold (`x-kubernetes-preserve-unknown-fields`),
so a manifest valid upstream never loses data here.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

PRESERVE = "x-kubernetes-preserve-unknown-fields"
INT_OR_STRING = "x-kubernetes-int-or-string"

STRING: Obj = {"type": "string"}
BOOL: Obj = {"type": "boolean"}
INT32: Obj = {"type": "integer", "format": "int32"}
INT64: Obj = {"type": "integer", "format": "int64"}
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
QUANTITY: Obj = {INT_OR_STRING: True, "pattern": QUANTITY_PATTERN}
PORT: Obj = {INT_OR_STRING: True}


def obj(*required: str, **properties: Obj) -> Obj:
    """An object whose fields are all declared: anything else is pruned."""
    schema: Obj = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def kept(*required: str) -> Obj:
    """An object typed at its top only: its contents are kept as sent."""
    schema: Obj = {"type": "object", PRESERVE: True}
    if required:
        schema["required"] = list(required)
    return schema


def array(items: Obj, map_keys: tuple[str, ...] = ()) -> Obj:
    schema: Obj = {"type": "array", "items": items}
    if map_keys:
        schema["x-kubernetes-list-type"] = "map"
        schema["x-kubernetes-list-map-keys"] = list(map_keys)
    return schema


def map_of(values: Obj) -> Obj:
    return {"type": "object", "additionalProperties": values}


def default(schema: Obj, value: Any) -> Obj:
    return dict(schema, default=value)


STRINGS = array(STRING)
STRING_MAP = map_of(STRING)
KEPT = kept()

LABEL_SELECTOR = obj(
    matchExpressions=array(obj("key", "operator", key=STRING, operator=STRING,
                               values=STRINGS)),
    matchLabels=STRING_MAP,
)
NODE_SELECTOR_TERM = obj(
    matchExpressions=array(obj("key", "operator", key=STRING, operator=STRING,
                               values=STRINGS)),
    matchFields=array(obj("key", "operator", key=STRING, operator=STRING, values=STRINGS)),
)
POD_AFFINITY_TERM = obj(
    "topologyKey",
    labelSelector=LABEL_SELECTOR, matchLabelKeys=STRINGS, mismatchLabelKeys=STRINGS,
    namespaceSelector=LABEL_SELECTOR, namespaces=STRINGS, topologyKey=STRING,
)
POD_AFFINITY = obj(
    preferredDuringSchedulingIgnoredDuringExecution=array(obj(
        "podAffinityTerm", "weight", podAffinityTerm=POD_AFFINITY_TERM, weight=INT32)),
    requiredDuringSchedulingIgnoredDuringExecution=array(POD_AFFINITY_TERM),
)
AFFINITY = obj(
    nodeAffinity=obj(
        preferredDuringSchedulingIgnoredDuringExecution=array(obj(
            "preference", "weight", preference=NODE_SELECTOR_TERM, weight=INT32)),
        requiredDuringSchedulingIgnoredDuringExecution=obj(
            "nodeSelectorTerms", nodeSelectorTerms=array(NODE_SELECTOR_TERM)),
    ),
    podAffinity=POD_AFFINITY,
    podAntiAffinity=POD_AFFINITY,
)

RESOURCES = obj(
    claims=array(obj("name", name=STRING, request=STRING), map_keys=("name",)),
    limits=map_of(QUANTITY),
    requests=map_of(QUANTITY),
)

KEY_REF = obj("key", key=STRING, name=default(STRING, ""), optional=BOOL)
ENV_VAR = obj(
    "name",
    name=STRING,
    value=STRING,
    valueFrom=obj(
        configMapKeyRef=KEY_REF,
        fieldRef=obj("fieldPath", apiVersion=STRING, fieldPath=STRING),
        fileKeyRef=obj("key", "path", "volumeName", key=STRING,
                       optional=default(BOOL, False), path=STRING, volumeName=STRING),
        resourceFieldRef=obj("resource", containerName=STRING, divisor=QUANTITY,
                             resource=STRING),
        secretKeyRef=KEY_REF,
    ),
)
NAME_REF = obj(name=default(STRING, ""), optional=BOOL)

HTTP_GET = obj(
    "port",
    host=STRING,
    httpHeaders=array(obj("name", "value", name=STRING, value=STRING)),
    path=STRING, port=PORT, scheme=STRING,
)
TCP_SOCKET = obj("port", host=STRING, port=PORT)
EXEC = obj(command=STRINGS)
PROBE = obj(
    exec=EXEC,
    failureThreshold=INT32,
    grpc=obj("port", port=INT32, service=default(STRING, "")),
    httpGet=HTTP_GET,
    initialDelaySeconds=INT32,
    periodSeconds=INT32,
    successThreshold=INT32,
    tcpSocket=TCP_SOCKET,
    terminationGracePeriodSeconds=INT64,
    timeoutSeconds=INT32,
)
HANDLER = obj(exec=EXEC, httpGet=HTTP_GET, sleep=obj("seconds", seconds=INT64),
              tcpSocket=TCP_SOCKET)

PROFILE = obj("type", localhostProfile=STRING, type=STRING)
SE_LINUX = obj(level=STRING, role=STRING, type=STRING, user=STRING)
WINDOWS_OPTIONS = obj(gmsaCredentialSpec=STRING, gmsaCredentialSpecName=STRING,
                      hostProcess=BOOL, runAsUserName=STRING)
CONTAINER_SECURITY = obj(
    allowPrivilegeEscalation=BOOL,
    appArmorProfile=PROFILE,
    capabilities=obj(add=STRINGS, drop=STRINGS),
    privileged=BOOL,
    procMount=STRING,
    readOnlyRootFilesystem=BOOL,
    runAsGroup=INT64,
    runAsNonRoot=BOOL,
    runAsUser=INT64,
    seLinuxOptions=SE_LINUX,
    seccompProfile=PROFILE,
    windowsOptions=WINDOWS_OPTIONS,
)
POD_SECURITY = obj(
    appArmorProfile=PROFILE,
    fsGroup=INT64,
    fsGroupChangePolicy=STRING,
    runAsGroup=INT64,
    runAsNonRoot=BOOL,
    runAsUser=INT64,
    seLinuxChangePolicy=STRING,
    seLinuxOptions=SE_LINUX,
    seccompProfile=PROFILE,
    supplementalGroups=array(INT64),
    supplementalGroupsPolicy=STRING,
    sysctls=array(obj("name", "value", name=STRING, value=STRING)),
    windowsOptions=WINDOWS_OPTIONS,
)

CONTAINER_FIELDS: dict[str, Obj] = {
    "args": STRINGS,
    "command": STRINGS,
    "env": array(ENV_VAR, map_keys=("name",)),
    "envFrom": array(obj(configMapRef=NAME_REF, prefix=STRING, secretRef=NAME_REF)),
    "image": STRING,
    "imagePullPolicy": STRING,
    "lifecycle": obj(postStart=HANDLER, preStop=HANDLER, stopSignal=STRING),
    "livenessProbe": PROBE,
    "name": STRING,
    "ports": array(obj("containerPort", containerPort=INT32, hostIP=STRING, hostPort=INT32,
                       name=STRING, protocol=default(STRING, "TCP")),
                   map_keys=("containerPort", "protocol")),
    "readinessProbe": PROBE,
    "resizePolicy": array(obj("resourceName", "restartPolicy", resourceName=STRING,
                              restartPolicy=STRING)),
    "resources": RESOURCES,
    "restartPolicy": STRING,
    "restartPolicyRules": array(obj("action", action=STRING, exitCodes=obj(
        "operator", operator=STRING, values=array(INT32)))),
    "securityContext": CONTAINER_SECURITY,
    "startupProbe": PROBE,
    "stdin": BOOL,
    "stdinOnce": BOOL,
    "terminationMessagePath": STRING,
    "terminationMessagePolicy": STRING,
    "tty": BOOL,
    "volumeDevices": array(obj("devicePath", "name", devicePath=STRING, name=STRING),
                           map_keys=("devicePath",)),
    "volumeMounts": array(obj("mountPath", "name", mountPath=STRING, mountPropagation=STRING,
                              name=STRING, readOnly=BOOL, recursiveReadOnly=STRING,
                              subPath=STRING, subPathExpr=STRING),
                          map_keys=("mountPath",)),
    "workingDir": STRING,
}
CONTAINER = obj("name", **CONTAINER_FIELDS)
EPHEMERAL_CONTAINER = obj("name", targetContainerName=STRING, **CONTAINER_FIELDS)

KEY_TO_PATH = obj("key", "path", key=STRING, mode=INT32, path=STRING)
VOLUME = obj(
    "name",
    name=STRING,
    configMap=obj(defaultMode=INT32, items=array(KEY_TO_PATH), name=default(STRING, ""),
                  optional=BOOL),
    secret=obj(defaultMode=INT32, items=array(KEY_TO_PATH), optional=BOOL,
               secretName=STRING),
    emptyDir=obj(medium=STRING, sizeLimit=QUANTITY),
    hostPath=obj("path", path=STRING, type=STRING),
    persistentVolumeClaim=obj("claimName", claimName=STRING, readOnly=BOOL),
    nfs=obj("path", "server", path=STRING, readOnly=BOOL, server=STRING),
    csi=obj("driver", driver=STRING, fsType=STRING, nodePublishSecretRef=KEPT,
            readOnly=BOOL, volumeAttributes=STRING_MAP),
    downwardAPI=obj(defaultMode=INT32, items=array(kept("path"))),
    projected=obj(defaultMode=INT32, sources=array(KEPT)),
    ephemeral=obj(volumeClaimTemplate=kept("spec")),
    image=obj(pullPolicy=STRING, reference=STRING),
    # Storage back ends nobody uses for MPI jobs: typed at the top, kept as sent.
    awsElasticBlockStore=kept("volumeID"),
    azureDisk=kept("diskName", "diskURI"),
    azureFile=kept("secretName", "shareName"),
    cephfs=kept("monitors"),
    cinder=kept("volumeID"),
    fc=KEPT,
    flexVolume=kept("driver"),
    flocker=KEPT,
    gcePersistentDisk=kept("pdName"),
    gitRepo=kept("repository"),
    glusterfs=kept("endpoints", "path"),
    iscsi=kept("iqn", "lun", "targetPortal"),
    photonPersistentDisk=kept("pdID"),
    portworxVolume=kept("volumeID"),
    quobyte=kept("registry", "volume"),
    rbd=kept("image", "monitors"),
    scaleIO=kept("gateway", "secretRef", "system"),
    storageos=KEPT,
    vsphereVolume=kept("volumePath"),
)

POD_SPEC = obj(
    "containers",
    activeDeadlineSeconds=INT64,
    affinity=AFFINITY,
    automountServiceAccountToken=BOOL,
    containers=array(CONTAINER, map_keys=("name",)),
    dnsConfig=obj(nameservers=STRINGS, options=array(obj(name=STRING, value=STRING)),
                  searches=STRINGS),
    dnsPolicy=STRING,
    enableServiceLinks=BOOL,
    ephemeralContainers=array(EPHEMERAL_CONTAINER, map_keys=("name",)),
    hostAliases=array(obj("ip", hostnames=STRINGS, ip=STRING), map_keys=("ip",)),
    hostIPC=BOOL,
    hostNetwork=BOOL,
    hostPID=BOOL,
    hostUsers=BOOL,
    hostname=STRING,
    hostnameOverride=STRING,
    imagePullSecrets=array(obj(name=default(STRING, "")), map_keys=("name",)),
    initContainers=array(CONTAINER, map_keys=("name",)),
    nodeName=STRING,
    nodeSelector=STRING_MAP,
    os=obj("name", name=STRING),
    overhead=map_of(QUANTITY),
    preemptionPolicy=STRING,
    priority=INT32,
    priorityClassName=STRING,
    readinessGates=array(obj("conditionType", conditionType=STRING)),
    resourceClaims=array(obj("name", name=STRING, resourceClaimName=STRING,
                             resourceClaimTemplateName=STRING), map_keys=("name",)),
    resources=RESOURCES,
    restartPolicy=STRING,
    runtimeClassName=STRING,
    schedulerName=STRING,
    schedulingGates=array(obj("name", name=STRING), map_keys=("name",)),
    securityContext=POD_SECURITY,
    serviceAccount=STRING,
    serviceAccountName=STRING,
    setHostnameAsFQDN=BOOL,
    shareProcessNamespace=BOOL,
    subdomain=STRING,
    terminationGracePeriodSeconds=INT64,
    tolerations=array(obj(effect=STRING, key=STRING, operator=STRING,
                          tolerationSeconds=INT64, value=STRING)),
    topologySpreadConstraints=array(obj(
        "maxSkew", "topologyKey", "whenUnsatisfiable",
        labelSelector=LABEL_SELECTOR, matchLabelKeys=STRINGS, maxSkew=INT32,
        minDomains=INT32, nodeAffinityPolicy=STRING, nodeTaintsPolicy=STRING,
        topologyKey=STRING, whenUnsatisfiable=STRING),
        map_keys=("topologyKey", "whenUnsatisfiable")),
    volumes=array(VOLUME, map_keys=("name",)),
    workloadRef=obj("name", "podGroup", name=STRING, podGroup=STRING,
                    podGroupReplicaKey=STRING),
)

POD_TEMPLATE = obj(
    metadata=obj(annotations=STRING_MAP, finalizers=STRINGS, labels=STRING_MAP, name=STRING,
                 namespace=STRING),
    spec=POD_SPEC,
)

REPLICA_SPEC = obj(replicas=INT32, restartPolicy=STRING, template=POD_TEMPLATE)

RUN_POLICY = obj(
    activeDeadlineSeconds=INT64,
    backoffLimit=INT32,
    cleanPodPolicy=STRING,
    managedBy=STRING,
    schedulingPolicy=obj(minAvailable=INT32, minResources=map_of(QUANTITY),
                         priorityClass=STRING, queue=STRING, scheduleTimeoutSeconds=INT32),
    suspend=default(BOOL, False),
    ttlSecondsAfterFinished=INT32,
)

CONDITIONS = array(kept("status", "type"), map_keys=("type",))
JOB_STATUS = obj(
    completionTime=STRING,
    conditions=CONDITIONS,
    lastReconcileTime=STRING,
    replicaStatuses=map_of(KEPT),
    startTime=STRING,
)

ROOT_METADATA: Obj = {"type": "object", PRESERVE: True}


def _resource(spec: Obj, status: Obj = JOB_STATUS) -> Obj:
    return obj(apiVersion=STRING, kind=STRING, metadata=ROOT_METADATA, spec=spec,
               status=status)


MPIJOB = _resource(obj(
    "mpiReplicaSpecs",
    launcherCreationPolicy=default(STRING, "AtStartup"),
    mpiImplementation=dict(default(STRING, "OpenMPI"), enum=["OpenMPI", "Intel", "MPICH"]),
    mpiReplicaSpecs=map_of(REPLICA_SPEC),
    runLauncherAsWorker=default(BOOL, False),
    runPolicy=RUN_POLICY,
    slotsPerWorker=default(INT32, 1),
    sshAuthMountPath=default(STRING, "/root/.ssh"),
))

PYTORCHJOB = _resource(obj(
    "pytorchReplicaSpecs",
    elasticPolicy=obj(maxReplicas=INT32, maxRestarts=INT32, metrics=array(KEPT),
                      minReplicas=INT32, nProcPerNode=INT32, rdzvBackend=STRING,
                      rdzvConf=array(obj(key=STRING, value=STRING)), rdzvHost=STRING,
                      rdzvId=STRING, rdzvPort=INT32, standalone=BOOL),
    nprocPerNode=STRING,
    pytorchReplicaSpecs=map_of(REPLICA_SPEC),
    runPolicy=RUN_POLICY,
))

TFJOB = _resource(obj(
    "tfReplicaSpecs",
    enableDynamicWorker=BOOL,
    runPolicy=RUN_POLICY,
    successPolicy=STRING,
    tfReplicaSpecs=map_of(REPLICA_SPEC),
))

SCHEMAS: dict[str, Obj] = {
    "kubeflow.org/mpijobs": MPIJOB,
    "kubeflow.org/pytorchjobs": PYTORCHJOB,
    "kubeflow.org/tfjobs": TFJOB,
}

# Custom resources simcluster serves without a modelled schema keep what they are sent.
UNMODELLED: Obj = {"type": "object", PRESERVE: True}

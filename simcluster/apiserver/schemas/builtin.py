"""Shapes of the built-in kinds, as their Go types make the API server decode them.

The real server decodes a Pod into Go structs: a field of the wrong JSON type is a 400
(`json: cannot unmarshal string into Go struct field ...`), an unknown field is dropped
(or refused under `fieldValidation=Strict`). simcluster keeps objects as JSON, so these
schemas do that decoding's job: nothing of the wrong shape reaches the store, where a
controller would trip over it. Fields are typed where simcluster reads them; objects it
does not look into keep what they are sent.
"""

from __future__ import annotations

from typing import Any

from simcluster.apiserver.schemas.kubeflow import (
    BOOL,
    INT32,
    INT64,
    INT_OR_STRING,
    KEPT,
    LABEL_SELECTOR,
    POD_SPEC,
    PORT,
    PRESERVE,
    QUANTITY_PATTERN,
    STRING,
    STRING_MAP,
    STRINGS,
    array,
    map_of,
    obj,
)

Obj = dict[str, Any]

# resource.Quantity: a JSON number or a string in quantity syntax
QUANTITY_KEY = "x-simcluster-quantity"
QUANTITY: Obj = {QUANTITY_KEY: True}
NULLABLE_STRING: Obj = {"type": "string", "nullable": True}


def typed(*required: str, **properties: Obj) -> Obj:
    """An object whose known fields are typed and whose other fields are kept."""
    return dict(obj(*required, **properties), **{PRESERVE: True})


def _builtin_quantities(schema: Any) -> Any:
    """The CRD flavour of a schema (int-or-string quantities) as the Go type decodes it."""
    if isinstance(schema, list):
        return [_builtin_quantities(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get(INT_OR_STRING) and schema.get("pattern") == QUANTITY_PATTERN:
        return QUANTITY
    return {k: _builtin_quantities(v) for k, v in schema.items()}


OBJECT_META = obj(
    name=STRING, generateName=STRING, namespace=STRING, uid=STRING, resourceVersion=STRING,
    generation=INT64, selfLink=STRING, creationTimestamp=NULLABLE_STRING,
    deletionTimestamp=NULLABLE_STRING, deletionGracePeriodSeconds=INT64,
    labels=STRING_MAP, annotations=STRING_MAP, finalizers=STRINGS,
    ownerReferences=array(obj("apiVersion", "kind", "name", "uid", apiVersion=STRING,
                              kind=STRING, name=STRING, uid=STRING, controller=BOOL,
                              blockOwnerDeletion=BOOL)),
    managedFields=array(KEPT),
)

BUILTIN_POD_SPEC = _builtin_quantities(POD_SPEC)
POD_TEMPLATE_SPEC = obj(metadata=OBJECT_META, spec=BUILTIN_POD_SPEC)
QUANTITIES = map_of(QUANTITY)
TIMESTAMP = NULLABLE_STRING


def _kind(**fields: Obj) -> Obj:
    return typed(apiVersion=STRING, kind=STRING, metadata=OBJECT_META, **fields)


POLICY_RULE = typed("verbs", apiGroups=STRINGS, resources=STRINGS, verbs=STRINGS,
                    resourceNames=STRINGS, nonResourceURLs=STRINGS)
ROLE = _kind(rules=array(POLICY_RULE),
             aggregationRule=typed(clusterRoleSelectors=array(LABEL_SELECTOR)))
BINDING = _kind(roleRef=typed("kind", "name", apiGroup=STRING, kind=STRING, name=STRING),
                subjects=array(typed("kind", "name", apiGroup=STRING, kind=STRING,
                                     name=STRING, namespace=STRING)))

BUILTIN_SCHEMAS: dict[str, Obj] = {
    "/pods": _kind(spec=BUILTIN_POD_SPEC, status=typed(
        phase=STRING, reason=STRING, message=STRING, podIP=STRING, hostIP=STRING,
        nominatedNodeName=STRING, qosClass=STRING, startTime=TIMESTAMP,
        conditions=array(KEPT), containerStatuses=array(KEPT),
        initContainerStatuses=array(KEPT), podIPs=array(KEPT))),
    "/configmaps": _kind(data=STRING_MAP, binaryData=STRING_MAP, immutable=BOOL),
    "/secrets": _kind(data=STRING_MAP, stringData=STRING_MAP, type=STRING, immutable=BOOL),
    "/services": _kind(spec=typed(
        ports=array(typed(name=STRING, protocol=STRING, appProtocol=STRING, port=INT32,
                          targetPort=PORT, nodePort=INT32)),
        selector=STRING_MAP, type=STRING, clusterIP=STRING, clusterIPs=STRINGS,
        externalIPs=STRINGS, sessionAffinity=STRING, ipFamilies=STRINGS,
        ipFamilyPolicy=STRING, internalTrafficPolicy=STRING, publishNotReadyAddresses=BOOL),
        status=KEPT),
    "/namespaces": _kind(spec=typed(finalizers=STRINGS), status=KEPT),
    "/nodes": _kind(
        spec=typed(taints=array(typed("key", "effect", key=STRING, value=STRING,
                                      effect=STRING, timeAdded=TIMESTAMP)),
                   unschedulable=BOOL, podCIDR=STRING, podCIDRs=STRINGS, providerID=STRING),
        status=typed(capacity=QUANTITIES, allocatable=QUANTITIES, conditions=array(KEPT),
                     addresses=array(KEPT), nodeInfo=KEPT, images=array(KEPT))),
    "/events": _kind(
        involvedObject=typed(kind=STRING, namespace=STRING, name=STRING, uid=STRING,
                             apiVersion=STRING, resourceVersion=STRING, fieldPath=STRING),
        reason=STRING, message=STRING, type=STRING, count=INT32, action=STRING,
        firstTimestamp=TIMESTAMP, lastTimestamp=TIMESTAMP, eventTime=TIMESTAMP,
        source=typed(component=STRING, host=STRING), reportingComponent=STRING,
        reportingInstance=STRING, series=KEPT, related=KEPT),
    "/resourcequotas": _kind(spec=typed(hard=QUANTITIES, scopes=STRINGS, scopeSelector=KEPT),
                             status=typed(hard=QUANTITIES, used=QUANTITIES)),
    "/limitranges": _kind(spec=typed(limits=array(typed(
        "type", type=STRING, max=QUANTITIES, min=QUANTITIES, default=QUANTITIES,
        defaultRequest=QUANTITIES, maxLimitRequestRatio=QUANTITIES)))),
    "/serviceaccounts": _kind(secrets=array(KEPT), imagePullSecrets=array(typed(name=STRING)),
                              automountServiceAccountToken=BOOL),
    "/persistentvolumeclaims": _kind(spec=typed(
        accessModes=STRINGS, resources=typed(requests=QUANTITIES, limits=QUANTITIES),
        storageClassName=STRING, volumeMode=STRING, volumeName=STRING,
        selector=LABEL_SELECTOR), status=KEPT),
    "batch/jobs": _kind(spec=typed(
        template=POD_TEMPLATE_SPEC, backoffLimit=INT32, completions=INT32,
        parallelism=INT32, activeDeadlineSeconds=INT64, ttlSecondsAfterFinished=INT32,
        suspend=BOOL, selector=LABEL_SELECTOR, manualSelector=BOOL, completionMode=STRING,
        podReplacementPolicy=STRING, managedBy=STRING, backoffLimitPerIndex=INT32,
        maxFailedIndexes=INT32, podFailurePolicy=KEPT, successPolicy=KEPT), status=typed(
        active=INT32, succeeded=INT32, failed=INT32, ready=INT32, terminating=INT32,
        startTime=TIMESTAMP, completionTime=TIMESTAMP, conditions=array(KEPT))),
    "rbac.authorization.k8s.io/roles": ROLE,
    "rbac.authorization.k8s.io/clusterroles": ROLE,
    "rbac.authorization.k8s.io/rolebindings": BINDING,
    "rbac.authorization.k8s.io/clusterrolebindings": BINDING,
    "networking.k8s.io/networkpolicies": _kind(spec=typed(
        podSelector=LABEL_SELECTOR, policyTypes=STRINGS, ingress=array(KEPT),
        egress=array(KEPT))),
    "storage.k8s.io/storageclasses": _kind(
        provisioner=STRING, parameters=STRING_MAP, reclaimPolicy=STRING,
        volumeBindingMode=STRING, allowVolumeExpansion=BOOL, mountOptions=STRINGS,
        allowedTopologies=array(KEPT)),
    "scheduling.k8s.io/priorityclasses": _kind(value=INT32, globalDefault=BOOL,
                                               description=STRING, preemptionPolicy=STRING),
    "oauth.openshift.io/oauthclients": _kind(
        secret=STRING, additionalSecrets=STRINGS, respondWithChallenges=BOOL,
        redirectURIs=STRINGS, grantMethod=STRING, scopeRestrictions=array(KEPT),
        accessTokenMaxAgeSeconds=dict(INT32, nullable=True),
        accessTokenInactivityTimeoutSeconds=dict(INT32, nullable=True)),
    "user.openshift.io/groups": _kind(users=STRINGS),
}

# Custom resources are decoded generically, but their metadata is still an ObjectMeta.
CUSTOM_RESOURCE = typed(apiVersion=STRING, kind=STRING, metadata=OBJECT_META)

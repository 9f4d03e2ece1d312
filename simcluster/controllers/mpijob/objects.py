"""The objects the MPI Operator creates for an MPIJob, built as v0.8.2 builds them.

Every builder takes the *defaulted* MPIJob (see mpijob_validation.apply_defaults) and
returns a manifest owned by it: Service `<job>`, ConfigMap `<job>-config` (hostfile and
discover_hosts.sh), Secret `<job>-ssh` (a fresh ECDSA P-521 key pair), worker Pods
`<job>-worker-<i>` and the launcher batch/v1 Job `<job>-launcher`.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from simcluster.behaviour import MAX_REPLICAS
from simcluster.controllers.conditions import controller_ref

Obj = dict[str, Any]

OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
OPERATOR_NAME = "mpi-operator"

CONFIG_MOUNT_PATH = "/etc/mpi"
ROOT_SSH_PATH = "/root/.ssh"
SSH_VOLUME = "ssh-auth"
CONFIG_VOLUME = "mpi-job-config"
RESTART_POLICY_MESSAGE = ("Restart policy in pod template overridden by restart policy in "
                          "replica spec")

SSH_ITEMS = [{"key": "ssh-privatekey", "path": "id_rsa"},
             {"key": "ssh-publickey", "path": "id_rsa.pub"},
             {"key": "ssh-publickey", "path": "authorized_keys"}]
CONFIG_ITEMS = [{"key": "hostfile", "path": "hostfile", "mode": 0o444},
                {"key": "discover_hosts.sh", "path": "discover_hosts.sh", "mode": 0o555}]
CONNECTION_ATTEMPTS = "-o ConnectionAttempts=10"


def default_labels(job_name: str, role: str) -> dict[str, str]:
    return {OPERATOR_NAME_LABEL: OPERATOR_NAME, JOB_NAME_LABEL: job_name, JOB_ROLE_LABEL: role}


def worker_name(job: Obj, index: int) -> str:
    return f"{job['metadata']['name']}-worker-{index}"


def replica_spec(job: Obj, rtype: str) -> Obj | None:
    rs = (job.get("spec") or {}).get("mpiReplicaSpecs", {}).get(rtype)
    return rs if isinstance(rs, dict) else None


def requested_workers(job: Obj) -> int:
    rs = replica_spec(job, "Worker")
    n = rs.get("replicas") if rs else 0
    return n if isinstance(n, int) and not isinstance(n, bool) else 0


def worker_replicas(job: Obj) -> int:
    """The workers simcluster's operator manages: the requested count, at most
    MAX_REPLICAS (the rest are never created, and the hostfile does not list them)."""
    return min(requested_workers(job), MAX_REPLICAS)


def _meta(job: Obj, name: str, labels: dict[str, str]) -> Obj:
    return {"name": name, "namespace": job["metadata"]["namespace"], "labels": labels,
            "ownerReferences": [controller_ref(job)]}


def _host(job: Obj, pod_name: str) -> str:
    m = job["metadata"]
    return f"{pod_name}.{m['name']}.{m['namespace']}.svc"


# -- Service, ConfigMap, Secret ---------------------------------------------------------------
def service(job: Obj) -> Obj:
    name = job["metadata"]["name"]
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": _meta(job, name, {"app": name}),
            "spec": {"clusterIP": "None",
                     "selector": {OPERATOR_NAME_LABEL: OPERATOR_NAME, JOB_NAME_LABEL: name}}}


def hostfile(job: Obj) -> str:
    spec = job["spec"]
    slots = spec.get("slotsPerWorker", 1)
    impl = spec.get("mpiImplementation")
    names = [worker_name(job, i) for i in range(worker_replicas(job))]
    if spec.get("runLauncherAsWorker"):
        names.insert(0, f"{job['metadata']['name']}-launcher")
    lines = []
    for name in names:
        if impl == "OpenMPI":
            lines.append(f"{_host(job, name)} slots={slots}\n")
        elif impl in ("Intel", "MPICH"):
            lines.append(f"{_host(job, name)}:{slots}\n")
    return "".join(lines)


def discover_hosts(job: Obj, running_workers: list[str]) -> str:
    out = "#!/bin/sh\n"
    if job["spec"].get("runLauncherAsWorker"):
        out += f"echo {_host(job, job['metadata']['name'] + '-launcher')}\n"
    for name in sorted(running_workers):
        out += f"echo {_host(job, name)}\n"
    return out


def config_map(job: Obj, running_workers: list[str]) -> Obj:
    name = job["metadata"]["name"]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": _meta(job, f"{name}-config", {"app": name}),
            "data": {"hostfile": hostfile(job),
                     "discover_hosts.sh": discover_hosts(job, running_workers)}}


def ssh_key_pair() -> tuple[bytes, bytes]:
    """(PEM "EC PRIVATE KEY", OpenSSH authorized_keys line) of a new P-521 key."""
    key = ec.generate_private_key(ec.SECP521R1())
    private = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH) + b"\n"
    return private, public


def ssh_secret(job: Obj) -> Obj:
    name = job["metadata"]["name"]
    private, public = ssh_key_pair()
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": _meta(job, f"{name}-ssh", {"app": name}),
            "type": "kubernetes.io/ssh-auth",
            "data": {"ssh-privatekey": base64.b64encode(private).decode(),
                     "ssh-publickey": base64.b64encode(public).decode()}}


# -- pods ----------------------------------------------------------------------------------------
def _template(job: Obj, rtype: str) -> Obj:
    rs = replica_spec(job, rtype) or {}
    template = copy.deepcopy(rs.get("template") or {})
    template.setdefault("metadata", {})
    template.setdefault("spec", {})
    return template


def _set_restart_policy(template: Obj, rs: Obj) -> None:
    policy = rs.get("restartPolicy", "")
    template["spec"]["restartPolicy"] = "Never" if policy == "ExitCode" else policy


def _setup_ssh(pod_spec: Obj, job: Obj) -> None:
    mount_path = job["spec"]["sshAuthMountPath"]
    secret: Obj = {"secretName": f"{job['metadata']['name']}-ssh",
                   "items": copy.deepcopy(SSH_ITEMS)}
    if mount_path == ROOT_SSH_PATH:
        secret["defaultMode"] = 0o600
    pod_spec["volumes"] = list(pod_spec.get("volumes") or []) + [
        {"name": SSH_VOLUME, "secret": secret}]
    main = pod_spec["containers"][0]
    main["volumeMounts"] = list(main.get("volumeMounts") or []) + [
        {"name": SSH_VOLUME, "mountPath": mount_path}]


def _env(name: str, value: str) -> Obj:
    # Go omits an empty value: {"name": "NVIDIA_VISIBLE_DEVICES"}
    return {"name": name, "value": value} if value else {"name": name}


def worker_pod(job: Obj, index: int) -> Obj:
    name = worker_name(job, index)
    job_name, ns = job["metadata"]["name"], job["metadata"]["namespace"]
    template = _template(job, "Worker")
    labels = dict(template["metadata"].get("labels") or {})
    labels.update(default_labels(job_name, "worker"))
    labels[REPLICA_INDEX_LABEL] = str(index)
    spec = template["spec"]
    spec["hostname"] = name
    spec["subdomain"] = job_name
    if spec.get("hostNetwork"):
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    search = f"{job_name}.{ns}.svc.cluster.local"
    dns = spec.get("dnsConfig") if isinstance(spec.get("dnsConfig"), dict) else {}
    dns["searches"] = list(dns.get("searches") or []) + [search]
    spec["dnsConfig"] = dns
    _set_restart_policy(template, replica_spec(job, "Worker") or {})
    container = spec["containers"][0]
    if not container.get("command") and not container.get("args"):
        container["command"] = ["/usr/sbin/sshd", "-De"]
    container["env"] = list(container.get("env") or []) + [_env("K_MPI_JOB_ROLE", "worker")]
    _setup_ssh(spec, job)
    meta = _meta(job, name, labels)
    if template["metadata"].get("annotations"):
        meta["annotations"] = dict(template["metadata"]["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def launcher_template(job: Obj) -> tuple[Obj, bool]:
    """The launcher Job's pod template, and whether the user set a restartPolicy in it."""
    job_name = job["metadata"]["name"]
    template = _template(job, "Launcher")
    labels = dict(template["metadata"].get("labels") or {})
    labels.update(default_labels(job_name, "launcher"))
    spec = template["spec"]
    spec["hostname"] = f"{job_name}-launcher"
    spec["subdomain"] = job_name
    if spec.get("hostNetwork"):
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    container = spec["containers"][0]
    env = list(container.get("env") or []) + [_env("K_MPI_JOB_ROLE", "launcher")]
    slots = str(job["spec"]["slotsPerWorker"])
    hostfile_path = f"{CONFIG_MOUNT_PATH}/hostfile"
    impl = job["spec"]["mpiImplementation"]
    if impl == "OpenMPI":
        env += [_env("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
                _env("OMPI_MCA_orte_default_hostfile", hostfile_path),
                _env("OMPI_MCA_plm_rsh_args", CONNECTION_ATTEMPTS),
                _env("OMPI_MCA_orte_set_default_slots", slots)]
    elif impl == "Intel":
        env += [_env("I_MPI_HYDRA_HOST_FILE", hostfile_path),
                _env("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", CONNECTION_ATTEMPTS),
                _env("I_MPI_PERHOST", slots)]
    elif impl == "MPICH":
        env += [_env("HYDRA_HOST_FILE", hostfile_path),
                _env("HYDRA_LAUNCH_EXTRA_ARGS", CONNECTION_ATTEMPTS)]
    if not job["spec"].get("runLauncherAsWorker"):
        # So the launcher never uses GPUs by accident.
        env += [_env("NVIDIA_VISIBLE_DEVICES", ""), _env("NVIDIA_DRIVER_CAPABILITIES", "")]
    container["env"] = env
    _setup_ssh(spec, job)
    restart_in_template = bool(spec.get("restartPolicy"))
    _set_restart_policy(template, replica_spec(job, "Launcher") or {})
    spec["volumes"] = list(spec.get("volumes") or []) + [
        {"name": CONFIG_VOLUME, "configMap": {"name": f"{job_name}-config",
                                              "items": copy.deepcopy(CONFIG_ITEMS)}}]
    container["volumeMounts"] = list(container.get("volumeMounts") or []) + [
        {"name": CONFIG_VOLUME, "mountPath": CONFIG_MOUNT_PATH}]
    meta: Obj = {"labels": labels, "ownerReferences": [controller_ref(job)]}
    if template["metadata"].get("annotations"):
        meta["annotations"] = dict(template["metadata"]["annotations"])
    return {"metadata": meta, "spec": spec}, restart_in_template


def launcher_job(job: Obj, template: Obj) -> Obj:
    job_name = job["metadata"]["name"]
    policy = job["spec"].get("runPolicy") or {}
    spec: Obj = {"template": template}
    for field in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        if policy.get(field) is not None:
            spec[field] = policy[field]
    if policy.get("suspend"):
        spec["suspend"] = True
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": _meta(job, f"{job_name}-launcher", {"app": job_name}),
            "spec": spec}

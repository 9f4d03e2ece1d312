"""The kubelet's cAdvisor families of simcluster's Prometheus: CPU, memory, disk and network.

Labels as the kubelet's `/metrics/cadvisor` gives them on OpenShift (`namespace`, `pod`,
`container`, `node`, `image`, `id`, `instance`, `job`, `metrics_path`, `endpoint`,
`service`):

- per container (no `container=""` pod totals): `container_cpu_usage_seconds_total`
  (counter, reset by a restart), `container_memory_working_set_bytes`, and
  `container_fs_reads_bytes_total`, `container_fs_writes_bytes_total` (counters, reset by
  a restart, with `device="/dev/nvme0n1"`, the node's disk);
- per pod: `container_network_receive_bytes_total`,
  `container_network_transmit_bytes_total` (counters with `interface="eth0"`).
  Containers share their pod's network namespace, so cAdvisor reports it once, on the
  pod's own cgroup: `container=""`, `image=""`, the pod slice as `id`. The counters run
  from the pod's first container start to its last end (a container restart keeps the
  sandbox, and the counter).

Rates (bytes per second of the clock, deterministic per pod): while training, a job's
pods exchange gradients, 200-900 MB/s each way (the job's level, each pod within 5 % of
it; received 3 % above sent), and its
Workers read their data at 40-160 MB/s and write 1-6 MB/s (logs, checkpoints); an MPI
Launcher only talks ssh and mpirun's output, 20-80 kB/s, and reads and writes a few
kB/s; pods outside a training job, and any pod before or after training or while it is
hung, 1-5 kB/s on the network and a few kB/s on disk. How training starts, stops and
hangs is metrics_model.py's business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from simcluster.monitoring.metrics_history import ContainerRecord, PodRecord, Run, seed_of
from simcluster.monitoring.metrics_model import PodModel, overlaps, scrape_interval, spans, unit

CPU = "container_cpu_usage_seconds_total"
MEMORY = "container_memory_working_set_bytes"
FS_READS = "container_fs_reads_bytes_total"
FS_WRITES = "container_fs_writes_bytes_total"
NET_RECEIVE = "container_network_receive_bytes_total"
NET_TRANSMIT = "container_network_transmit_bytes_total"
PER_CONTAINER = (CPU, MEMORY, FS_READS, FS_WRITES)
PER_POD = (NET_RECEIVE, NET_TRANSMIT)
CADVISOR = PER_CONTAINER + PER_POD
DISK = "/dev/nvme0n1"
INTERFACE = "eth0"
KB, MB = 1e3, 1e6

Span = tuple[float, float | None]
# labels, the runs it is scraped over, its value at a time, the seconds between scrapes
Target = tuple[dict[str, str], list[Span], Callable[[float], float], float]


def _base_labels(name: str, pod: PodRecord) -> dict[str, str]:
    return {"__name__": name, "endpoint": "https-metrics", "instance": f"{pod.node}:10250",
            "job": "kubelet", "metrics_path": "/metrics/cadvisor", "namespace": pod.namespace,
            "node": pod.node, "pod": pod.name, "service": "kubelet"}


def _pod_slice(pod: PodRecord) -> str:
    return f"/kubepods.slice/kubepods-pod{pod.uid.replace('-', '_')}.slice"


def targets(name: str, pods: list[PodRecord], lo: float, hi: float,
            model: Callable[[PodRecord], PodModel]) -> Iterator[Target]:
    """The series of cAdvisor family `name` of `pods` that may have samples in [lo, hi]."""
    for pod in pods:
        if name in PER_POD:
            sandbox = _sandbox(pod)
            if sandbox is None or not overlaps([sandbox], lo, hi):
                continue
            labels = {**_base_labels(name, pod), "container": "", "id": _pod_slice(pod),
                      "image": "", "interface": INTERFACE}
            yield (labels, [sandbox], _network_value(name, model(pod), sandbox[0]),
                   scrape_interval(pod.speed))
            continue
        for c in pod.containers.values():
            runs = spans(c.runs)
            if not overlaps(runs, lo, hi):
                continue
            cid = f"{seed_of(pod.uid, c.name):016x}" * 4
            labels = {**_base_labels(name, pod), "container": c.name,
                      "id": f"{_pod_slice(pod)}/crio-{cid}.scope", "image": c.image}
            if name in (FS_READS, FS_WRITES):
                labels["device"] = DISK
            yield labels, runs, _container_value(name, model(pod), c), scrape_interval(pod.speed)


def _sandbox(pod: PodRecord) -> Span | None:
    """From the pod's first container start to its last end (None: it never ran)."""
    start = pod.first_start
    return None if start is None else (start, pod.last_end())


def _container_value(name: str, model: PodModel, c: ContainerRecord) -> Callable[[float], float]:
    def run_at(t: float) -> Run:
        current = c.runs[0]
        for r in c.runs:
            if r.start <= t:
                current = r
        return current

    if name == CPU:
        return lambda t: model.cpu_seconds(c, run_at(t), t)
    if name == MEMORY:
        return lambda t: model.memory(c, run_at(t), t)
    seed = model.pod.seed ^ seed_of(c.name, name)
    return lambda t: float(round(model.counter(seed, run_at(t).start, t,
                                               lambda m: disk_rate(model, name, m))))


def _network_value(name: str, model: PodModel, start: float) -> Callable[[float], float]:
    seed = model.pod.seed ^ seed_of(name)
    return lambda t: float(round(model.counter(seed, start, t,
                                               lambda m: network_rate(model, name, m))))


def _trains(model: PodModel, t: float) -> bool:
    """A pod of a training job (not its Launcher) that is training at t."""
    return bool(model.pod.job) and model.pod.role != "launcher" and model.training(t)


def network_rate(model: PodModel, name: str, t: float) -> float:
    """Bytes per second the pod receives (NET_RECEIVE) or sends at t."""
    seed = model.pod.seed
    if _trains(model, t):  # a ring all-reduce: every rank moves about as much as the next
        job = seed_of(model.pod.namespace, model.pod.job)
        sent = (200 * MB + 700 * MB * unit(job, 21)) * (0.95 + 0.1 * unit(seed, 21))
        return sent * 1.03 if name == NET_RECEIVE else sent
    if model.pod.role == "launcher" and model.training(t):
        return 20 * KB + 60 * KB * unit(seed, 22 if name == NET_RECEIVE else 23)
    return 1 * KB + 4 * KB * unit(seed, 24 if name == NET_RECEIVE else 25)


def disk_rate(model: PodModel, name: str, t: float) -> float:
    """Bytes per second the pod's container reads (FS_READS) or writes at t."""
    seed = model.pod.seed
    if _trains(model, t):
        if name == FS_READS:
            return 40 * MB + 120 * MB * unit(seed, 26)
        return 1 * MB + 5 * MB * unit(seed, 27)
    return 1 * KB + 4 * KB * unit(seed, 28 if name == FS_READS else 29)

"""Container images as CRI-O reports them: normalized names, digests, sizes, pull times.

Everything is derived from the image name (no randomness), so the same image always has
the same digest, size and pull time, and a node that pulled an image has it afterwards.
"""

from __future__ import annotations

import hashlib

_BIG_HINTS = ("cuda", "pytorch", "torch", "tensorflow", "horovod", "nvidia", "deepspeed",
              "nemo", "triton", "benchmarks", "mnist")


def normalize(image: str) -> str:
    """`busybox` -> `docker.io/library/busybox:latest`, as CRI-O names images."""
    name, digest = (image.split("@", 1) + [""])[:2]
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    if digest:
        return f"{name}@{digest}"
    if ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    return name


def repository(image: str) -> str:
    name = normalize(image).split("@", 1)[0]
    last = name.rsplit("/", 1)
    return name.rsplit(":", 1)[0] if ":" in last[-1] else name


def tag(image: str) -> str:
    name = normalize(image)
    if "@" in name:
        return name.split("@", 1)[1]
    return name.rsplit(":", 1)[1]


def _hash(*parts: str) -> bytes:
    return hashlib.sha256("\0".join(parts).encode()).digest()


def image_id(image: str) -> str:
    """`docker.io/library/busybox@sha256:<digest>` (the imageID field)."""
    normalized = normalize(image)
    if "@" in normalized:
        return normalized
    return f"{repository(image)}@sha256:{_hash('digest', normalized).hex()}"


def size_bytes(image: str) -> int:
    h = int.from_bytes(_hash("size", normalize(image))[:8], "big")
    if any(hint in image.lower() for hint in _BIG_HINTS):
        return 3_500_000_000 + h % 5_000_000_000  # framework + CUDA images: 3.5-8.5 GB
    return 40_000_000 + h % 700_000_000


def pull_seconds(image: str, cached: bool) -> float:
    """Nominal time to pull: bandwidth-bound for a fresh pull (about 120 MB/s), about a
    second to re-check the manifest when every layer is already on the node."""
    h = _hash("pull", normalize(image))[0] / 255
    if cached:
        return round(0.4 + 0.8 * h, 3)
    return round(min(75.0, 1.5 + size_bytes(image) / 120e6 + 3 * h), 3)


def go_duration(seconds: float) -> str:
    """Go's time.Duration String() of a millisecond-truncated duration: 27.876s, 850ms."""
    ms = int(seconds * 1000)
    if ms < 1000:
        return f"{ms}ms"
    minutes, rest = divmod(ms, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".")
    if minutes:
        hours, minutes = divmod(minutes, 60)
        return (f"{hours}h" if hours else "") + f"{minutes}m{secs}s"
    return f"{secs}s"


def registry(image: str) -> str:
    """The registry host a pull talks to (Docker Hub's is registry-1.docker.io)."""
    host = normalize(image).split("/", 1)[0]
    return "registry-1.docker.io" if host == "docker.io" else host


CLUSTER_DNS = "172.30.0.10:53"  # OpenShift's default DNS service address


def pull_error(image: str, kind: str = "not-found") -> str:
    """The CRI error CRI-O returns when an image cannot be pulled: `not-found` (the tag does
    not exist), `unauthorized` (a private repository and no pull secret for it) or
    `unreachable` (the registry's name does not resolve)."""
    prefix = "rpc error: code = Unknown desc = "
    if kind == "unreachable":
        host = registry(image)
        return (f'{prefix}pinging container registry {host}: Get "https://{host}/v2/": '
                f"dial tcp: lookup {host} on {CLUSTER_DNS}: no such host")
    why = ("unauthorized: access to the requested resource is not authorized"
           if kind == "unauthorized" else "manifest unknown")
    return (f"{prefix}initializing source docker://{normalize(image)}: reading manifest "
            f"{tag(image)} in {repository(image)}: {why}")

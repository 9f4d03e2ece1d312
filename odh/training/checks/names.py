"""Job names: what Kubernetes and the MPI Operator accept, and fresh names for clones."""

from __future__ import annotations

import re
import secrets

DNS1035_MAX = 63
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
# The wizard allows at most this many Workers; names leave room for the last one's suffix.
MAX_WORKERS = 100
# Kubernetes' own random-suffix alphabet: no vowels, no look-alike digits.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def is_dns1035_label(value: str) -> bool:
    return len(value) <= DNS1035_MAX and DNS1035_LABEL.fullmatch(value) is not None


_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def is_dns1123_subdomain(value: str) -> bool:
    """An object name most kinds accept (Secrets, ConfigMaps): at most 253 characters."""
    return len(value) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(value) is not None


def max_job_name_length(workers: int = MAX_WORKERS) -> int:
    """The longest job name whose derived names stay valid.

    The operator rejects a job whose `<name>-worker-<workers-1>` is not a DNS-1035 label, and
    the launcher's batch Job `<name>-launcher` must fit a 63-character label value.
    """
    last_worker = f"-worker-{max(workers, 1) - 1}"
    return DNS1035_MAX - max(len("-launcher"), len(last_worker))


def random_suffix(length: int = 5) -> str:
    return "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(length))


def fresh_name(base_name: str, suffix: str, workers: int = MAX_WORKERS) -> str:
    """`<base_name>-<suffix>`, shortened so the job's derived pod names stay valid."""
    limit = max_job_name_length(workers)
    suffix = suffix.strip("-")[:limit]
    room = limit - len(suffix) - 1
    stem = base_name[:room].rstrip("-") if room > 0 else ""
    return f"{stem}-{suffix}" if stem else suffix

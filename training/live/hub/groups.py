"""Channel-layer group names: `ns.<project>`, `job.<project>.<name>`, `logs.<project>.<pod>`,
`notices.<digest of a user name>`.

The hub sends to these groups and the websocket consumer joins them, so both must name
them through these functions. Project and job names are DNS names, so the plain form is
valid for channels (ASCII letters, digits, hyphen, period, underscore; under 100
characters); anything longer or stranger gets a readable prefix and a digest instead.
"""

from __future__ import annotations

import hashlib
import re

MAX_LENGTH = 99  # channels requires names shorter than 100
_VALID = re.compile(r"[A-Za-z0-9._-]+")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9._-]")


def _bounded(group: str) -> str:
    if len(group) <= MAX_LENGTH and _VALID.fullmatch(group):
        return group
    digest = hashlib.sha256(group.encode()).hexdigest()[:16]
    prefix = _INVALID_CHARS.sub("-", group)[:MAX_LENGTH - len(digest) - 1]
    return f"{prefix}-{digest}"


def ns_group(namespace: str) -> str:
    """Viewers of a project's job list: every job's row."""
    return _bounded(f"ns.{namespace}")


def job_group(namespace: str, name: str) -> str:
    """Viewers of one job's page (jobs of different kinds with one name share it: the
    message's "job" field says which job it is about)."""
    return _bounded(f"job.{namespace}.{name}")


def logs_group(namespace: str, pod: str) -> str:
    """Viewers of one pod's log: the lines of its one shared follow stream."""
    return _bounded(f"logs.{namespace}.{pod}")


def notices_group(username: str) -> str:
    """One person's sockets: the notices of their bell (training/live/notice_subscriptions.py).
    User names may hold any character (`system:serviceaccount:...`, e-mail addresses):
    always a digest, so that no name is the prefix-and-digest form of another."""
    return "notices." + hashlib.sha256(username.encode()).hexdigest()[:32]


# The hub's own inbox: consumers send log-stream leases here (training/live/hub/logs.py).
CONTROL_GROUP = "hub.control"

# Viewers of the admin overview (training/live/cluster_subscriptions.py): told when the cluster's
# quotas, training jobs or their pods changed.
CLUSTER_GROUP = "cluster"

# Pages that show where jobs stand in Kueue's queues (training/live/queue_subscriptions.py): told
# when a Workload changed (admitted, queued, preempted, finished, gone).
QUEUES_GROUP = "queues"

# Every live socket: whether the watch hub sees the cluster (training/live/hub/status.py).
STATUS_GROUP = "hub.status"

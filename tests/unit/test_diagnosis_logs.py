"""Reading failures from log lines, and NetworkPolicies that block SSH
(odh.training.diagnosis.logs, .netpol)."""

from __future__ import annotations

import pytest

from odh.training.diagnosis import logs
from odh.training.diagnosis.rules.netpol import blocking_policies


def test_the_last_traceback_is_quoted_whole_up_to_its_exception():
    lines = ["Epoch 1", "Traceback (most recent call last):", '  File "t.py", line 3',
             "    main()", "ValueError: bad shape (3, 4)", "-" * 74, "mpirun detected ..."]
    assert logs.last_error_lines(lines) == lines[1:5]


def test_without_a_traceback_the_error_looking_lines_are_quoted():
    lines = ["step 1", "NCCL WARN Error while creating communicator", "step 2",
             "Fatal error: out of patience"]
    assert logs.last_error_lines(lines) == [lines[1], lines[3]]


def test_rank_tags_are_taken_off():
    assert logs.cuda_oom(["[1,3]<stderr>:torch.OutOfMemoryError: CUDA out of memory."]) == \
        "torch.OutOfMemoryError: CUDA out of memory."


@pytest.mark.parametrize(("line", "kind", "host"), [
    ("ssh: connect to host w-0.j.ns.svc port 22: Connection refused", "refused", "w-0.j.ns.svc"),
    ("ssh: connect to host w-1.j.ns.svc port 22: Connection timed out", "timeout",
     "w-1.j.ns.svc"),
    ("kex_exchange_identification: read: Connection reset by peer", "reset", ""),
    ("Permission denied (publickey).", "auth", ""),
])
def test_how_mpirun_failed_to_reach_its_workers(line, kind, host):
    found = logs.mpi_trouble([line])
    assert (found.kind, found.host) == (kind, host)


def test_an_unresolved_worker_counts_only_once_mpirun_gave_up():
    waiting = ["ssh: Could not resolve hostname w-0.j.ns.svc: Name or service not known"]
    assert logs.mpi_trouble(waiting) is None
    gave_up = waiting + ["ORTE was unable to reliably start one or more daemons."]
    assert logs.mpi_trouble(gave_up).kind == "resolve"


def test_the_missing_program_is_named():
    assert logs.missing_program("/bin/sh: 1: pyhton: not found") == "pyhton"
    assert logs.missing_program('exec: "train.sh": executable file not found in $PATH') == \
        "train.sh"


WORKER = {"metadata": {"labels": {"training.kubeflow.org/job-role": "worker",
                                  "training.kubeflow.org/job-name": "j"}}}
LAUNCHER = {"metadata": {"labels": {"training.kubeflow.org/job-role": "launcher",
                                    "training.kubeflow.org/job-name": "j"}}}


def _policy(name, ingress, selector=None, types=("Ingress",)):
    spec = {"podSelector": selector or {}, "policyTypes": list(types)}
    if ingress is not None:
        spec["ingress"] = ingress
    return {"metadata": {"name": name}, "spec": spec}


def test_a_deny_all_policy_blocks_ssh():
    assert blocking_policies([_policy("deny-all", None)], LAUNCHER, WORKER) == ["deny-all"]


def test_a_policy_that_admits_the_jobs_own_pods_on_22_does_not_block():
    admit = _policy("allow-job", [{"from": [{"podSelector": {"matchLabels": {
        "training.kubeflow.org/job-name": "j"}}}], "ports": [{"port": 22}]}])
    assert blocking_policies([_policy("deny-all", None), admit], LAUNCHER, WORKER) == []


def test_a_policy_for_other_ports_or_other_pods_still_blocks():
    web = _policy("allow-web", [{"ports": [{"port": 8080}]}])
    assert blocking_policies([web], LAUNCHER, WORKER) == ["allow-web"]
    others = _policy("only-db", None, selector={"matchLabels": {"app": "db"}})
    assert blocking_policies([others], LAUNCHER, WORKER) == []
    egress = _policy("egress-only", None, types=("Egress",))
    assert blocking_policies([egress], LAUNCHER, WORKER) == []

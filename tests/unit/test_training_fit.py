"""The live resource check: totals, quota arithmetic, LimitRanges, node fit, and the fixes."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from odh.training import MPIJobSpec
from odh.training.capacity.fit import Fix, check_fit
from odh.training.capacity.nodes import node_sizes
from odh.training.kinds.jobspec import NodeRequirement
from odh.training.manifests.totals import Totals, totals_for

GI = 2**30


def spec(**changes) -> MPIJobSpec:
    base = MPIJobSpec(name="bert", namespace="team-nlp", image="quay.io/team/bert:1.0",
                      command=["mpirun", "python", "train.py"], workers=4, cpu_per_worker="8",
                      memory_per_worker="32Gi", gpus_per_worker=2, launcher_cpu="2",
                      launcher_memory="8Gi")
    return dataclasses.replace(base, **changes)


def quota(hard: dict, used: dict | None = None, name: str = "team-nlp-quota", **extra) -> dict:
    return {"metadata": {"name": name, "namespace": "team-nlp"},
            "spec": {"hard": hard, **extra}, "status": {"used": used or {}}}


def node(name: str, cpu: str, memory: str, gpus: int = 0, labels: dict | None = None) -> dict:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpus:
        allocatable["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name, "labels": labels or {}},
            "status": {"allocatable": allocatable, "capacity": allocatable}}


GPU_QUOTA = quota({"requests.nvidia.com/gpu": "16"}, {"requests.nvidia.com/gpu": "10"})


# --- totals -----------------------------------------------------------------------------------

def test_totals_in_the_issues_words():
    assert totals_for(spec()).text() == (
        "4 workers x 2 GPUs = 8 GPUs, 32 CPUs, 128Gi + launcher 2 CPUs, 8Gi")


def test_totals_of_a_cpu_only_job():
    assert totals_for(spec(gpus_per_worker=0)).text() == (
        "4 workers x 8 CPUs = 32 CPUs, 128Gi + launcher 2 CPUs, 8Gi")


def test_totals_of_one_worker_are_singular():
    assert totals_for(spec(workers=1, gpus_per_worker=1, cpu_per_worker="1",
                           launcher_cpu="1")).text() == (
        "1 worker x 1 GPU = 1 GPU, 1 CPU, 32Gi + launcher 1 CPU, 8Gi")


def test_totals_with_fractions_and_unset_amounts():
    totals = totals_for(spec(gpus_per_worker=0, cpu_per_worker="500m", memory_per_worker="",
                             launcher_cpu="", launcher_memory="512Mi", workers=3))
    assert totals.text() == "3 workers x 0.5 CPUs = 1.5 CPUs + launcher 512Mi"
    assert totals_for(spec(gpus_per_worker=0, cpu_per_worker="", memory_per_worker="",
                           launcher_cpu="", launcher_memory="")).text() == "4 workers"


def test_totals_numbers():
    totals = totals_for(spec())
    assert totals == Totals(workers=4, cpu_per_worker=Decimal(8),
                            memory_per_worker=Decimal(32 * GI), gpus_per_worker=2,
                            launcher_cpu=Decimal(2), launcher_memory=Decimal(8 * GI))
    assert (totals.pods, totals.total_gpus, totals.total_cpu) == (5, 8, Decimal(34))
    assert totals.total_memory == 136 * GI
    assert (totals.workers_cpu, totals.workers_memory) == (Decimal(32), 128 * GI)


def test_totals_of_values_validation_refuses_count_as_nothing():
    totals = totals_for(spec(cpu_per_worker="lots", memory_per_worker="-1Gi", workers=-3))
    assert (totals.workers, totals.cpu_per_worker, totals.memory_per_worker) == (0, 0, 0)


# --- quota ------------------------------------------------------------------------------------

def test_the_issues_example_with_its_numbers_and_fixes():
    report = check_fit(spec(), [GPU_QUOTA], [], [], "team-nlp")
    assert not report.fits
    assert report.problems == [
        "Requested 8 GPUs but only 6 available under the team-nlp quota (10/16 in use)."]
    assert report.fixes == [Fix("Reduce workers to 3", {"workers": 3}),
                            Fix("Reduce GPUs per worker to 1", {"gpus_per_worker": 1})]
    # no gang admission: said, as what happens to its Workers
    assert report.waiting_note == (
        "You can still create the job, but it will wait, Pending, and its Workers start one by "
        "one as other jobs make room: those started hold their GPUs, idle, while the rest "
        "wait.")
    [line] = report.lines
    assert (line.quota, line.resource) == ("team-nlp-quota", "requests.nvidia.com/gpu")
    assert (line.requested, line.used, line.hard, line.available) == (8, 10, 16, 6)
    assert not line.fits
    assert line.text == "GPUs: 8 requested, 6 available (10/16 in use)"


def test_every_fix_offered_makes_the_job_fit():
    report = check_fit(spec(), [GPU_QUOTA], [], [], "team-nlp")
    for fix in report.fixes:
        assert check_fit(fix.apply(spec()), [GPU_QUOTA], [], [], "team-nlp").fits


def test_a_job_that_fits():
    report = check_fit(spec(workers=3), [GPU_QUOTA], [], [], "team-nlp")
    assert report.fits and report.problems == [] and report.fixes == []
    assert report.waiting_note == "" and report.node_problem == ""
    assert report.lines[0].fits


def test_no_quota_means_it_fits():
    report = check_fit(spec(), [], [], [], "team-nlp")
    assert report.fits and report.lines == []


def test_cpu_memory_pods_and_the_mpijob_itself_are_counted():
    hard = {"requests.cpu": "40", "limits.cpu": "40", "cpu": "100", "requests.memory": "256Gi",
            "limits.memory": "128Gi", "pods": "10", "count/mpijobs.kubeflow.org": "3",
            "services": "10", "count/secrets": "50", "requests.storage": "1Ti"}
    used = {"requests.cpu": "20", "limits.cpu": "20", "requests.memory": "64Gi", "pods": "8",
            "count/mpijobs.kubeflow.org": "3"}
    report = check_fit(spec(gpus_per_worker=0), [quota(hard, used)], [], [], "team-nlp")
    assert report.problems == [
        "Requested 34 CPUs but only 20 available under the team-nlp quota (20/40 in use).",
        "Requested 34 CPUs as limits but only 20 available under the team-nlp quota (20/40 in "
        "use).",
        # more than the quota holds in all: never, not "only 128Gi available"
        "This job can never fit the team-nlp quota of 128Gi of memory as limits: it asks for "
        "136Gi of memory as limits.",
        "Requested 5 pods but only 2 available under the team-nlp quota (8/10 in use).",
        # finished jobs fill a count quota too: said, with what to do
        "The team-nlp quota allows 3 MPIJobs and holds 3: finished jobs count too, so delete "
        "those you no longer need (or give jobs ttlSecondsAfterFinished, which deletes them "
        "after they finish).",
    ]
    assert [line.resource for line in report.lines] == [
        "requests.cpu", "limits.cpu", "cpu", "requests.memory", "limits.memory", "pods",
        "count/mpijobs.kubeflow.org", "services", "count/secrets"]
    # It can never start as it is (136Gi of memory limits against 128Gi): the fixes bring
    # it within the quota's hard limits; an MPIJob slot only deleting a job frees.
    assert report.never_fits
    assert report.fixes and all(check_fit(fix.apply(spec(gpus_per_worker=0)), [quota(hard, {})],
                                          [], [], "team-nlp").fits for fix in report.fixes)
    assert report.waiting_note == ("The cluster refuses to create it while the quota is full: "
                                   "delete finished jobs you no longer need first.")


def test_cpu_and_memory_fixes_are_computed_from_the_room_left():
    hard = {"requests.cpu": "30", "requests.memory": "120Gi"}
    report = check_fit(spec(gpus_per_worker=0), [quota(hard)], [], [], "team-nlp")
    # Each fix alone must make the whole job fit: with CPU and memory both short, only
    # fewer workers does.
    assert report.fixes == [Fix("Reduce workers to 3", {"workers": 3})]
    cpu_only = check_fit(spec(gpus_per_worker=0), [quota({"requests.cpu": "30"})], [], [],
                         "team-nlp")
    # a cut of the Workers' CPUs or memory says how much of the total is left
    assert Fix("Reduce CPUs per worker to 7 (in all: 28 CPUs instead of 32 CPUs)",
               {"cpu_per_worker": "7"}) in cpu_only.fixes
    memory_only = check_fit(spec(gpus_per_worker=0), [quota({"requests.memory": "120Gi"})], [],
                            [], "team-nlp")
    assert Fix("Reduce memory per worker to 28Gi (in all: 112Gi instead of 128Gi)",
               {"memory_per_worker": "28Gi"}) in memory_only.fixes


def test_fractional_cpu_fixes_use_tenths():
    report = check_fit(spec(gpus_per_worker=0, cpu_per_worker="1", launcher_cpu="1"),
                       [quota({"cpu": "3"})], [], [], "team-nlp")
    assert Fix("Reduce CPUs per worker to 500m (in all: 2 CPUs instead of 4 CPUs)",
               {"cpu_per_worker": "500m"}) in report.fixes


def test_no_fix_goes_to_zero_workers():
    full = quota({"requests.nvidia.com/gpu": "16"}, {"requests.nvidia.com/gpu": "16"})
    report = check_fit(spec(), [full], [], [], "team-nlp")
    assert not report.fits
    assert report.fixes == []
    assert report.problems == [
        "Requested 8 GPUs but only 0 available under the team-nlp quota (16/16 in use)."]


def test_usage_above_the_hard_limit_leaves_nothing_available():
    report = check_fit(spec(), [quota({"requests.nvidia.com/gpu": "4"},
                                      {"requests.nvidia.com/gpu": "6"})], [], [], "team-nlp")
    assert report.lines[0].available == 0


def test_fixes_keep_the_commands_process_count_in_step():
    job = spec(command=["horovodrun", "-np", "8", "python", "train.py"])
    report = check_fit(job, [GPU_QUOTA], [], [], "team-nlp")
    assert report.fixes == [
        Fix("Reduce workers to 3", {"workers": 3, "command": [
            "horovodrun", "-np", "6", "python", "train.py"]}),
        Fix("Reduce GPUs per worker to 1", {"gpus_per_worker": 1, "command": [
            "horovodrun", "-np", "4", "python", "train.py"]}),
    ]


def test_with_several_quotas_the_message_names_the_quota():
    quotas = [GPU_QUOTA, quota({"pods": "100"}, name="pods")]
    report = check_fit(spec(), quotas, [], [], "team-nlp")
    assert report.problems == ['Requested 8 GPUs but only 6 available under the team-nlp quota '
                               '"team-nlp-quota" (10/16 in use).']


def test_quota_scopes_select_which_quotas_count():
    scoped = quota({"requests.nvidia.com/gpu": "1"}, scopeSelector={"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]})
    assert check_fit(spec(), [scoped], [], [], "team-nlp").fits
    assert not check_fit(spec(priority_class="high"), [scoped], [], [], "team-nlp").fits
    best_effort = quota({"pods": "1"}, scopes=["BestEffort"])
    assert check_fit(spec(), [best_effort], [], [], "team-nlp").fits
    terminating = quota({"pods": "1"}, scopes=["Terminating"])
    assert check_fit(spec(), [terminating], [], [], "team-nlp").fits
    not_terminating = quota({"pods": "1"}, scopes=["NotTerminating", "NotBestEffort"])
    assert not check_fit(spec(), [not_terminating], [], [], "team-nlp").fits


def test_a_compute_quota_wants_every_pod_to_ask_for_cpu_and_memory():
    report = check_fit(spec(cpu_per_worker="", launcher_memory=""),
                       [quota({"requests.cpu": "100", "requests.memory": "1Ti"})], [], [],
                       "team-nlp")
    assert report.problems == [
        "The team-nlp quota limits CPU, so every pod must ask for some: enter CPUs per worker "
        "and Launcher CPUs.",
        "The team-nlp quota limits memory, so every pod must ask for some: enter Memory per "
        "worker and Launcher memory."]
    defaulted = [{"metadata": {"name": "defaults"}, "spec": {"limits": [
        {"type": "Container", "default": {"cpu": "1", "memory": "1Gi"}}]}}]
    assert check_fit(spec(cpu_per_worker="", launcher_memory=""),
                     [quota({"requests.cpu": "100", "requests.memory": "1Ti"})], defaulted, [],
                     "team-nlp").fits


# --- LimitRanges ------------------------------------------------------------------------------

def test_limit_ranges_break_the_fit_and_offer_the_bound_as_fix():
    ranges = [{"metadata": {"name": "limits", "namespace": "team-nlp"}, "spec": {"limits": [
        {"type": "Container", "max": {"cpu": "6"}, "min": {"memory": "16Gi"}}]}}]
    report = check_fit(spec(), [], ranges, [], "team-nlp")
    assert not report.fits
    assert report.problems == [
        "CPUs per worker (8) is above the maximum of 6 per container in team-nlp (LimitRange "
        "limits): use at most 6.",
        "Launcher memory (8Gi) is below the minimum of 16Gi per container in team-nlp "
        "(LimitRange limits): use at least 16Gi.",
    ]
    # Each fix alone leaves the other bound broken, so neither is offered on its own...
    assert report.fixes == []
    assert "LimitRange will refuse its pods" in report.waiting_note
    # ...but with one bound broken: more Workers within the bound, keeping the CPUs (and
    # saying the GPUs that come with them), or the bound itself, saying what it cuts
    report = check_fit(spec(launcher_memory="16Gi"), [], ranges, [], "team-nlp")
    assert report.fixes == [
        Fix("Use 6 CPUs per worker and 6 workers (in all: 12 GPUs instead of 8 GPUs)",
            {"workers": 6, "cpu_per_worker": "6"}),
        Fix("Reduce CPUs per worker to 6 (in all: 24 CPUs instead of 32 CPUs)",
            {"cpu_per_worker": "6"})]
    report = check_fit(spec(cpu_per_worker="6"), [], ranges, [], "team-nlp")
    assert report.fixes == [Fix("Raise Launcher memory to 16Gi", {"launcher_memory": "16Gi"})]


# The demo's vit-l-cpu-heavy in team-cv: 2 Workers x 96 CPUs where a container may have 64.
CV_LIMITS = [{"metadata": {"name": "container-defaults", "namespace": "team-cv"},
              "spec": {"limits": [{"type": "Container", "max": {"cpu": "64"}}]}}]
CV_HARD = {"requests.nvidia.com/gpu": "56", "requests.cpu": "192", "requests.memory": "1536Gi"}
CV_QUOTA = quota(CV_HARD, {"requests.nvidia.com/gpu": "38", "requests.cpu": "154",
                           "requests.memory": "1192Gi"}, name="team-quota")


def test_a_worker_over_the_limit_ranges_cpus_is_split_keeping_its_cpus():
    job = spec(namespace="team-cv", workers=2, cpu_per_worker="96", memory_per_worker="256Gi",
               gpus_per_worker=1, command=["horovodrun", "-np", "2", "python", "t.py"])
    report = check_fit(job, [CV_QUOTA], CV_LIMITS, NODES, "team-cv")
    assert report.never_fits
    # 3 x 64 (+ the Launcher's 2) is more than the quota's 192 CPUs in all: 3 x 63; the
    # GPU each Worker keeps makes a third, and the label says so; -np follows the Workers
    assert report.fixes[:2] == [
        Fix("Use 63 CPUs per worker and 3 workers (in all: 3 GPUs instead of 2 GPUs, "
            "189 CPUs instead of 192 CPUs)",
            {"workers": 3, "cpu_per_worker": "63",
             "command": ["horovodrun", "-np", "3", "python", "t.py"]}),
        Fix("Reduce CPUs per worker to 64 (in all: 128 CPUs instead of 192 CPUs)",
            {"cpu_per_worker": "64"})]
    # every fix is one the LimitRange and the quota (emptied) accept; what the quota has
    # left now (38 CPUs) gives a cut that says how deep it is
    empty = quota(CV_HARD, name="team-quota")
    assert all(check_fit(fix.apply(job), [empty], CV_LIMITS, NODES, "team-cv").fits
               for fix in report.fixes)
    assert Fix("Reduce CPUs per worker to 18 (in all: 36 CPUs instead of 192 CPUs)",
               {"cpu_per_worker": "18"}) in report.fixes


def test_a_cpu_only_worker_over_the_limit_range_keeps_all_its_cpus():
    job = spec(workers=2, cpu_per_worker="96", gpus_per_worker=0)
    report = check_fit(job, [], CV_LIMITS, NODES, "team-cv")
    assert report.fixes[0] == Fix("Use 64 CPUs per worker and 3 workers",
                                  {"workers": 3, "cpu_per_worker": "64"})


# --- nodes ------------------------------------------------------------------------------------

NODES = [node("cpu-0", "16", "64Gi"), node("gpu-a100-0", "96", "1Ti", 8),
         node("gpu-t4-0", "32", "128Gi", 4, {"gpu-type": "t4"})]


def test_a_worker_larger_than_every_gpu_node_and_the_split_that_fixes_it():
    job = spec(workers=2, gpus_per_worker=12, cpu_per_worker="48", memory_per_worker="256Gi")
    report = check_fit(job, [], [], NODES, "team-nlp")
    assert not report.fits
    assert report.node_problem == (
        "No node can run a Worker with 12 GPUs: the largest GPU node has 8 (gpu-a100-0).")
    assert report.fixes == [Fix("Use 8 GPUs per worker and 3 workers",
                                {"workers": 3, "gpus_per_worker": 8})]
    assert report.problems == []
    assert report.waiting_note == ("You can still create the job, but it will stay Pending "
                                   "until a node large enough for it joins the cluster.")
    fixed = report.fixes[0].apply(job)
    assert fixed.workers * fixed.gpus_per_worker >= 24


def test_a_split_scales_cpu_and_memory_when_they_would_not_fit_either():
    job = spec(workers=1, gpus_per_worker=12, cpu_per_worker="120", memory_per_worker="256Gi")
    report = check_fit(job, [], [], NODES, "team-nlp")
    # the split keeps the 12 GPUs exactly (2 x 6, not 2 x 8)
    assert report.fixes == [Fix("Use 6 GPUs, 60 CPUs, 128Gi per worker and 2 workers",
                                {"workers": 2, "gpus_per_worker": 6, "cpu_per_worker": "60",
                                 "memory_per_worker": "128Gi"})]


def test_the_split_must_also_fit_the_quota():
    job = spec(workers=2, gpus_per_worker=12)
    tight = quota({"requests.nvidia.com/gpu": "20"})
    report = check_fit(job, [tight], [], NODES, "team-nlp")
    assert report.node_problem and report.problems
    # Splitting keeps 24 GPUs, more than the quota holds in all: as many as it holds (20),
    # in the shapes that fit a node, then fewer GPUs per Worker
    assert report.fixes == [
        Fix("Use 5 GPUs per worker and 4 workers", {"workers": 4, "gpus_per_worker": 5}),
        Fix("Use 4 GPUs per worker and 5 workers", {"workers": 5, "gpus_per_worker": 4}),
        Fix("Reduce GPUs per worker to 8", {"gpus_per_worker": 8})]


def test_no_gpu_node_at_all():
    report = check_fit(spec(), [], [], [node("cpu-0", "16", "64Gi")], "team-nlp")
    assert report.node_problem == "No node can run a Worker with 2 GPUs: no node has GPUs."
    assert report.fixes == []


def test_cpu_and_memory_larger_than_every_node():
    report = check_fit(spec(gpus_per_worker=0, cpu_per_worker="128", workers=2), [], [], NODES,
                       "team-nlp")
    assert report.node_problem == (
        "No node can run a Worker with 128 CPUs: the largest node has 96 (gpu-a100-0).")
    # 256 CPUs in all, on the fewest Workers, shared evenly (3 x 86, not 3 x 96)
    assert report.fixes == [Fix("Use 86 CPUs per worker and 3 workers",
                                {"workers": 3, "cpu_per_worker": "86"})]
    report = check_fit(spec(gpus_per_worker=0, memory_per_worker="2Ti", workers=1), [], [],
                       NODES, "team-nlp")
    assert report.node_problem == (
        "No node can run a Worker with 2Ti of memory: the largest node has 1Ti (gpu-a100-0).")
    assert report.fixes == [Fix("Use 1Ti per worker and 2 workers",
                                {"workers": 2, "memory_per_worker": "1Ti"})]


def test_no_single_node_has_everything_at_once():
    nodes = [node("big-cpu", "128", "64Gi"), node("big-gpu", "8", "64Gi", 8)]
    report = check_fit(spec(cpu_per_worker="32", workers=1), [], [], nodes, "team-nlp")
    assert report.node_problem == (
        "No node can run a Worker with 32 CPU, 32Gi, 2 GPUs: no single node has all of that.")
    # Even one GPU with its share of CPUs (16) is more than the GPU node's 8 CPUs: no split
    # keeps the totals and fits, so none is offered.
    assert report.fixes == []


def test_the_launcher_must_fit_a_node_too():
    report = check_fit(spec(launcher_cpu="200"), [], [], NODES, "team-nlp")
    assert report.node_problem == (
        "No node can run the Launcher with 200 CPUs: the largest node has 96 (gpu-a100-0).")
    assert report.fixes == [Fix("Reduce Launcher CPUs to 96", {"launcher_cpu": "96"})]


def test_only_nodes_with_the_selected_labels_count():
    job = spec(gpus_per_worker=8, workers=1, node_selector={"gpu-type": "t4"})
    report = check_fit(job, [], [], NODES, "team-nlp")
    assert report.node_problem == (
        "No node can run a Worker with 8 GPUs: the largest GPU node has 4 (gpu-t4-0). Only nodes "
        "with gpu-type=t4 count, as the node selector asks.")
    assert report.fixes == [Fix("Use 4 GPUs per worker and 2 workers",
                                {"workers": 2, "gpus_per_worker": 4})]


def test_a_node_selector_no_node_matches():
    job = spec(node_selector={"gpu-type": "h100"})
    report = check_fit(job, [], [], NODES, "team-nlp")
    assert report.node_problem == ("No node has the labels gpu-type=h100 that the node selector "
                                   "asks for: change or remove the node selector.")
    assert report.fixes == [Fix("Remove the node selector", {"node_selector": {}})]


def test_a_node_affinity_no_node_meets_is_named():
    job = spec(node_affinity=[NodeRequirement("gpu-type", "In", ["h100", "a100"])])
    report = check_fit(job, [], [], NODES, "team-nlp")
    assert not report.fits
    assert report.node_problem == ("No node meets the node affinity gpu-type In h100,a100: "
                                   "change or remove the node affinity.")
    assert report.fixes == [Fix("Remove the node affinity", {"node_affinity": []})]


def test_nodes_that_do_not_meet_the_node_affinity_do_not_count():
    # without the rule the A100 node holds 8 GPUs; only the T4 node meets it
    job = spec(gpus_per_worker=8, workers=1,
               node_affinity=[NodeRequirement("gpu-type", "Exists")])
    report = check_fit(job, [], [], NODES, "team-nlp")
    assert report.node_problem == (
        "No node can run a Worker with 8 GPUs: the largest GPU node has 4 (gpu-t4-0). Only nodes "
        "that meet the node affinity gpu-type Exists count.")
    job = spec(gpus_per_worker=8, workers=1,
               node_affinity=[NodeRequirement("gpu-type", "DoesNotExist")])
    assert check_fit(job, [], [], NODES, "team-nlp").node_problem == ""


def test_a_node_selector_and_a_node_affinity_that_leave_no_node_together():
    job = spec(gpus_per_worker=1, node_selector={"gpu-type": "t4"},
               node_affinity=[NodeRequirement("gpu-type", "NotIn", ["t4"])])
    report = check_fit(job, [], [], NODES, "team-nlp")
    assert report.node_problem == (
        "No node with the labels gpu-type=t4 (the node selector) also meets the node affinity "
        "gpu-type NotIn t4: change or remove one of them.")
    assert report.fixes == [Fix("Remove the node affinity", {"node_affinity": []})]


def test_the_room_now_counts_only_nodes_meeting_the_node_affinity():
    # right now the T4 node's GPUs are taken; the A100 node has room, but the rule leaves
    # only the T4 node
    room = node_sizes([NODES[0], NODES[1], node("gpu-t4-0", "32", "128Gi", 0,
                                                {"gpu-type": "t4"})])
    job = spec(workers=1, gpus_per_worker=2, cpu_per_worker="8", memory_per_worker="8Gi",
               node_affinity=[NodeRequirement("gpu-type", "In", ["t4"])])
    report = check_fit(job, [], [], NODES, "team-nlp", room=room)
    assert not report.fits and report.problems == [
        "Right now no node has room for a Worker (8 CPU, 8Gi, 2 GPUs): other jobs hold it."]
    free = dataclasses.replace(job, node_affinity=[])
    assert check_fit(free, [], [], NODES, "team-nlp", room=room).fits


def test_unknown_nodes_mean_nothing_is_said_about_them():
    report = check_fit(spec(gpus_per_worker=64), [], [], [], "team-nlp")
    assert report.fits and report.node_problem == ""


def test_nodes_without_allocatable_use_their_capacity():
    bare = {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "64", "memory": "256Gi",
                                                               "nvidia.com/gpu": "8"}}}
    assert check_fit(spec(), [], [], [bare], "team-nlp").fits


@pytest.mark.parametrize("workers", [0, -1, "4"])
def test_nonsense_specs_do_not_raise(workers):
    report = check_fit(spec(workers=workers), [GPU_QUOTA], [{"spec": {"limits": "x"}}],
                       [{"status": "x"}, "junk"], "team-nlp")
    assert report.fixes == []


# --- room on the nodes now ----------------------------------------------------------------------

def pod(name: str, node_name: str, gpus: int = 0, cpu: str = "1", phase: str = "Running") -> dict:
    requests = {"cpu": cpu, "memory": "1Gi"}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name, "namespace": "other", "uid": name},
            "spec": {"nodeName": node_name,
                     "containers": [{"name": "c", "resources": {"requests": requests}}]},
            "status": {"phase": phase}}


GPU_NODES = [node("gpu-1", "64", "512Gi", 8), node("gpu-2", "64", "512Gi", 8),
             node("cpu-1", "16", "64Gi")]


def test_a_job_the_quota_takes_but_the_nodes_half_start_is_told_so():
    from odh.training.capacity.allocation import room_now
    # 1 GPU free on the whole cluster: a 2 x 1-GPU job would start one Worker of two
    room = room_now(GPU_NODES, [pod("a", "gpu-1", 8), pod("b", "gpu-2", 7)])
    report = check_fit(spec(workers=2, gpus_per_worker=1), [], [], GPU_NODES, "team-nlp",
                       room=room)
    assert not report.fits and not report.never_fits
    assert report.problems == [
        "Right now the cluster's nodes have room for 1 of its 2 Workers (8 CPU, 32Gi, 1 GPU "
        "each): other jobs hold the rest."]
    assert "start one by one" in report.waiting_note
    # with a queue, Kueue starts it whole
    queued = check_fit(spec(workers=2, gpus_per_worker=1, queue_name="team-nlp-queue"), [],
                       [], GPU_NODES, "team-nlp", room=room)
    assert queued.waiting_note == (
        "You can still create the job: Kueue holds it in team-nlp-queue and starts the whole "
        "job at once when there is room.")


def test_each_worker_is_placed_on_a_node_with_room_for_all_of_it():
    from odh.training.capacity.allocation import room_now
    # 4 + 4 GPUs free, but on two nodes: two 4-GPU Workers fit, one 8-GPU Worker does not
    room = room_now(GPU_NODES, [pod("a", "gpu-1", 4), pod("b", "gpu-2", 4)])
    assert check_fit(spec(workers=2, gpus_per_worker=4), [], [], GPU_NODES, "team-nlp",
                     room=room).fits
    report = check_fit(spec(workers=1, gpus_per_worker=8), [], [], GPU_NODES, "team-nlp",
                       room=room)
    assert report.problems == [
        "Right now no node has room for a Worker (8 CPU, 32Gi, 8 GPUs): other jobs hold it."]
    # finished pods hold nothing; a cordoned node has no room
    freed = room_now(GPU_NODES, [pod("a", "gpu-1", 8, phase="Succeeded")])
    assert check_fit(spec(workers=2, gpus_per_worker=8), [], [], GPU_NODES, "team-nlp",
                     room=freed).fits
    cordoned = [dict(GPU_NODES[0], spec={"unschedulable": True}), *GPU_NODES[1:]]
    assert not check_fit(spec(workers=2, gpus_per_worker=8), [], [], cordoned, "team-nlp",
                         room=room_now(cordoned, [])).fits


def test_the_launcher_needs_a_place_too():
    from odh.training.capacity.allocation import room_now
    nodes = [node("gpu-1", "8", "32Gi", 8)]
    report = check_fit(spec(workers=1, gpus_per_worker=8), [], [], nodes, "team-nlp",
                       room=room_now(nodes, []))
    assert report.problems == [
        "Right now no node has room for the Launcher after its Workers: other jobs hold it."]


def test_a_trainjobs_fixes_speak_of_nodes():
    """A TrainJob's Workers are its nodes, in upstream's word: its fixes say so."""
    from odh.training.kinds import kind_for_slug
    job = kind_for_slug("trainjob").new_spec(
        name="bert", namespace="team-cv", image="quay.io/team/bert:1.0", workers=2,
        cpu_per_worker="96", memory_per_worker="256Gi", gpus_per_worker=1)
    report = check_fit(job, [CV_QUOTA], CV_LIMITS, NODES, "team-cv")
    labels = [fix.label for fix in report.fixes]
    # no Launcher beside them here: 3 x 64 CPUs fill the quota's 192
    assert labels[:2] == [
        "Use 64 CPUs per node and 3 nodes (in all: 3 GPUs instead of 2 GPUs)",
        "Reduce CPUs per node to 64 (in all: 128 CPUs instead of 192 CPUs)"], labels
    assert not any("worker" in label.lower() for label in labels), labels

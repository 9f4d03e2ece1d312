"""What an administrator types for a quota or a queue's nominal quota
(odh.training.capacity.quota_edit): checked, compared with what the form showed, patched."""

from __future__ import annotations

from odh.training.capacity import quota_edit as edit

QUOTA = {"metadata": {"name": "team-quota", "resourceVersion": "41"},
         "spec": {"hard": {"requests.nvidia.com/gpu": "24", "requests.cpu": "192",
                           "pods": "100"}},
         "status": {"used": {"requests.nvidia.com/gpu": "10", "requests.cpu": "20"}}}


def _typed(fields, **values):
    for f in fields:
        if f.name in values:
            f.typed = values[f.name]
        edit.check_amount(f, "the quota")
    return {f.name: f for f in fields}


def test_the_four_limits_as_the_quota_holds_them():
    fields = {f.name: f for f in edit.quota_fields(QUOTA)}
    assert [(f.key, f.current, f.used_text) for f in fields.values()] == [
        ("requests.nvidia.com/gpu", "24", "10 GPUs"), ("requests.cpu", "192", "20 CPUs"),
        ("requests.memory", "", "0 of memory"), ("count/mpijobs.kubeflow.org", "", "0 MPIJobs")]


def test_bad_values_say_how_to_write_them():
    fields = _typed(edit.quota_fields(QUOTA), gpus="lots", cpu="-1", mpijobs="2.5")
    assert fields["gpus"].error.startswith('"lots" is not a Kubernetes quantity')
    assert fields["cpu"].error == "CPUs cannot be negative: enter 0 or more (0 allows none)."
    assert fields["mpijobs"].error == ("MPIJobs count whole: enter a whole number such as "
                                       "3.")
    assert edit.changes(list(fields.values())) == []


def test_below_use_is_a_warning_and_the_patch_is_conditional():
    fields = _typed(edit.quota_fields(QUOTA), gpus="8", memory="1Ti")
    assert not any(f.error for f in fields.values())
    assert fields["gpus"].warning.startswith("10 GPUs in use now, more than 8 GPUs")
    assert [c.text for c in edit.changes(list(fields.values()))] == [
        "requests.nvidia.com/gpu: 24 -> 8", "requests.memory: none -> 1Ti"]
    assert edit.quota_patch(list(fields.values()), "41") == {
        "metadata": {"resourceVersion": "41"},
        "spec": {"hard": {"requests.nvidia.com/gpu": "8", "requests.memory": "1Ti"}}}


def test_an_emptied_field_lifts_the_limit_and_the_same_value_written_otherwise_is_no_change():
    fields = _typed(edit.quota_fields(QUOTA), gpus="", cpu="192000m")
    assert edit.quota_patch(list(fields.values()), "41")["spec"]["hard"] == {
        "requests.nvidia.com/gpu": None}


def test_a_limit_changed_since_the_form_was_made_is_stale():
    fields = edit.quota_fields(QUOTA)
    fields[0].shown = "16"
    assert edit.stale(fields) == [fields[0]]


def test_a_cluster_queues_nominal_quota_is_patched_in_place():
    cq = {"metadata": {"name": "q", "resourceVersion": "7"},
          "spec": {"resourceGroups": [
              {"coveredResources": ["cpu"], "flavors": [
                  {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "64"}]}]},
              {"coveredResources": ["nvidia.com/gpu"], "flavors": [
                  {"name": "a100", "resources": [{"name": "nvidia.com/gpu",
                                                  "nominalQuota": "8"}]}]}]},
          "status": {"flavorsUsage": [{"name": "a100", "resources": [
              {"name": "nvidia.com/gpu", "total": "6"}]}]}}
    fields = edit.nominal_fields(cq)
    assert [(f.name, f.title, f.current, f.used_text) for f in fields] == [
        ("nominal-0-0-0", "CPUs (default)", "64", "0 CPUs"),
        ("nominal-1-0-0", "GPUs (a100)", "8", "6 GPUs")]
    fields[1].typed = ""
    edit.check_amount(fields[1], "the queue", required=True)
    assert fields[1].error.startswith("Enter a value for GPUs (a100)")
    fields[1].typed, fields[1].error = "4", ""
    edit.check_amount(fields[1], "the queue", required=True)
    assert fields[1].warning.startswith("6 GPUs in use now, more than 4 GPUs")
    patch = edit.nominal_patch(cq, fields)
    assert patch["metadata"] == {"resourceVersion": "7"}
    assert patch["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0] == {
        "name": "nvidia.com/gpu", "nominalQuota": "4"}
    assert cq["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["nominalQuota"] == "8"


def test_a_workloads_priority_is_set_as_kueue_sets_it_from_a_class():
    from odh.training.queues import priority

    offered = priority.choices([{"metadata": {"name": "low"}, "value": 10},
                                {"metadata": {"name": "high"}, "value": 1000}])
    assert [c.label for c in offered] == ["high (1000)", "low (10)"]
    workload = {"metadata": {"resourceVersion": "9"},
                "spec": {"priority": 10, "priorityClassName": "low"}}
    assert priority.current(workload) == "low (10)"
    assert priority.check(workload, "urgent", offered) == (
        "Choose one of the cluster's workload priority classes.")
    assert priority.check(workload, "high", offered) == ""
    assert priority.patch(workload, offered[0]) == {
        "metadata": {"resourceVersion": "9"},
        "spec": {"priorityClassName": "high",
                 "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
                 "priority": 1000}}
    done = {**workload, "status": {"conditions": [{"type": "Finished", "status": "True"}]}}
    assert priority.check(done, "high", offered).startswith("This job's workload has finished")

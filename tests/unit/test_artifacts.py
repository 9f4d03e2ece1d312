"""Where a job writes, what a listing of it holds, and how a failed run is resumed
(odh.training.artifacts)."""

from __future__ import annotations

import pytest

from odh.training.artifacts.lister import (
    MOUNT,
    ListerSettings,
    download_command,
    lister_pod,
    listing_command,
)
from odh.training.artifacts.listing import UnsafePath, human_size, parse_listing, safe_relative
from odh.training.artifacts.outputs import OutputDir, find_outputs
from odh.training.artifacts.resume import ResumeWay, resume_changes, resume_way
from odh.training.kinds import MPIJOB


def mpijob(command: list[str], env: list[dict] | None = None, annotations: dict | None = None,
           worker_mounts: list[dict] | None = None, sub_path: str = "") -> dict:
    mount = {"name": "out", "mountPath": "/mnt/checkpoints"}
    if sub_path:
        mount["subPath"] = sub_path
    volumes = [{"name": "out", "persistentVolumeClaim": {"claimName": "checkpoints"}},
               {"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}},
               {"name": "scratch", "emptyDir": {}}]
    worker = {"name": "worker", "image": "img",
              "volumeMounts": worker_mounts if worker_mounts is not None else [
                  mount, {"name": "data", "mountPath": "/data", "readOnly": True},
                  {"name": "scratch", "mountPath": "/scratch"}]}
    return {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": "bert", "namespace": "team-nlp",
                     "annotations": annotations or {}},
        "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "launcher", "image": "img", "command": command, "env": env or []}]}}},
            "Worker": {"replicas": 2, "template": {"spec": {
                "containers": [worker], "volumes": volumes}}}}},
    }


TRAIN = ["mpirun", "-np", "2", "python", "train.py"]


def test_a_flag_of_the_launchers_command_names_a_directory_on_the_workers_claim():
    found = find_outputs(MPIJOB, mpijob([*TRAIN, "--output_dir", "/mnt/checkpoints/bert"]))
    assert found.outputs == [OutputDir("checkpoints", "bert", "/mnt/checkpoints/bert",
                                       "--output_dir")]
    assert found.claims == ["checkpoints", "datasets"]


@pytest.mark.parametrize("words", [["--checkpoint-dir=/mnt/checkpoints/run/"],
                                   ["--save_dir", "/mnt/checkpoints/x/../run"]])
def test_flags_are_read_in_both_forms_and_their_paths_normalised(words):
    found = find_outputs(MPIJOB, mpijob([*TRAIN, *words]))
    assert [(o.claim, o.sub_path, o.path) for o in found.outputs] == [
        ("checkpoints", "run", "/mnt/checkpoints/run")]


def test_a_sh_c_script_and_the_environment_name_directories_too():
    found = find_outputs(MPIJOB, mpijob(
        ["sh", "-c", "cd /w && mpirun -np 2 python t.py --output-dir /mnt/checkpoints/a"],
        env=[{"name": "CHECKPOINT_DIR", "value": "/mnt/checkpoints/b"}]))
    assert [(o.sub_path, o.named_by) for o in found.outputs] == [
        ("a", "--output-dir"), ("b", "CHECKPOINT_DIR")]


def test_the_annotation_wins_over_flags_and_env():
    found = find_outputs(MPIJOB, mpijob(
        [*TRAIN, "--output_dir", "/mnt/checkpoints/flag"],
        env=[{"name": "OUTPUT_DIR", "value": "/mnt/checkpoints/env"}],
        annotations={"opendatahub.io/output-path": "/mnt/checkpoints/declared"}))
    assert [(o.sub_path, o.named_by) for o in found.outputs] == [
        ("declared", "opendatahub.io/output-path")]


def test_a_mounts_sub_path_is_part_of_the_directory_in_the_volume():
    found = find_outputs(MPIJOB, mpijob([*TRAIN, "--output_dir", "/mnt/checkpoints"],
                                        sub_path="team/bert"))
    assert [(o.claim, o.sub_path) for o in found.outputs] == [("checkpoints", "team/bert")]


def test_a_path_on_no_claim_is_reported_as_lost_with_the_pod_not_listed():
    found = find_outputs(MPIJOB, mpijob([*TRAIN, "--output_dir", "/scratch/out"],
                                        env=[{"name": "OUTPUT_DIR", "value": "relative/out"}]))
    assert found.outputs == []
    assert found.not_on_a_volume == [("/scratch/out", "--output_dir"),
                                     ("relative/out", "OUTPUT_DIR")]


def test_a_job_that_names_no_directory_has_no_outputs_but_its_claims_are_known():
    found = find_outputs(MPIJOB, mpijob(TRAIN))
    assert found.outputs == [] and found.not_on_a_volume == []
    assert found.claims == ["checkpoints", "datasets"]


LISTING = """\
d 4096 1764478800.5 checkpoint-500
f 440473133 1764478801.25 checkpoint-500/pytorch_model.bin
f 880946266 1764478802 checkpoint-500/optimizer.pt
f 612 1764478802 checkpoint-500/trainer_state.json
d 4096 1764479400 checkpoint-1000
f 440473133 1764479401 checkpoint-1000/pytorch_model.bin
f 1204 1764479402 checkpoint-1000/trainer_state.json
f 88211 1764479403 events.out.tfevents.1764478000.bert-worker-0.41.0
f 0 1764479403 checkpoint-9.pt
this line is not one
f notanumber 1 broken
f 12 1764479404 name with spaces.txt
"""


def test_a_listing_gives_sizes_times_and_directories_sum_their_files():
    listing = parse_listing(LISTING)
    paths = [e.path for e in listing.entries]
    assert paths == sorted(paths) and "name with spaces.txt" in paths
    assert "broken" not in paths and len(listing.entries) == 10
    first = listing.get("checkpoint-500")
    assert first is not None and first.is_dir
    assert first.size == 440473133 + 880946266 + 612
    assert listing.get("checkpoint-500/pytorch_model.bin").modified.timestamp() == 1764478801.25
    assert [e.name for e in listing.event_files] == [
        "events.out.tfevents.1764478000.bert-worker-0.41.0"]
    assert listing.event_dirs == [""]


def test_the_newest_checkpoint_is_the_highest_step_and_an_empty_file_is_none():
    listing = parse_listing(LISTING)
    assert [c.step for c in listing.checkpoints] == [500, 1000]
    assert listing.newest_checkpoint.path == "checkpoint-1000"
    assert parse_listing("").newest_checkpoint is None


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../other/file", "a/../../b", "..", "a\\b"])
def test_a_path_outside_the_output_directory_is_refused(path):
    with pytest.raises(UnsafePath):
        safe_relative(path)


def test_a_path_inside_is_normalised():
    assert safe_relative("checkpoint-500/./trainer_state.json") == \
        "checkpoint-500/trainer_state.json"
    assert human_size(612) == "612 B" and human_size(440473133) == "420.1 MiB"


def test_the_lister_pod_mounts_the_claim_read_only_and_runs_find_there():
    output = OutputDir("checkpoints", "bert", "/mnt/checkpoints/bert", "--output_dir")
    pod = lister_pod("bert", "team-nlp", output, listing_command(output), ListerSettings())
    spec = pod["spec"]
    assert spec["volumes"][0]["persistentVolumeClaim"] == {"claimName": "checkpoints",
                                                           "readOnly": True}
    container = spec["containers"][0]
    assert container["volumeMounts"][0]["readOnly"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert spec["restartPolicy"] == "Never" and spec["automountServiceAccountToken"] is False
    assert container["command"][:2] == ["find", f"{MOUNT}/bert"]
    assert "training.kubeflow.org/job-name" not in pod["metadata"]["labels"]
    command = download_command(output, "checkpoint-500/trainer_state.json", 1000)
    assert command[1] == f"{MOUNT}/bert/checkpoint-500/trainer_state.json"
    assert command[command.index("-size") + 1] == "-1001c"


def _spec(command: list[str], env: list[dict] | None = None, annotations: dict | None = None):
    return MPIJOB.read_manifest(mpijob(command, env, annotations))


def test_the_resume_flag_is_declared_by_an_annotation_and_set_in_the_clones_command():
    spec = _spec([*TRAIN, "--output_dir", "/mnt/checkpoints/bert"],
                 annotations={"opendatahub.io/resume-arg": "--resume_from_checkpoint"})
    way = resume_way(spec)
    assert way == ResumeWay(flag="--resume_from_checkpoint")
    changed = resume_changes(spec, way, "/mnt/checkpoints/bert/checkpoint-1000")
    assert changed["command"][-2:] == ["--resume_from_checkpoint",
                                       "/mnt/checkpoints/bert/checkpoint-1000"]
    again = _spec(changed["command"],
                  annotations={"opendatahub.io/resume-arg": "--resume_from_checkpoint"})
    assert resume_changes(again, way, "/x/checkpoint-2")["command"].count(
        "--resume_from_checkpoint") == 1


def test_in_a_sh_c_script_the_flag_goes_at_the_scripts_end():
    spec = _spec(["sh", "-c", "mpirun -np 2 python t.py"],
                 annotations={"opendatahub.io/resume-arg": "--resume"})
    changed = resume_changes(spec, resume_way(spec), "/mnt/c/checkpoint 2")
    assert changed["command"] == ["sh", "-c", "mpirun -np 2 python t.py --resume "
                                  "'/mnt/c/checkpoint 2'"]


def test_a_resume_from_variable_declares_the_env_way():
    spec = _spec(TRAIN, env=[{"name": "RESUME_FROM", "value": ""},
                             {"name": "NCCL_DEBUG", "value": "INFO"}])
    way = resume_way(spec)
    assert way == ResumeWay(env="RESUME_FROM")
    env = resume_changes(spec, way, "/mnt/checkpoints/checkpoint-3")["env"]
    assert [(e["name"], e["value"]) for e in env] == [
        ("NCCL_DEBUG", "INFO"), ("RESUME_FROM", "/mnt/checkpoints/checkpoint-3")]


def test_a_job_that_declares_no_way_cannot_be_resumed():
    assert resume_way(_spec([*TRAIN, "--output_dir", "/mnt/checkpoints/x"])) is None
    assert resume_way(_spec(TRAIN, annotations={"opendatahub.io/resume-arg": "not a flag"})) \
        is None


def test_a_trainjob_writes_where_its_trainer_says_on_the_node_jobs_claim():
    from odh.training.kinds import TRAINJOB

    job = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
           "metadata": {"name": "ner", "namespace": "research"},
           "spec": {"runtimeRef": {"name": "torch-distributed"},
                    "trainer": {"image": "img", "command": ["torchrun", "train.py"],
                                "args": ["--output_dir=/mnt/out/ner"]},
                    "podSpecOverrides": [{
                        "targetJobs": [{"name": "node"}],
                        "volumes": [{"name": "o", "persistentVolumeClaim": {
                            "claimName": "checkpoints"}}],
                        "containers": [{"name": "node", "volumeMounts": [
                            {"name": "o", "mountPath": "/mnt/out"}]}]}]}}
    found = find_outputs(TRAINJOB, job)
    assert [(o.claim, o.sub_path, o.named_by) for o in found.outputs] == [
        ("checkpoints", "ner", "--output_dir")]


def _suspended_job() -> dict:
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "gpt2", "namespace": "team-nlp", "uid": "u1",
                         "creationTimestamp": "2026-11-30T10:00:00Z"},
            "spec": {"runPolicy": {"suspend": True}, "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1}, "Worker": {"replicas": 2}}},
            "status": {"conditions": [
                {"type": "Created", "status": "True", "reason": "MPIJobCreated",
                 "lastTransitionTime": "2026-11-30T10:00:00Z"},
                {"type": "Suspended", "status": "True", "reason": "MPIJobSuspended",
                 "message": "MPIJob team-nlp/gpt2 is suspended.",
                 "lastTransitionTime": "2026-11-30T10:20:00Z"}]}}


def _event(reason: str, message: str, at: str) -> dict:
    return {"reason": reason, "message": message, "lastTimestamp": at, "type": "Normal",
            "involvedObject": {"kind": "MPIJob", "name": "gpt2", "namespace": "team-nlp"}}


def test_a_run_kueue_preempted_is_resumable_and_one_suspended_by_hand_is_not():
    from datetime import UTC, datetime

    from odh.training.artifacts.resume import resumable
    from odh.training.status.summarize import summarize

    job, now = _suspended_job(), datetime(2026, 11, 30, 11, tzinfo=UTC)
    preempted = _event("Stopped", "Preempted to accommodate a workload (UID: w2, JobUID: j2) "
                       "due to prioritization in the ClusterQueue", "2026-11-30T10:20:00Z")
    summary = summarize(job, [], [preempted], now)
    assert summary.status == "Suspended"
    assert resumable(summary, [preempted])
    assert not resumable(summary, [])  # suspended, no word of a preemption
    # suspended again by its owner after the preemption: the last word is theirs
    by_hand = _event("MPIJobSuspended", "MPIJob team-nlp/gpt2 is suspended.",
                     "2026-11-30T10:40:00Z")
    assert not resumable(summary, [preempted, by_hand])
    # another job's preemption says nothing of this one
    other = {**preempted, "involvedObject": {"kind": "MPIJob", "name": "bert"}}
    assert not resumable(summary, [other])
    running = summarize({**job, "spec": {**job["spec"], "runPolicy": {}}, "status": {}},
                        [], [preempted], now)
    assert not resumable(running, [preempted])

"""A job's checkpoints on its volume, as simcluster writes them while it trains, read back
by the dashboard's short-lived lister pod through the official client, as alice (who may
create pods in team-nlp) and as bob (who may only read there)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from odh.training.artifacts.lister import (
    ARTIFACTS_LABEL,
    ArtifactsRefused,
    ListerSettings,
    download,
    list_output,
)
from odh.training.artifacts.outputs import find_outputs
from odh.training.cluster.api import make_api_client
from odh.training.cluster.client import ClusterClient
from odh.training.kinds import MPIJOB
from tests import simcluster_process
from tests.waiting import wait_until

NS = "team-nlp"
PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
       "metadata": {"name": "checkpoints", "namespace": NS},
       "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Ti"}}}}


def mpijob(name: str, ago: str, run_seconds: int, epochs: int) -> dict:
    return {"ago": ago, "as": "alice", "manifest": {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
        "metadata": {"name": name, "namespace": NS, "annotations": {
            "simcluster.io/run-seconds": str(run_seconds), "simcluster.io/epochs": str(epochs)}},
        "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{
                "name": "launcher", "image": "quay.io/team/bert:1",
                "command": ["mpirun", "-np", "2", "python", "train.py",
                            "--output_dir", f"/mnt/checkpoints/{name}"],
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}},
            "Worker": {"replicas": 2, "template": {"spec": {
                "containers": [{"name": "worker", "image": "quay.io/team/bert:1",
                                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                                "volumeMounts": [{"name": "out",
                                                  "mountPath": "/mnt/checkpoints"}]}],
                "volumes": [{"name": "out",
                             "persistentVolumeClaim": {"claimName": "checkpoints"}}]}}}}}}}


SCENARIO = {
    "name": "artifacts",
    "users": [{"name": "alice", "groups": ["data-scientists"]},
              {"name": "bob", "groups": ["researchers"]},
              {"name": "admin", "groups": ["cluster-admins"]}],
    "namespaces": [NS],
    "nodes": [{"name": "cpu-0", "cpu": 64, "memory": "256Gi"}],
    "access": [{"user": "alice", "role": "edit", "namespaces": [NS]},
               {"user": "bob", "role": "view", "namespaces": [NS]},
               {"user": "admin", "clusterRole": "cluster-admin"}],
    "objects": [PVC],
    "jobs": [mpijob("bert-done", "30m", 400, 5)],
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start_scenario(tmp_path_factory.mktemp("artifacts"), SCENARIO)
    yield sim
    sim.stop()


def client_of(cluster, user: str) -> ClusterClient:
    return ClusterClient(make_api_client(cluster.api_url, cluster.token(user),
                                         str(cluster.ca_file)))


FAST = ListerSettings(timeout=30, download_limit=64 * 1024, poll=0.1)


def _output(client: ClusterClient, name: str):
    return find_outputs(MPIJOB, client.get_job(MPIJOB, NS, name)).outputs[0]


def test_a_finished_jobs_checkpoints_are_listed_with_sizes_and_times_as_alice(cluster):
    with client_of(cluster, "alice") as alice:
        output = _output(alice, "bert-done")
        assert (output.claim, output.sub_path) == ("checkpoints", "bert-done")
        listing = list_output(alice, NS, "bert-done", output, FAST)
        pods = alice.core.list_namespaced_pod(NS, label_selector=ARTIFACTS_LABEL).items
    names = {e.path for e in listing.entries}
    # five epochs, the last three checkpoints kept; the final model at the root
    assert [c.path for c in listing.checkpoints] == [
        "checkpoint-" + str(s) for s in sorted(int(c.path.split("-")[1])
                                               for c in listing.checkpoints)]
    assert len(listing.checkpoints) == 3
    newest = listing.newest_checkpoint
    assert f"{newest.path}/trainer_state.json" in names
    assert {"pytorch_model.bin", "config.json", "train_results.json"} <= names
    assert len(listing.event_files) == 1 and listing.event_files[0].size > 88
    model = listing.get("pytorch_model.bin")
    assert model.size > 90 * 1024 * 1024
    assert newest.entry.size > 3 * model.size  # the model and its optimizer's state
    assert newest.entry.modified <= listing.get("train_results.json").modified
    assert not any(p.metadata.name.startswith("bert-done-artifacts-")
                   for p in pods if p.metadata.deletion_timestamp is None)


def test_alice_downloads_a_small_file_and_a_large_one_is_refused(cluster):
    with client_of(cluster, "alice") as alice:
        output = _output(alice, "bert-done")
        listing = list_output(alice, NS, "bert-done", output, FAST)
        state = f"{listing.newest_checkpoint.path}/trainer_state.json"
        got = download(alice, NS, "bert-done", output, state, FAST)
        assert got.name == "trainer_state.json"
        step = json.loads(got.content)["global_step"]
        assert listing.newest_checkpoint.path == f"checkpoint-{step}"
        with pytest.raises(ArtifactsRefused) as too_big:
            download(alice, NS, "bert-done", output, "pytorch_model.bin", FAST)
        assert too_big.value.reason == "too-big" and "oc rsync" in too_big.value.message
        with pytest.raises(ArtifactsRefused) as missing:
            download(alice, NS, "bert-done", output, "no/such.file", FAST)
        assert missing.value.reason == "not-found"


def test_bob_who_may_not_create_pods_is_refused_in_plain_words(cluster):
    with client_of(cluster, "bob") as bob:
        output = _output(bob, "bert-done")
        with pytest.raises(ArtifactsRefused) as refused:
            list_output(bob, NS, "bert-done", output, FAST)
    assert refused.value.reason == "forbidden"
    assert "You may not start pods in team-nlp" in refused.value.message


def test_a_lister_pod_that_cannot_start_says_so_with_the_schedulers_words(cluster):
    short = ListerSettings(timeout=60, poll=0.1)
    with client_of(cluster, "alice") as alice:
        output = replace(_output(alice, "bert-done"), claim="deleted-claim")
        with pytest.raises(ArtifactsRefused) as refused:
            list_output(alice, NS, "bert-done", output, short)
        assert refused.value.reason == "not-started"
        assert "The pod that reads the volume “deleted-claim” did not start" in \
            refused.value.message
        assert 'persistentvolumeclaim "deleted-claim" not found' in refused.value.message
        # the pod is deleted all the same
        wait_until(lambda: not [p for p in alice.core.list_namespaced_pod(
            NS, label_selector=ARTIFACTS_LABEL).items], 20)

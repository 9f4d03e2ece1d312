"""The SDK in a notebook against a real simcluster: `wait_for_completion(show_progress=...)`
prints the status and the training's progress as it goes (plain lines, and a tqdm bar),
and a job, its status and its diagnosis render as HTML with what the cluster said."""

from __future__ import annotations

import re

import pytest
import yaml

from odh.training import JobFailedError, MPIJob, ResourceSpec
from odh.training.sdk import TrainingClient
from tests import plan_cluster, simcluster_process
from tests.plan_cluster import IMAGE, NS

cluster, alice = plan_cluster.cluster, plan_cluster.alice


def job(name: str, client: TrainingClient, **annotations: str) -> MPIJob:
    """Two Workers training 30 epochs for 600 nominal seconds (12 s at the tests' speed)."""
    return MPIJob(name=name, namespace=NS, workers=2, image=IMAGE,
                  command=["horovodrun", "-np", "2", "python", "train.py", "--epochs", "30"],
                  worker_resources=ResourceSpec(cpu="1", memory="1Gi"),
                  annotations={"simcluster.io/run-seconds": "600", "simcluster.io/epochs": "30",
                               **annotations}, client=client)


def test_waiting_prints_the_status_and_the_epochs_as_lines(alice, capsys):
    final = job("nb-text", alice).create().wait_for_completion(timeout=180,
                                                               show_progress="text")
    assert final.phase == "Succeeded"
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("nb-text: ") for line in lines)
    assert len(lines) == len(set(lines))  # a line only when it says something new
    epochs = [line for line in lines if re.match(r"nb-text: Running \u00b7 Epoch \d+ of 30 "
                                                 r"\(\d+%\)", line)]
    assert epochs, lines
    assert any("left" in line for line in epochs), epochs  # time left, from the log's times
    assert re.match(r"nb-text: Succeeded \u00b7 Completed in ", lines[-1]), lines[-1]


def test_waiting_with_tqdm_draws_a_bar_that_ends_full(alice, capsys):
    final = job("nb-bar", alice).create().wait_for_completion(timeout=180, show_progress=True)
    assert final.phase == "Succeeded"
    err = capsys.readouterr().err
    assert re.search(r"nb-bar Running: +\d+%\|.*\| Epoch \d+ of 30", err), err[-800:]
    assert re.search(r"nb-bar Succeeded: 100%\|[^\n\r]*\| Completed in ", err), err[-800:]


def test_a_failed_wait_shows_failed_and_its_diagnosis_renders(alice, capsys):
    failing = job("nb-fails", alice, **{"simcluster.io/failure": "command-not-found"}).create()
    with pytest.raises(JobFailedError) as failed:
        failing.wait_for_completion(timeout=180, show_progress="text")
    assert capsys.readouterr().out.splitlines()[-1].startswith("nb-fails: Failed \u00b7 ")
    html = failed.value.diagnosis._repr_html_()
    assert '<span aria-hidden="true">\u2717</span> Error</span>' in html
    headline = failed.value.diagnosis.headline
    assert headline and headline.replace("“", "").split()[0] in html
    assert "<code" in html  # the log line it rests on, as code


def test_a_job_read_from_the_cluster_shows_where_it_stands(alice):
    created = job("nb-html", alice, **{"simcluster.io/run-seconds": "6000"}).create()
    try:
        found = MPIJob.get("nb-html", NS, client=alice)
        html = found._repr_html_()
        assert ">MPIJob nb-html<" in html and "<code" in html and IMAGE in html
        assert re.search(r"</span> (Pending|Running)</span>", html), html
        assert "2 \u00d7 1 CPU, 1Gi" in html and ">Workers<" in html
        status = found.status()._repr_html_()
        assert re.search(r"of 2 running", status)
    finally:
        created.delete()


def test_a_cluster_that_does_not_answer_is_one_line_not_an_exception(alice, cluster,
                                                                     tmp_path):
    config = yaml.safe_load(cluster.kubeconfig("alice").read_text())
    for entry in config["clusters"]:
        entry["cluster"]["server"] = f"https://127.0.0.1:{simcluster_process.free_port()}"
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    created = job("nb-away", alice, **{"simcluster.io/run-seconds": "6000"}).create()
    try:
        with TrainingClient(kubeconfig=str(path)) as away:
            shown = MPIJob.from_manifest(created.object, client=away)
            shown.object = created.object
            html = shown._repr_html_()
        assert "Its status could not be read" in html and ">MPIJob nb-away<" in html
    finally:
        created.delete()

"""The parts of a job's TensorBoard that need no cluster: copies that grow as TensorBoard
expects, the pod's arguments for one output directory and for several, and what the proxy
passes on."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from odh.training.artifacts.outputs import OutputDir
from odh.training.artifacts.tensorboard import (
    LogDir,
    board_args,
    board_name,
    board_pod,
    board_service,
    write_growing,
)
from training.tensorboards.proxy import NotForwarded, may_forward

OUT = OutputDir("checkpoints", "bert", "/mnt/checkpoints/bert", "--output_dir")
TB = OutputDir("scratch", "runs/tb", "/mnt/scratch/runs/tb", "opendatahub.io/output-path")


def test_a_copy_that_grew_is_appended_to_and_one_that_changed_is_written_anew(tmp_path):
    path = tmp_path / "run" / "events.out.tfevents.1.h.1.0"
    write_growing(path, b"abc")
    with path.open("rb") as reader:  # TensorBoard keeps the file open where it read to
        assert reader.read() == b"abc"
        inode = path.stat().st_ino
        write_growing(path, b"abcdef")
        assert reader.read() == b"def" and path.stat().st_ino == inode
    write_growing(path, b"xyz")
    assert path.read_bytes() == b"xyz"


def test_the_pod_reads_one_output_with_logdir_and_several_with_logdir_spec():
    one = board_args([LogDir(0, OUT, ""), LogDir(0, OUT, "runs/a")], "/p")
    assert one[:3] == ["tensorboard", "--logdir", "/logs/0/bert"]
    assert one[one.index("--path_prefix") + 1] == "/p"
    several = board_args([LogDir(0, OUT, ""), LogDir(1, TB, "")], "/p")
    assert several[1:3] == ["--logdir_spec", "0-bert:/logs/0/bert,1-tb:/logs/1/runs/tb"]


def test_the_pod_mounts_each_claim_read_only_and_its_service_selects_it():
    pod = board_pod("BERT_run.v2", "team-nlp", "a1b2c3d4e5f6a7b8",
                    [LogDir(0, OUT, ""), LogDir(1, TB, "")], "/p", "img")
    assert pod["metadata"]["name"] == board_name("BERT_run.v2", "a1b2c3d4e5f6a7b8") \
        == "tb-bert-run-v2-a1b2c3d4"
    claims = [v["persistentVolumeClaim"] for v in pod["spec"]["volumes"]
              if "persistentVolumeClaim" in v]
    assert claims == [{"claimName": "checkpoints", "readOnly": True},
                      {"claimName": "scratch", "readOnly": True}]
    mounts = pod["spec"]["containers"][0]["volumeMounts"]
    assert all(m["readOnly"] for m in mounts if m["name"].startswith("logs-"))
    assert pod["metadata"]["labels"]["opendatahub.io/tensorboard-for"] == "BERT_run.v2"
    service = board_service(pod)
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert service["metadata"]["ownerReferences"][0]["kind"] == "Pod"


@pytest.mark.parametrize(("method", "rest", "headers", "status"), [
    ("get", "data/plugin/scalars/tags", {}, None),
    ("head", "", {}, None),
    ("delete", "data/plugin/scalars/tags", {}, 405),
    ("put", "data/plugin/timeseries/timeSeries", {}, 405),
    ("post", "data/plugin/scalars/tags", {"X-XSRF-Protected": "1"}, 405),
    ("post", "data/plugin/timeseries/timeSeries", {}, 403),
    ("post", "experiment/e/data/plugin/timeseries/timeSeries", {"X-XSRF-Protected": "1"}, None),
])
def test_the_proxy_passes_reads_only(method, rest, headers, status):
    request = getattr(RequestFactory(), method)("/x/" + rest, headers=headers)
    if status is None:
        may_forward(request, rest)
    else:
        with pytest.raises(NotForwarded) as refused:
            may_forward(request, rest)
        assert refused.value.status == status


def test_without_tensorboard_installed_the_local_runner_says_what_to_do(monkeypatch, settings):
    import importlib.util

    from odh.training.artifacts.reading import Artifacts
    from odh.training.artifacts.tensorboard import TensorBoardRefused
    from training.tensorboards import runners
    from training.tensorboards.boards import Board

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tensorboard" else real(name, *a))
    board = Board(("p", "team-nlp", "mpijob", "j"), "local", "token", "/p", finished=True)
    with pytest.raises(TensorBoardRefused) as refused:
        runners.start_local(board, None, {}, Artifacts(None), None)  # type: ignore[arg-type]
    assert refused.value.reason == "not-installed"
    assert "TENSORBOARD_RUNNER=pod" in refused.value.message

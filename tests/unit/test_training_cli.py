"""`odh-training`'s answers to bad input, before any cluster is asked."""

from __future__ import annotations

import io

import pytest

from odh.training import cli


def run(capsys, *argv: str) -> tuple[int, str, str]:
    out = io.StringIO()
    code = cli.main(list(argv), out=out)
    return code, out.getvalue(), capsys.readouterr().err


def test_it_says_what_is_missing_for_a_create_from_flags(capsys):
    code, out, err = run(capsys, "create", "--name", "bert")
    assert code == 2 and out == ""
    assert err.startswith("error: Missing --image, COMMAND: e.g. odh-training create --name")


def test_it_refuses_a_manifest_and_a_command_together(capsys, tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("kind: MPIJob\n")
    code, _out, err = run(capsys, "create", "-f", str(path), "--", "python", "train.py")
    assert code == 2
    assert "Give either a manifest (-f) or a command after --, not both" in err


def test_it_says_which_file_it_cannot_read(capsys, tmp_path):
    code, _out, err = run(capsys, "create", "-f", str(tmp_path / "missing.yaml"))
    assert code == 2
    assert err == f"error: Cannot read {tmp_path / 'missing.yaml'}: No such file or directory.\n"


def test_it_explains_what_is_wrong_with_a_manifest(capsys, tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n")
    code, _out, err = run(capsys, "create", "-f", str(path))
    assert code == 2
    assert err.startswith(f"error: {path}: ") and "MPIJob" in err


@pytest.mark.parametrize("argv, message", [
    (("--cpu", "lots"), "error: --cpu: “lots” is not a quantity"),
    (("--env", "NOVALUE"), "error: --env “NOVALUE”: write NAME=VALUE"),
    (("--node-selector", "=x"), "error: --node-selector: "),
])
def test_it_refuses_malformed_flags(capsys, argv, message):
    code, _out, err = run(capsys, "create", "--name", "bert", "--image", "img:1", *argv,
                          "--", "python", "train.py")
    assert code == 2
    assert err.startswith(message)


def test_without_a_kubeconfig_it_says_how_to_log_in(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    code, _out, err = run(capsys, "list")
    assert code == 1
    assert err == ('error: No cluster to talk to: log in with "oc login", set KUBECONFIG, or '
                   "pass --kubeconfig.\n")


def test_it_is_installed_as_the_odh_training_command():
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="odh-training")
    assert script.value == "odh.training.cli:main_exit"

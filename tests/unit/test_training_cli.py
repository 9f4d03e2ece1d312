"""`odh training` (and its alias `odh-training`): the grammar, the flags `--help` documents,
and the answers to bad input before any cluster is asked."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
import yaml

from odh.training import cli
from odh.training.cli.parsing import parse

PLAN_FLAGS = {
    # the plan's table (sdk-cli-surface.md), verb by verb
    "create": ["-f", "--image", "--workers", "--gpu-per-worker", "--cpu-per-worker",
               "--memory-per-worker", "--command", "--wait", "--timeout", "--dry-run",
               "--force", "--namespace", "-n"],
    "describe": ["--watch", "-o"],
    "logs": ["--worker", "--follow", "--tail", "--all-workers"],
    "list": ["--all-namespaces", "--status", "-o"],
    "delete": ["--confirm", "--wait"],
    "get": ["-o", "--all-namespaces"],
    "wait": ["--timeout", "--for"],
    "suspend": ["--namespace"],
    "resume": ["--namespace"],
}
COMMAND = ["--command", "python train.py"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    out = io.StringIO()
    code = cli.odh_main(list(argv), out=out)
    return code, out.getvalue(), capsys.readouterr().err


def help_of(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        cli.odh_main([*argv, "--help"], out=io.StringIO())
    assert exited.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("verb", sorted(PLAN_FLAGS))
def test_every_verbs_help_documents_the_plans_flags(capsys, verb):
    text = help_of(capsys, "training", verb)
    assert text.startswith(f"usage: odh training {verb}")
    for flag in PLAN_FLAGS[verb]:
        assert f"{flag} " in text or f"{flag}," in text or f"{flag}\n" in text \
            or f"{flag}=" in text or f"{flag} [" in text, (verb, flag)


def test_the_nouns_help_lists_every_verb_and_the_exit_codes(capsys):
    text = help_of(capsys, "training")
    for verb in PLAN_FLAGS:
        assert f"\n  {verb} " in text
    assert "0 done, 1 the cluster refused or the job failed, 2 bad input" in text
    assert "odh" in help_of(capsys) and "completion" in help_of(capsys)


def test_the_type_may_be_named_or_left_out():
    named = parse(["describe", "pytorchjob", "bert", "-n", "team-nlp"], "odh training")
    assert (named.kind, named.name, named.namespace) == ("pytorchjob", "bert", "team-nlp")
    plural = parse(["get", "mpijobs", "bert"], "odh training")
    assert (plural.kind, plural.name) == ("mpijob", "bert")
    bare = parse(["logs", "bert", "--worker", "2"], "odh training")
    assert (bare.kind, bare.name, bare.worker) == ("mpijob", "bert", 2)
    old = parse(["describe", "bert", "--type", "tfjob"], "odh training")
    assert (old.kind, old.name) == ("tfjob", "bert")
    listing = parse(["list", "mpijob", "-A", "--status", "running", "-o", "wide"],
                    "odh training")
    assert (listing.all_namespaces, listing.status, listing.output) == (True, "Running", "wide")


def test_flags_and_names_come_in_any_order_and_the_command_after_dashes():
    args = parse(["create", "--image", "img:1", "mpijob", "bert", "--workers", "2", "--",
                  "horovodrun", "-np", "2", "python", "train.py"], "odh training")
    assert (args.kind, args.name, args.image, args.workers) == ("mpijob", "bert", "img:1", 2)
    assert args.training_command == ["horovodrun", "-np", "2", "python", "train.py"]
    assert parse(["create", "mpijob", "x", "--dry-run"], "odh training").dry_run == "server"
    assert parse(["create", "mpijob", "x", "--dry-run=client"],
                 "odh training").dry_run == "client"


def test_a_verb_that_needs_a_name_says_so(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.odh_main(["training", "logs", "mpijob"], out=io.StringIO())
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err == ("error: which job? e.g. odh training logs mpijob NAME\n"
                   "See: odh training logs --help\n")


def test_it_says_what_is_missing_for_a_create_from_flags(capsys):
    code, out, err = run(capsys, "training", "create", "mpijob", "bert")
    assert code == 2 and out == ""
    assert err.startswith("error: Missing --image: e.g. odh training create mpijob "
                          "bert --image")


def test_it_refuses_a_manifest_and_a_command_together(capsys, tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("kind: MPIJob\n")
    code, _out, err = run(capsys, "training", "create", "mpijob", "-f", str(path), "--",
                          "python", "train.py")
    assert code == 2
    assert "Give either a manifest (-f) or a training command, not both" in err


def test_it_says_which_file_it_cannot_read(capsys, tmp_path):
    code, _out, err = run(capsys, "training", "create", "mpijob", "-f",
                          str(tmp_path / "missing.yaml"))
    assert code == 2
    assert err == f"error: Cannot read {tmp_path / 'missing.yaml'}: No such file or directory.\n"


def test_it_explains_what_is_wrong_with_a_manifest(capsys, tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n")
    code, _out, err = run(capsys, "training", "create", "mpijob", "-f", str(path))
    assert code == 2
    assert err.startswith(f"error: {path}: ") and "MPIJob" in err


@pytest.mark.parametrize("argv, message", [
    (("--cpu-per-worker", "lots"), "error: --cpu-per-worker: “lots” is not a quantity"),
    (("--env", "NOVALUE"), "error: --env “NOVALUE”: write NAME=VALUE"),
    (("--env-secret", "KEY=wandb"), "error: --env-secret “KEY=wandb”: write NAME=SECRET:KEY"),
    (("--node-selector", "=x"), "error: --node-selector: "),
    (("--command", "python 'train.py"), "error: --command: No closing quotation"),
])
def test_it_refuses_malformed_flags(capsys, argv, message):
    code, _out, err = run(capsys, "training", "create", "mpijob", "bert", "--image", "img:1",
                          *(argv if "--command" in argv else (*argv, *COMMAND)))
    assert code == 2
    assert err.startswith(message)


def test_a_client_dry_run_prints_the_manifest_and_sends_nothing(capsys, monkeypatch,
                                                                 tmp_path):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))  # no cluster at all
    code, out, err = run(capsys, "training", "create", "mpijob", "bert", "-n", "team-nlp",
                         "--image", "quay.io/team/bert:1.0", "--workers", "2",
                         "--gpu-per-worker", "1", "--dry-run=client", "--command",
                         "horovodrun -np 2 python train.py")
    assert code == 0, err
    manifest = yaml.safe_load(out)
    assert manifest["metadata"] == {"name": "bert", "namespace": "team-nlp"}
    worker = manifest["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    assert worker["template"]["spec"]["containers"][0]["resources"]["limits"][
        "nvidia.com/gpu"] == 1
    launcher = manifest["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    assert launcher["containers"][0]["command"] == ["horovodrun", "-np", "2", "python",
                                                    "train.py"]


def test_secrets_given_as_flags_are_in_the_manifest(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    code, out, err = run(capsys, "training", "create", "mpijob", "bert", "-n", "team-nlp",
                         "--image", "quay.io/team/bert:1.0", "--dry-run=client",
                         "--env-secret", "WANDB_API_KEY=wandb-api:api-key",
                         "--image-pull-secret", "quay-robot", "--command", "python t.py")
    assert code == 0, err
    for role in ("Launcher", "Worker"):
        pod = yaml.safe_load(out)["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        assert pod["imagePullSecrets"] == [{"name": "quay-robot"}]
        assert pod["containers"][0]["env"] == [{"name": "WANDB_API_KEY", "valueFrom": {
            "secretKeyRef": {"name": "wandb-api", "key": "api-key"}}}]


def test_a_client_dry_run_names_a_manifests_fields_not_flags(capsys, tmp_path):
    """A Worker count the manifest got wrong is named where it is in the manifest, not as
    --workers, which the person never typed."""
    path = tmp_path / "job.yaml"
    path.write_text("""
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: typo}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template: {spec: {containers: [{name: l, image: "img:1", command: [python, t.py]}]}}
    Worker:
      replica: 2
      template: {spec: {containers: [{name: w, image: "img:1"}]}}
""")
    code, _out, err = run(capsys, "training", "create", "mpijob", "-f", str(path),
                          "--dry-run=client", "-n", "team-nlp")
    assert code == 2
    assert "error: spec.mpiReplicaSpecs.Worker.replicas: " in err
    assert "--workers" not in err


def test_without_a_kubeconfig_it_says_how_to_log_in(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for argv in (("training", "list", "mpijob"), ("training", "describe", "mpijob", "x")):
        code, _out, err = run(capsys, *argv)
        assert code == 1
        assert err == ('error: No cluster to talk to: log in with "oc login", set KUBECONFIG, '
                       "or pass --kubeconfig.\n")


class _Closed(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


class _Interrupted(io.StringIO):
    def write(self, text: str) -> int:
        raise KeyboardInterrupt


def test_a_closed_pipe_and_ctrl_c_end_quietly(capsys):
    argv = ["training", "create", "mpijob", "x", "-n", "p", "--image", "i:1",
            "--dry-run=client", *COMMAND]
    assert cli.odh_main(argv, out=_Closed()) == 0
    assert capsys.readouterr().err == ""
    assert cli.odh_main(argv, out=_Interrupted()) == 130
    assert capsys.readouterr().err == "\nInterrupted.\n"


def test_describe_piped_into_head_ends_without_a_traceback(tmp_path):
    """`odh-training ... | head -1`, as a shell runs it: the reader leaves early."""
    script = (f"{sys.executable} -m odh.training.cli create mpijob x -n p --image i:1 "
              "--dry-run=client --command 'python t.py' | head -1")
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.stdout == "apiVersion: kubeflow.org/v2beta1\n"
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_scripts_offer_every_verb_and_flag(capsys, shell):
    code, out, _err = run(capsys, "completion", shell)
    assert code == 0
    assert "complete -F _odh_training_complete odh odh-training" in out
    for verb, flags in PLAN_FLAGS.items():
        assert f"        {verb}) flags=" in out
        for flag in (f for f in flags if f.startswith("--")):
            assert flag in out
    if shell == "zsh":
        assert out.startswith("autoload -U +X bashcompinit && bashcompinit")
    assert subprocess.run(["bash", "-n"], input=out, text=True).returncode == 0


def test_it_is_installed_as_odh_and_odh_training():
    from importlib.metadata import entry_points

    scripts = {s.name: s.value for s in entry_points(group="console_scripts")
               if s.name in ("odh", "odh-training")}
    assert scripts == {"odh": "odh.training.cli:odh_exit",
                       "odh-training": "odh.training.cli:main_exit"}


def test_list_takes_no_name(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.odh_main(["training", "list", "mpijob", "bert"], out=io.StringIO())
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith(
        "error: list takes no job name: odh training get mpijob bert shows one job\n")


def test_a_client_dry_run_takes_the_project_from_the_kubeconfig(capsys, tmp_path,
                                                                  monkeypatch):
    """Read from the file alone: the server it names is never asked."""
    config = tmp_path / "kubeconfig"
    config.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u",
                                               "namespace": "team-cv"}}]}))
    monkeypatch.setenv("KUBECONFIG", str(config))
    code, out, err = run(capsys, "training", "create", "mpijob", "bert", "--image", "i:1",
                         "--dry-run=client", *COMMAND)
    assert code == 0, err
    assert yaml.safe_load(out)["metadata"]["namespace"] == "team-cv"


def test_a_trainjobs_own_flags_make_it_and_another_kinds_job_refuses_them(capsys):
    """The flags only a kind's jobs take come from the kind (JobKind.command_line)."""
    code, out, err = run(capsys, "training", "create", "trainjob", "pi", "-n", "team-nlp",
                         "--image", "i:1", "--runtime", "torch-distributed", "--runtime-kind",
                         "TrainingRuntime", "--procs-per-node", "2", "--nodes", "3",
                         "--dry-run=client")
    assert code == 0, err
    spec = yaml.safe_load(out)["spec"]
    assert spec["runtimeRef"]["name"] == "torch-distributed"
    assert spec["runtimeRef"]["kind"] == "TrainingRuntime"
    assert (spec["trainer"]["numNodes"], spec["trainer"]["numProcPerNode"]) == (3, 2)

    code, _out, err = run(capsys, "training", "create", "mpijob", "bert", "-n", "team-nlp",
                          "--image", "i:1", "--runtime", "r", "--procs-per-node", "2",
                          "--dry-run=client", *COMMAND)
    assert code == 2
    assert err == ("error: --runtime, --procs-per-node: a TrainJob's (odh training create "
                   "trainjob ...); an MPIJob has no runtime.\n")


def test_what_a_job_cannot_be_created_without_is_its_kinds(capsys):
    code, _out, err = run(capsys, "training", "create", "trainjob", "pi", "-n", "team-nlp")
    assert code == 2
    assert err == ("error: Missing --image: e.g. odh training create trainjob pi --runtime "
                   "mpi-distributed --nodes 2 --gpus 1 --image quay.io/team/pi:1.0\n")
    # an MPIJob with no command: its Launcher runs the image's entrypoint
    code, out, err = run(capsys, "training", "create", "mpijob", "bert", "-n", "team-nlp",
                         "--image", "i:1", "--dry-run=client")
    assert code == 0, err
    launcher = yaml.safe_load(out)["spec"]["mpiReplicaSpecs"]["Launcher"]
    assert "command" not in launcher["template"]["spec"]["containers"][0]


@pytest.mark.parametrize(("slug", "from_file", "named"), [
    ("mpijob", "", "--workers"), ("mpijob", "job.yaml", "spec.mpiReplicaSpecs.Worker.replicas"),
    ("trainjob", "", "--nodes"), ("trainjob", "job.yaml", "spec.trainer.numNodes")])
def test_a_problem_is_named_as_the_kind_names_the_field(slug, from_file, named):
    from odh.training.cli.creating import where
    from odh.training.findings import FieldError
    from odh.training.kinds import kind_for_slug

    assert where(FieldError("workers", "m"), from_file, kind_for_slug(slug)) == named
    assert where(FieldError("env[2].name", "m"), "", kind_for_slug(slug)) == "--env"
    assert where(FieldError("no_such", "m"), from_file, kind_for_slug(slug)) == "no_such"


def test_a_template_config_set_and_output_artifacts_shape_the_manifest(capsys, monkeypatch,
                                                                      tmp_path):
    """The UX analysis' commands: --config is -f, --set changes any field of a manifest or
    template, --output-artifacts names where the job writes its results."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    code, out, err = run(capsys, "training", "create", "mpijob", "bert", "-n", "team-nlp",
                         "--template", "horovod-pytorch", "--set", "spec.runPolicy."
                         "backoffLimit=3", "--set", "metadata.labels.team=nlp",
                         "--set", "spec.mpiReplicaSpecs.Worker.replicas=4",
                         "--output-artifacts", "/mnt/output", "--dry-run=client")
    assert code == 0, err
    manifest = yaml.safe_load(out)
    assert manifest["spec"]["runPolicy"]["backoffLimit"] == 3
    assert manifest["metadata"]["labels"] == {"team": "nlp"}
    assert manifest["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 4
    assert manifest["metadata"]["annotations"]["opendatahub.io/output-path"] == "/mnt/output"
    (tmp_path / "job-spec.yaml").write_text(out)
    code, again, err = run(capsys, "training", "create", "mpijob", "--config",
                           str(tmp_path / "job-spec.yaml"), "--set",
                           "spec.mpiReplicaSpecs.Worker.replicas=2", "--dry-run=client")
    assert code == 0, err
    assert yaml.safe_load(again)["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    # a key with dots, escaped as Helm's: a job's own log pattern
    code, patterned, err = run(capsys, "training", "create", "mpijob", "--config",
                               str(tmp_path / "job-spec.yaml"), "--set",
                               r"metadata.annotations.opendatahub\.io/metric-patterns="
                               "Iter {step} loss={loss}", "--dry-run=client")
    assert code == 0, err
    assert yaml.safe_load(patterned)["metadata"]["annotations"][
        "opendatahub.io/metric-patterns"] == "Iter {step} loss={loss}"


@pytest.mark.parametrize("flags, said", [
    (["--set", "workers"], "write PATH=VALUE"),
    (["--set", "spec..x=1"], "write a path of fields"),
    (["--set", "spec.mpiReplicaSpecs.Worker.template.spec.containers[5].image=x"],
     "has no item 5"),
    (["--set", "metadata.name=Bad_Name"], 'Job name "Bad_Name" is not valid'),
    (["--template", "nope"], "there is no such template"),
    (["--output-artifacts", "out"], "give the absolute path"),
    ([r"--set=metadata.annotations.opendatahub\.io/metric-patterns=loss {loss}"],
     "put {step} or {epoch} where the line gives it"),
])
def test_a_set_template_or_output_path_that_cannot_be_used_says_why(capsys, monkeypatch,
                                                                     tmp_path, flags, said):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    code, _out, err = run(capsys, "training", "create", "mpijob", "bert", "-n", "team-nlp",
                          "--template", "horovod-pytorch", *flags, "--dry-run=client")
    assert code == 2 and said in err, err
    assert "Traceback" not in err

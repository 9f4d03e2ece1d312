"""`kubectl` (whatever is on PATH; Debian's kubernetes-client in CI) against simcluster with
the kubeconfigs it writes: discovery, get, apply of an upstream example, logs, label,
patch, auth can-i, watch, delete, and the server's errors as kubectl prints them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
import requests

from tests import reference, simcluster_process
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
PI = reference.PI
NS = "team-nlp"

KUBECTL = os.environ.get("KUBECTL") or shutil.which("kubectl")
if KUBECTL is None:
    reason = ("no kubectl on PATH and none could be installed here (make test installs "
              "Debian's kubernetes-client when apt-get is available)")
    print(f"SKIP test_kubectl: {reason}")
    pytest.skip(reason, allow_module_level=True)

pytestmark = pytest.mark.kubectl


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start(tmp_path_factory.mktemp("kubectl") / "state",
                                   scenario="empty", speed=50)
    yield sim
    sim.stop()


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    # kubectl keeps a discovery cache under $HOME/.kube: one per test module, not the user's
    return tmp_path_factory.mktemp("kubectl-home")


class Kubectl:
    def __init__(self, cluster, home: Path, user: str) -> None:
        self.env = dict(os.environ, KUBECONFIG=str(cluster.kubeconfig(user)), HOME=str(home))
        self.env.pop("KUBECTL_EXTERNAL_DIFF", None)

    def run(self, *args: str, stdin: str | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([KUBECTL, *args], env=self.env, input=stdin, text=True,
                                capture_output=True, timeout=60)
        if check:
            assert result.returncode == 0, (args, result.stdout, result.stderr)
        return result

    def out(self, *args: str, **kw) -> str:
        return self.run(*args, **kw).stdout


@pytest.fixture(scope="module")
def alice(cluster, home) -> Kubectl:
    return Kubectl(cluster, home, "alice")


@pytest.fixture(scope="module")
def admin(cluster, home) -> Kubectl:
    return Kubectl(cluster, home, "admin")


@pytest.fixture(scope="module")
def bob(cluster, home) -> Kubectl:
    return Kubectl(cluster, home, "bob")


def test_version_and_discovery(alice):
    version = json.loads(alice.out("version", "-o", "json"))
    assert version["serverVersion"]["gitVersion"].startswith("v1.")
    resources = alice.out("api-resources", "--api-group=kubeflow.org", "-o", "name")
    assert set(resources.split()) >= {"mpijobs.kubeflow.org", "pytorchjobs.kubeflow.org",
                                      "tfjobs.kubeflow.org"}


def client_minor(kubectl: Kubectl) -> int:
    info = json.loads(kubectl.out("version", "--client", "-o", "json"))["clientVersion"]
    return int("".join(ch for ch in info["minor"] if ch.isdigit()))


def test_explain_reads_the_published_schema(alice):
    if client_minor(alice) >= 27:  # OpenAPI v3, which carries the CRD's structural schema
        spec = alice.out("explain", "mpijobs.spec")
        assert "mpiReplicaSpecs" in spec and "slotsPerWorker" in spec
        assert "OpenMPI, Intel, MPICH" in spec
    else:  # older clients read /openapi/v2 (protobuf), which here describes no kind
        result = alice.run("explain", "mpijobs", check=False)
        assert 'couldn\'t find resource for "kubeflow.org/v2beta1, Kind=MPIJob"' in \
            result.stderr


def test_get_on_an_empty_namespace(alice, admin):
    assert "No resources found" in alice.run("get", "mpijobs", "-n", NS).stderr
    assert "No resources found" in admin.run("get", "mpijobs", "-A").stderr


def test_the_example_runs_through_kubectl(alice, admin):
    # The example's ttlSecondsAfterFinished (60 s) is copied to its launcher Job when the
    # operator makes it, before the patch below takes it from the MPIJob: 1.2 s at speed
    # 50, and on a slow machine the short pi job's launcher pod went mid-test. An hour
    # leaves the test its time; the patch still takes it away.
    manifest = PI.read_text().replace("ttlSecondsAfterFinished: 60",
                                      "ttlSecondsAfterFinished: 3600")
    assert manifest != PI.read_text()
    created = alice.out("apply", "-f", "-", stdin=manifest)  # client-side validation on
    assert created.strip() == "mpijob.kubeflow.org/pi created"
    # keep the finished job around (the example deletes it a minute after it ends)
    patched = alice.out("patch", "mpijob", "pi", "--type", "merge", "-p",
                        '{"spec":{"runPolicy":{"ttlSecondsAfterFinished":null}}}')
    assert patched.strip() == "mpijob.kubeflow.org/pi patched"
    assert "ttlSecondsAfterFinished" not in alice.out("get", "mpijob", "pi", "-o",
                                                      "jsonpath={.spec.runPolicy}")
    assert "pi" in alice.out("get", "mpijobs", "-n", NS).split()
    everywhere = admin.out("get", "mpijobs", "-A")
    assert everywhere.splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert [NS, "pi"] == everywhere.splitlines()[1].split()[:2]

    def launcher() -> str:
        names = alice.out("get", "pods", "-o", "name").split()
        found = [n for n in names if n.startswith("pod/pi-launcher-")]
        return found[0].split("/", 1)[1] if found else ""
    pod = wait_until(launcher, 60, message="the launcher pod")
    listing = alice.out("get", "pods").splitlines()
    assert listing[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert any(line.startswith(pod) for line in listing[1:])
    logs = wait_until(lambda: alice.run("logs", pod, check=False).stdout, 60,
                      message="launcher logs")
    assert logs.strip()
    assert alice.out("logs", pod, "--tail", "1").count("\n") == 1
    wait_until(lambda: alice.out("get", "mpijob", "pi", "-o",
                                 "jsonpath={.status.conditions[-1].type}") == "Succeeded",
               60, message="the job to succeed")

    unchanged = alice.out("apply", "-f", "-", stdin=manifest)
    assert unchanged.strip() in ("mpijob.kubeflow.org/pi unchanged",
                                 "mpijob.kubeflow.org/pi configured")
    assert alice.out("label", "mpijob", "pi", "team=nlp").strip() == \
        "mpijob.kubeflow.org/pi labeled"
    assert alice.out("get", "mpijobs", "-l", "team=nlp", "-o", "name").split() == [
        "mpijob.kubeflow.org/pi"]
    assert alice.out("get", "mpijobs", "-l", "team!=nlp", "-o", "name").strip() == ""

    assert alice.out("delete", "mpijob", "pi").strip() == 'mpijob.kubeflow.org "pi" deleted'
    wait_until(lambda: not [n for n in alice.out("get", "pods", "-o", "name").split()
                            if n.startswith("pod/pi-")], 60, message="the pods to go")
    gone = alice.run("get", "mpijob", "pi", check=False)
    assert gone.returncode != 0
    assert 'mpijobs.kubeflow.org "pi" not found' in gone.stderr


def test_apply_changes_an_existing_object(alice):
    manifest = PI.read_text().replace("name: pi", "name: pi-changed", 1)
    assert alice.out("apply", "-f", "-", stdin=manifest).strip() == \
        "mpijob.kubeflow.org/pi-changed created"
    changed = manifest.replace("slotsPerWorker: 1", "slotsPerWorker: 2")
    assert alice.out("apply", "-f", "-", stdin=changed).strip() == \
        "mpijob.kubeflow.org/pi-changed configured"
    assert alice.out("get", "mpijob", "pi-changed", "-o",
                     "jsonpath={.spec.slotsPerWorker}") == "2"
    last = json.loads(alice.out("get", "mpijob", "pi-changed", "-o", "jsonpath={.metadata."
                                "annotations.kubectl\\.kubernetes\\.io/last-applied-"
                                "configuration}"))
    assert last["spec"]["slotsPerWorker"] == 2
    alice.run("delete", "mpijob", "pi-changed")


def test_auth_can_i(alice, bob, admin):
    assert alice.out("auth", "can-i", "create", "mpijobs").strip() == "yes"
    refused = alice.run("auth", "can-i", "create", "mpijobs", "-n", "default", check=False)
    assert refused.returncode == 1 and refused.stdout.strip() == "no"
    assert alice.out("auth", "can-i", "get", "pods", "--subresource=log").strip() == "yes"
    assert bob.run("auth", "can-i", "list", "pods", check=False).stdout.strip() == "no"
    assert admin.out("auth", "can-i", "delete", "nodes").strip().startswith("yes")


def test_kubectl_prints_the_servers_refusals(alice, bob):
    forbidden = bob.run("get", "mpijobs", "-n", NS, check=False)
    assert forbidden.returncode == 1
    assert ('Error from server (Forbidden): mpijobs.kubeflow.org is forbidden: User "bob" '
            'cannot list resource "mpijobs" in API group "kubeflow.org" in the namespace '
            '"team-nlp"') in forbidden.stderr
    invalid = PI.read_text().replace("name: pi", "name: pi-bad", 1).replace(
        "slotsPerWorker: 1", "slotsPerWorker: one")
    result = alice.run("apply", "-f", "-", stdin=invalid, check=False)
    assert result.returncode == 1
    assert ('spec.slotsPerWorker: Invalid value: "string": spec.slotsPerWorker in body must '
            'be of type integer: "string"') in result.stderr
    unknown = PI.read_text().replace("name: pi", "name: pi-unknown", 1).replace(
        "slotsPerWorker: 1", "slotsPerWorker: 1\n  colour: blue")
    result = alice.run("apply", "-f", "-", stdin=unknown, check=False)
    if result.returncode == 0:  # kubectl before 1.27 asks for Warn: the field is dropped
        assert "colour" not in alice.out("get", "mpijob", "pi-unknown", "-o",
                                         "jsonpath={.spec}")
        alice.run("delete", "mpijob", "pi-unknown")
    else:  # 1.27+ asks for Strict
        assert 'unknown field "spec.colour"' in result.stderr


def test_get_watch_sees_new_objects(alice, cluster):
    def create_later() -> None:
        requests.post(f"{cluster.api_url}/api/v1/namespaces/{NS}/configmaps",
                      json={"metadata": {"name": "seen-by-watch"}}, timeout=10,
                      verify=str(cluster.ca_file),
                      headers={"Authorization": f"Bearer {cluster.token('alice')}"})
    timer = threading.Timer(1.0, create_later)
    timer.start()
    watched = alice.out("get", "configmaps", "-w", "--request-timeout=4s")
    timer.join()
    assert "seen-by-watch" in watched


def test_create_namespace_scoped_objects_with_kubectl(alice):
    out = alice.out("create", "configmap", "from-kubectl", "--from-literal=a=b")
    assert out.strip() == "configmap/from-kubectl created"
    assert alice.out("get", "configmap", "from-kubectl", "-o", "jsonpath={.data.a}") == "b"
    alice.run("annotate", "configmap", "from-kubectl", "note=kept")
    assert alice.out("delete", "configmap", "from-kubectl").strip() == \
        'configmap "from-kubectl" deleted'

"""`odh login`, run as a shell runs it, against a real simcluster and its OAuth server: in
the browser (the sign-in page followed as a browser follows it, back to the command's
loopback listener) and with a token; the kubeconfig it writes is what the next command
uses; a wrong token, a wrong project and a server that is not there are refused in one
plain line."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import requests
import yaml

from tests import simcluster_process
from tests.dashboard_support import log_in_at_openshift, oauth_token
from tests.plan_cluster import PLAN_SCENARIO
from tests.simcluster_process import free_port
from tests.waiting import wait_until

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    sim = simcluster_process.start_scenario(tmp_path_factory.mktemp("login"), PLAN_SCENARIO,
                                            name="login.yaml")
    yield sim
    sim.stop()


def _odh(args: list[str], home: Path, **options) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env.update(HOME=str(home), PATH=f"{BIN}:{env.get('PATH', '')}", PYTHONUNBUFFERED="1")
    return subprocess.Popen([str(BIN / "odh"), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options)


def _run(args: list[str], home: Path) -> subprocess.CompletedProcess:
    process = _odh(args, home)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(args, process.returncode, out, err)


def test_alice_logs_in_in_the_browser_and_the_next_command_is_hers(cluster, tmp_path):
    process = _odh(["login", "--server", cluster.api_url, "--certificate-authority",
                    str(cluster.ca_file), "--no-browser"], tmp_path)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    wait_until(lambda: any("/oauth/authorize?" in line for line in lines), 60,
               message=lambda: "".join(lines) + (process.stderr.read()
                                                 if process.poll() is not None else ""))
    url = next(line.strip() for line in lines if "/oauth/authorize?" in line)
    browser = requests.Session()
    browser.verify = str(cluster.ca_file)
    back = log_in_at_openshift(cluster, url, "alice", browser)
    assert re.match(r"http://127\.0\.0\.1:\d+/callback\?", back), back
    page = requests.get(back, timeout=10)  # the browser lands on the command's listener
    assert "You are logged in" in page.text
    assert process.wait(60) == 0, process.stderr.read()
    reader.join(10)
    said = "".join(lines)
    assert f"Logged into {cluster.api_url} as alice." in said
    assert "Using project" in said

    kubeconfig = tmp_path / ".kube" / "config"
    assert stat.S_IMODE(kubeconfig.stat().st_mode) == 0o600  # a token is in it
    config = yaml.safe_load(kubeconfig.read_text())
    context = config["current-context"]
    assert context.endswith("/alice") and context in said
    (user,) = config["users"]
    assert user["name"].startswith("alice/") and user["user"]["token"].startswith("sha256~")
    # the next command is alice's, in that project
    listed = _run(["training", "list", "mpijob"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "error" not in listed.stderr


def test_a_token_logs_in_and_a_project_is_chosen_with_n(cluster, tmp_path):
    token = oauth_token(cluster, "alice")
    done = _run(["login", cluster.api_url, "--token", token, "--certificate-authority",
                 str(cluster.ca_file), "-n", "team-nlp"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Using project “team-nlp”." in done.stdout
    config = yaml.safe_load((tmp_path / ".kube" / "config").read_text())
    assert config["current-context"].startswith("team-nlp/")
    # again, with no server: the current context's, its project kept
    again = _run(["login", "--token", token], tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Using project “team-nlp”." in again.stdout
    assert len(yaml.safe_load((tmp_path / ".kube" / "config").read_text())["contexts"]) == 1


def test_what_cannot_log_in_is_refused_in_one_plain_line(cluster, tmp_path):
    ca = ["--certificate-authority", str(cluster.ca_file)]
    wrong = _run(["login", cluster.api_url, "--token", "sha256~not-a-token", *ca], tmp_path)
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("error: ") and "refused the token" in wrong.stderr
    assert "Traceback" not in wrong.stderr
    assert not (tmp_path / ".kube" / "config").exists()  # nothing written

    token = oauth_token(cluster, "alice")
    elsewhere = _run(["login", cluster.api_url, "--token", token, *ca, "-n", "kube-system"],
                     tmp_path)
    assert elsewhere.returncode == 1 and "You may not see project “kube-system”" in \
        elsewhere.stderr

    untrusted = _run(["login", cluster.api_url, "--token", token], tmp_path)
    assert untrusted.returncode == 1 and "--certificate-authority" in untrusted.stderr

    away = _run(["login", f"https://127.0.0.1:{free_port()}", "--token", token], tmp_path)
    assert away.returncode == 1 and "Cannot reach" in away.stderr

    nothing = _run(["login"], tmp_path)
    assert nothing.returncode == 2 and "give its API server" in nothing.stderr

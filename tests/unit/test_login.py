"""`odh login`'s kubeconfig and project choice (odh.training.cluster.login)."""

from __future__ import annotations

import stat

import pytest
import yaml

from odh.training.cluster.login import (
    Identity,
    LoginError,
    project_for,
    server_of,
    write_kubeconfig,
)


def test_the_names_are_oc_logins():
    server = server_of("api.example.com:6443")
    assert server.url == "https://api.example.com:6443"
    assert server.cluster_name == "api-example-com:6443"
    with pytest.raises(LoginError, match="is not a server address"):
        server_of("ftp://x")


def test_it_adds_a_context_keeping_the_others_and_makes_it_current(tmp_path):
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "kind",
        "clusters": [{"name": "kind", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "kind", "user": {"token": "t"}}],
        "contexts": [{"name": "kind", "context": {"cluster": "kind", "user": "kind"}}]}))
    path.chmod(0o644)
    server = server_of("https://api.example.com:6443", insecure=True)
    assert write_kubeconfig(path, server, "sha256~a", "alice", "team-nlp") == \
        "team-nlp/api-example-com:6443/alice"
    # again (a new token): renewed, not added
    write_kubeconfig(path, server, "sha256~b", "alice", "team-nlp")
    config = yaml.safe_load(path.read_text())
    assert config["current-context"] == "team-nlp/api-example-com:6443/alice"
    assert [c["name"] for c in config["contexts"]] == ["kind",
                                                       "team-nlp/api-example-com:6443/alice"]
    assert config["users"][1] == {"name": "alice/api-example-com:6443",
                                  "user": {"token": "sha256~b"}}
    assert config["clusters"][1]["cluster"] == {"server": "https://api.example.com:6443",
                                                "insecure-skip-tls-verify": True}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_kubeconfig_that_is_not_yaml_is_refused(tmp_path):
    path = tmp_path / "config"
    path.write_text("clusters: [\n")
    with pytest.raises(LoginError, match="Cannot read the kubeconfig"):
        write_kubeconfig(path, server_of("h:1"), "t", "alice", "")


def test_the_project_chosen():
    alice = Identity("alice", ["team-cv", "team-nlp"])
    assert project_for(alice, "team-nlp", "") == ("team-nlp", "")
    with pytest.raises(LoginError, match="You may not see project “x”"):
        project_for(alice, "x", "")
    assert project_for(alice, "", "team-nlp") == ("team-nlp", "")
    first, note = project_for(alice, "", "")
    assert first == "team-cv" and "You have access to 2 projects" in note
    assert project_for(Identity("bob", ["research"]), "", "") == ("research", "")
    assert project_for(Identity("carol", []), "", "")[0] == ""


def test_completion_offers_login_and_its_flags():
    from odh.training.cli.completion import script
    bash = script("bash")
    assert "training login completion" in bash and "--token" in bash and "--server" in bash

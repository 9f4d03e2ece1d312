"""The wizard's later fields (issue 26): what a person types reaches the created job's
manifest and the review step, and a refusal keeps what was typed."""

from __future__ import annotations

import base64
import html
import re

import pytest
from django.urls import reverse
from kubernetes import client as k8s

from tests.integration.dashboard.wizard import wizard_flow as flow
from tests.integration.dashboard.wizard.wizard_flow import post_step, start, step_url, unique

NS = "team-nlp"
DESCRIPTION = "Fine-tune BERT on the legal corpus <v2>"


def test_description_and_working_directory_reach_the_job(alice, cluster_jobs):
    key = start(alice)
    name = unique("wiz-fields")
    post_step(alice, key, "configuration", action="back", description=DESCRIPTION,
              working_dir="/workspace/bert")
    flow.fill(alice, key, name=name, namespace=NS, workers=1)
    review = alice.get(step_url(key, "review")).content.decode()
    assert html.escape(DESCRIPTION) in review  # shown, escaped
    assert "/workspace/bert" in review
    assert "description=" in review and "working_dir=" in review  # the Python SDK code
    assert "workingDir: /workspace/bert" in review  # the YAML
    cluster_jobs.track(NS, name)
    assert flow.create(alice, key).status_code == 302
    job = cluster_jobs.get(NS, name)
    assert job["metadata"]["annotations"]["opendatahub.io/description"] == DESCRIPTION
    for role in ("Launcher", "Worker"):
        container = job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["containers"][0]
        assert container["workingDir"] == "/workspace/bert"


def test_a_relative_working_directory_is_refused_and_kept(alice):
    key = start(alice)
    r = post_step(alice, key, "configuration", namespace=NS, name=unique("wiz-wd"),
                  image="quay.io/opendatahub/horovod:0.28.1-pytorch2.1",
                  command="python train.py", description="kept too", working_dir="workspace")
    body = html.unescape(r.content.decode())
    assert r.status_code == 200
    assert 'Working directory "workspace" is not absolute: start it with "/"' in body
    assert 'value="workspace"' in body and "kept too" in body
    assert flow.draft(key).data["working_dir"] == "workspace"


def test_a_job_without_a_command_says_it_runs_its_images_entrypoint(alice):
    key = start(alice)
    flow.fill(alice, key, name=unique("wiz-entry"), namespace=NS, command="")
    review = alice.get(step_url(key, "review")).content.decode()
    said = re.search(r'<span id="review-entrypoint">(.*?)</span>', review)
    assert said and html.unescape(said.group(1)) == "its image's entrypoint (no command given)"
    assert "1 Launcher with" in review


@pytest.fixture
def pull_secrets(demo_cluster):
    """Two image pull secrets in team-nlp, and an Opaque Secret the list must not offer."""
    made = [("regcred-quay", "kubernetes.io/dockerconfigjson"),
            ("regcred-ghcr", "kubernetes.io/dockerconfigjson"), ("db-password", "Opaque")]
    with demo_cluster.api_client("admin") as api:
        core = k8s.CoreV1Api(api)
        for name, kind in made:
            data = {".dockerconfigjson": base64.b64encode(b'{"auths": {}}').decode()} \
                if kind != "Opaque" else {"password": base64.b64encode(b"hunter2").decode()}
            core.create_namespaced_secret(NS, {"metadata": {"name": name}, "type": kind,
                                               "data": data})
        yield
        for name, _kind in made:
            core.delete_namespaced_secret(name, NS)


def test_the_pull_secret_is_chosen_from_the_projects_and_reaches_the_job(
        alice, cluster_jobs, pull_secrets):
    key = start(alice)
    post_step(alice, key, "configuration", action="back", namespace=NS)
    page = alice.get(step_url(key, "configuration")).content.decode()
    select = re.search(r'<select name="image_pull_secret".*?</select>', page, re.S)
    assert select, "the pull secret is a choice"
    options = re.findall(r'<option value="([^"]*)"', select.group(0))
    assert options == ["", "regcred-ghcr", "regcred-quay"]  # not the Opaque Secret
    assert "hunter2" not in page and "aHVudGVyMg" not in page
    assert '<label class="pf-v6-c-form__label" for="id_image_pull_secret">' in page
    name = unique("wiz-pull")
    post_step(alice, key, "configuration", action="back", image_pull_secret="regcred-quay")
    flow.fill(alice, key, name=name, namespace=NS, workers=1)
    review = alice.get(step_url(key, "review")).content.decode()
    assert "image_pull_secret=&quot;regcred-quay&quot;" in review  # the SDK code
    cluster_jobs.track(NS, name)
    assert flow.create(alice, key).status_code == 302
    job = cluster_jobs.get(NS, name)
    for role in ("Launcher", "Worker"):
        assert job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["imagePullSecrets"] \
            == [{"name": "regcred-quay"}]


def test_another_project_offers_its_own_pull_secrets(alice, pull_secrets):
    key = start(alice)
    post_step(alice, key, "configuration", action="back", namespace=NS,
              image_pull_secret="regcred-quay")
    values = flow.form_values(alice.get(step_url(key, "configuration")).content.decode(),
                              step_url(key, "configuration"))
    values.update(namespace="team-cv", step="configuration")
    r = alice.post(reverse("training-job-new-validate", args=[key]), values,
                   HTTP_HX_REQUEST="true", HTTP_HX_TRIGGER_NAME="namespace")
    body = html.unescape(r.content.decode())
    assert 'id="pull-secret-choice" hx-swap-oob="true"' in body
    # team-cv has none: what was chosen stays, named as missing there
    assert "regcred-quay (not found in this project)" in body
    assert "regcred-ghcr" not in body


@pytest.fixture
def sources(demo_cluster):
    """A Secret and a ConfigMap in team-nlp whose keys a variable may take its value from."""
    with demo_cluster.api_client("admin") as api:
        core = k8s.CoreV1Api(api)
        core.create_namespaced_secret(NS, {"metadata": {"name": "hf"}, "type": "Opaque",
                                           "data": {"token": base64.b64encode(b"s3cr3t-value")
                                                    .decode()}})
        core.create_namespaced_config_map(NS, {"metadata": {"name": "train-settings"},
                                               "data": {"mode": "fast", "epochs": "3"}})
        yield
        core.delete_namespaced_secret("hf", NS)
        core.delete_namespaced_config_map("train-settings", NS)


def test_a_variable_takes_its_value_from_a_secret_or_configmap_key(alice, cluster_jobs,
                                                                   sources):
    key = start(alice)
    name = unique("wiz-env")
    post_step(alice, key, "configuration", action="back", namespace=NS)
    for _row in range(3):
        post_step(alice, key, "resources", action="back", add_env="1")
    page = alice.get(step_url(key, "resources")).content.decode()
    assert "s3cr3t" not in page and base64.b64encode(b"s3cr3t-value").decode() not in page
    assert '<option value="secret/hf/token">Secret hf: token</option>' in page
    assert '<option value="configmap/train-settings/epochs">' in page
    assert '<label class="pf-v6-c-form__label" for="id_env-0-source">' in page
    post_step(alice, key, "resources", action="back", **{
        "env-0-name": "HF_TOKEN", "env-0-source": "secret/hf/token",
        "env-1-name": "EPOCHS", "env-1-source": "configmap/train-settings/epochs",
        "env-2-name": "PLAIN", "env-2-value": "1"})
    flow.fill(alice, key, name=name, namespace=NS, workers=1)
    page = alice.get(step_url(key, "resources")).content.decode()  # kept as chosen
    assert '<option value="secret/hf/token" selected>' in page
    cluster_jobs.track(NS, name)
    assert flow.create(alice, key).status_code == 302
    job = cluster_jobs.get(NS, name)
    for role in ("Launcher", "Worker"):
        env = job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["containers"][0]["env"]
        assert env == [
            {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
            {"name": "EPOCHS", "valueFrom": {"configMapKeyRef": {"name": "train-settings",
                                                                 "key": "epochs"}}},
            {"name": "PLAIN", "value": "1"}]


def test_whole_secrets_and_configmaps_become_variables_and_files(alice, cluster_jobs, sources):
    key = start(alice)
    name = unique("wiz-src")
    post_step(alice, key, "configuration", action="back", namespace=NS)
    post_step(alice, key, "resources", action="back", add_env_from="1")
    post_step(alice, key, "resources", action="back", add_source_volumes="1")
    page = alice.get(step_url(key, "resources")).content.decode()
    assert '<option value="secret/hf">Secret hf (token)</option>' in page  # names, no value
    assert '<option value="configmap/train-settings">ConfigMap train-settings (epochs, mode)' \
        in page
    assert "s3cr3t" not in page
    assert '<label class="pf-v6-c-form__label" for="id_srcvol-0-mount_path">' in page
    # a relative path is refused, saying how to fix it, and what was chosen is kept
    r = post_step(alice, key, "resources", **{
        "envfrom-0-source": "configmap/train-settings", "srcvol-0-source": "secret/hf",
        "srcvol-0-mount_path": "etc/hf"})
    body = html.unescape(r.content.decode())
    assert r.status_code == 200
    assert 'Mount path "etc/hf" is not absolute: start it with "/"' in body
    assert 'value="etc/hf"' in body and '<option value="secret/hf" selected>' in body
    post_step(alice, key, "resources", action="back", **{"srcvol-0-mount_path": "/etc/hf"})
    flow.fill(alice, key, name=name, namespace=NS, workers=1)
    review = alice.get(step_url(key, "review")).content.decode()
    assert "every key of ConfigMap train-settings" in review
    assert "EnvSource(" in review and "SourceVolume(" in review  # the SDK code
    cluster_jobs.track(NS, name)
    assert flow.create(alice, key).status_code == 302
    job = cluster_jobs.get(NS, name)
    for role in ("Launcher", "Worker"):
        pod = job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        container = pod["containers"][0]
        assert container["envFrom"] == [{"configMapRef": {"name": "train-settings"}}]
        assert {"name": "secret-hf", "mountPath": "/etc/hf", "readOnly": True} \
            in container["volumeMounts"]
        assert {"name": "secret-hf", "secret": {"secretName": "hf"}} in pod["volumes"]


def test_node_affinity_beside_the_node_selector_reaches_the_job(alice, cluster_jobs):
    key = start(alice)
    name = unique("wiz-aff")
    post_step(alice, key, "configuration", action="back", namespace=NS)
    # a line that is not a requirement is refused, saying how to write one, and kept
    r = post_step(alice, key, "resources", node_affinity="zone near a")
    body = html.unescape(r.content.decode())
    assert r.status_code == 200
    assert "is not a node requirement: write a node label's key, then In, NotIn" in body
    assert '<label class="pf-v6-c-form__label" for="id_node_affinity">' in body
    assert "zone near a</textarea>" in body
    post_step(alice, key, "resources", action="back", node_selector="pool=gpu",
              node_affinity="kubernetes.io/hostname NotIn cpu-0\nkubernetes.io/os In linux")
    flow.fill(alice, key, name=name, namespace=NS, workers=1)
    review = html.unescape(alice.get(step_url(key, "review")).content.decode())
    assert "<code>kubernetes.io/hostname NotIn cpu-0</code>" in review
    assert "NodeRequirement(" in review  # the SDK code
    cluster_jobs.track(NS, name)
    assert flow.create(alice, key).status_code == 302
    job = cluster_jobs.get(NS, name)
    for role in ("Launcher", "Worker"):
        pod = job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]
        assert pod["nodeSelector"] == {"pool": "gpu"}
        terms = pod["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["cpu-0"]},
            {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]

"""The wizard's later fields (issue 26): what a person types reaches the created job's
manifest and the review step, and a refusal keeps what was typed."""

from __future__ import annotations

import html

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

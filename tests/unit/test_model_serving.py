"""Deploying a succeeded run's model (odh.training.artifacts.serving)."""

from __future__ import annotations

import yaml

from odh.training.artifacts.outputs import OutputDir
from odh.training.artifacts.serving import deploy

OUT = [OutputDir("checkpoints", "resnet50/final", "/mnt/out/resnet50/final", "--output_dir")]


def test_without_model_serving_it_is_the_command_with_the_manifest_filled_in():
    found = deploy("resnet50", "team-cv", OUT, ["python train.py"], False, "")
    assert found.storage_uri == "pvc://checkpoints/resnet50/final" and not found.link
    head, _, rest = found.command.partition("\n")
    assert head == "oc apply -n team-cv -f - <<'EOF'" and rest.endswith("EOF")
    manifest = yaml.safe_load(rest.removesuffix("EOF"))
    assert manifest["kind"] == "InferenceService"
    assert manifest["metadata"] == {"name": "resnet50-model", "namespace": "team-cv"}
    assert manifest["spec"]["predictor"]["model"] == {
        "modelFormat": {"name": "pytorch"}, "storageUri": "pvc://checkpoints/resnet50/final"}


def test_with_model_serving_and_openshift_ai_s_dashboard_it_is_a_link():
    found = deploy("bert", "team-nlp", OUT, ["tensorflow/serving"], True,
                   "https://rhods-dashboard.apps.example.com/")
    assert found.link == ("https://rhods-dashboard.apps.example.com/projects/team-nlp"
                          "?section=model-server")
    assert not found.command and found.model_format == "tensorflow"


def test_no_output_directory_no_model_to_deploy():
    assert deploy("bert", "team-nlp", [], [], True, "https://x") is None

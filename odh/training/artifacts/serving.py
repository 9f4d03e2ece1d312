"""Deploying what a run made (the UX analysis' success card, "Deploy"): the model is where
the job wrote its results (`outputs`: a directory on a claim), served by KServe, OpenShift
AI's model serving, as an InferenceService whose `storageUri` is `pvc://<claim>/<path>`.

Where the cluster serves the InferenceService API and the dashboard knows OpenShift AI's
own dashboard (`ODH_DASHBOARD_URL`), the card links to the project's models there (where a
model is deployed from a storage location); otherwise it gives the command that deploys it
with `oc`, the manifest filled in. The model format is the training framework's guess (the
image or command naming tensorflow, else pytorch), said so and easy to change."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from odh.training.artifacts.outputs import OutputDir

GROUP, VERSION, PLURAL = "serving.kserve.io", "v1beta1", "inferenceservices"


@dataclass(frozen=True)
class Deploy:
    storage_uri: str
    model_format: str
    link: str  # OpenShift AI's page where the project's models are deployed ("" if none)
    command: str  # `oc apply` of the InferenceService ("" when the link is given)


def storage_uri(output: OutputDir) -> str:
    return f"pvc://{output.claim}/{output.sub_path}".rstrip("/")


def model_format(words: list[str]) -> str:
    text = " ".join(words).lower()
    return "tensorflow" if "tensorflow" in text or "keras" in text else "pytorch"


def inference_service(name: str, namespace: str, uri: str, fmt: str) -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "InferenceService",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"predictor": {"model": {"modelFormat": {"name": fmt},
                                             "storageUri": uri}}}}


def deploy(job_name: str, namespace: str, outputs: list[OutputDir], words: list[str],
           serving_installed: bool, dashboard_url: str) -> Deploy | None:
    """How to deploy the run's model, or None when the job names no output directory on a
    volume (there is no model to point at)."""
    if not outputs:
        return None
    uri, fmt = storage_uri(outputs[0]), model_format(words)
    if serving_installed and dashboard_url:
        return Deploy(uri, fmt, f"{dashboard_url.rstrip('/')}/projects/{namespace}"
                                "?section=model-server", "")
    manifest = yaml.safe_dump(inference_service(f"{job_name}-model"[:63], namespace, uri, fmt),
                              sort_keys=False)
    return Deploy(uri, fmt, "", f"oc apply -n {namespace} -f - <<'EOF'\n{manifest}EOF")

"""`MPIJob`: the SDK's front door, as the product plan names it.

    from odh.training import JobFailedError, MPIJob, ResourceSpec

    job = MPIJob(name="mnist", namespace="team-nlp", workers=4,
                 image="quay.io/team-nlp/mnist:1.0",
                 command=["horovodrun", "-np", "8", "python", "train.py"],
                 worker_resources=ResourceSpec(cpu="4", memory="16Gi", gpus=2))
    job.create(wait=True, timeout=3600)      # checked first, as the wizard checks
    print(job.status().duration_text)

Everything goes through `TrainingClient` and the dashboard's own modules: the same
validation and resource check as the wizard (`odh.training.capacity.preflight`), the same status
summary as the job's page, the same diagnosis when a job fails. The cluster is the one the
kubeconfig names (`KUBECONFIG`, `~/.kube/config`; `oc login` writes it) or, inside a pod,
the pod's service account; pass `client=TrainingClient(...)` for another. A `namespace`
left out is the kubeconfig context's (in a pod: the pod's own), else "default".

Every error is an `odh.training.errors.ODHError`: `ValidationError` (a setting the
wizard would refuse), `ResourceQuotaExceeded` (the job can never fit its quota or any
node), `AuthenticationError`, `JobFailedError`, `JobTimeoutError` and the cluster's own
refusals (`ClusterError` and its kinds); each carries `suggestions`.

The parts: `trainingjob` (what every kind's job does: files, create, get, list, change) with
`following` (status, watch, wait, logs, diagnosis), the kinds' own classes (`mpijob`,
`trainjob` with the Trainer's runtimes), how the constructors' arguments are read
(`arguments`), what a refused create raises and a checked one warns (`refusals`), the
clients the jobs share (`clients`), and the UX analysis' spellings of the same calls
(`spellings`: `validate`, `clone`, `stream_logs`, `TrainingClient.get_mpijob`...).
"""

from __future__ import annotations

from odh.training.jobs.arguments import FIX_ARGUMENTS, fix_arguments
from odh.training.jobs.clients import default_client
from odh.training.jobs.mpijob import MPIJob
from odh.training.jobs.refusals import QuotaWarning, SettingWarning
from odh.training.jobs.spellings import TrainingClient
from odh.training.jobs.trainingjob import TrainingJob
from odh.training.jobs.trainjob import Runtime, Runtimes, TrainJob, list_runtimes

__all__ = ["FIX_ARGUMENTS", "MPIJob", "QuotaWarning", "Runtime", "Runtimes", "SettingWarning",
           "TrainJob", "TrainingClient", "TrainingJob", "default_client", "fix_arguments",
           "list_runtimes"]

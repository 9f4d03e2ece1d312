"""The Python SDK: what MLOps engineers script, with the dashboard's own rules and words.

    from odh.training import MPIJobSpec, TrainingClient

    client = TrainingClient()                      # ~/.kube/config, or in-cluster
    job = client.create_mpijob(MPIJobSpec(name="bert", namespace="team-nlp",
                                          image="quay.io/team/bert:1.0",
                                          command=["horovodrun", "-np", "2", "python", "t.py"],
                                          workers=2, gpus_per_worker=1))
    print(client.summary("bert", "team-nlp").lifecycle_step)

Talks to the cluster (the official `kubernetes` client) through ClusterClient and the
dashboard's queries, so a summary here is the one the dashboard shows. Every failure is an
`odh.training.errors` exception; a spec the dashboard would refuse raises InvalidSpec.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

from kubernetes import client as k8s
from kubernetes import config as k8s_config

from odh.training import creating, errors
from odh.training.cluster.client import ClusterClient
from odh.training.cluster.jobwatch import job_changes
from odh.training.diagnosis import Diagnosis
from odh.training.findings import FieldError, errors_of
from odh.training.i18n import _
from odh.training.jobstatus import JobStatus as JobState
from odh.training.kinds import KINDS, JobKind, creatable_kinds
from odh.training.logs.logfollow import pod_for
from odh.training.manifests.sdkcode import sdk_code
from odh.training.metrics.prometheus import PrometheusClient
from odh.training.spec import JobSpec
from odh.training.status.queries import job_detail, list_summaries
from odh.training.status.summarize import JobStatus, JobSummary
from odh.training.status.suspending import set_suspended
from odh.training.validation import validate_spec

__all__ = ["ConfigurationError", "InvalidSpec", "JobFailedError", "TrainingClient",
           "sdk_code"]

JobFailedError = errors.JobFailedError

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED)
POOL_SIZE = 32


class ConfigurationError(errors.ClusterError, errors.AuthenticationError):
    """No kubeconfig (or not the context asked for), and not running inside a cluster."""

    code = "AuthenticationError"

    def advice(self) -> list[str]:
        return [_('Log in with "oc login" (it writes ~/.kube/config), or set KUBECONFIG.')]


class InvalidSpec(errors.ValidationError):
    """A spec the dashboard would refuse; `errors` are the field errors, as the wizard
    shows them (`field` and `message` are the first one's). `names` renames the spec's
    fields for the caller ("cpu_per_worker" -> "worker_resources.cpu")."""

    def __init__(self, problems: list[FieldError], names: dict[str, str] | None = None
                 ) -> None:
        self.errors = problems
        names = names or {}

        def shown(field: str) -> str:
            head, sep, rest = field.partition("[")
            return names.get(head, head) + sep + rest

        first = problems[0] if problems else None
        super().__init__(shown(first.field) if first else "",
                         first.message if first else "")
        self.message = " ".join(f"{shown(p.field)}: {p.message}" for p in problems)
        self.args = (self.message,)


def _chosen(listing, selector: str | None, user: str | None) -> list[JobSummary]:
    """The listing's summaries (sorted) whose labels match `selector` and whose creator is
    `user`, where given."""
    from odh.training.status.lists.selectors import SelectorError, parse_selector
    try:
        matching = parse_selector(selector) if selector else None
    except SelectorError as e:
        raise errors.ValidationError("selector", str(e)) from None

    def labels(s: JobSummary) -> dict:
        job = listing.objects.get((s.namespace, s.kind.slug, s.name), ({},))[0]
        return (job.get("metadata") or {}).get("labels") or {}

    return sorted((s for s in listing.summaries
                   if (matching is None or matching.matches(labels(s)))
                   and (not user or s.created_by == user)),
                  key=lambda s: (s.namespace, s.name, s.kind.slug))


def _config_file(kubeconfig: str | None) -> str | None:
    """The kubeconfig to read: the one given, else $KUBECONFIG as it is now (the client
    reads it once, at import), else the client's default (~/.kube/config)."""
    return kubeconfig or os.environ.get("KUBECONFIG") or None


def context_namespace(kubeconfig: str | None, context: str | None) -> str:
    """The namespace the kubeconfig's context names, read from the file alone ("" when it
    names none or there is no kubeconfig)."""
    try:
        contexts, active = k8s_config.list_kube_config_contexts(
            config_file=_config_file(kubeconfig))
    except (k8s_config.ConfigException, OSError):
        return ""
    chosen = next((c for c in contexts if c.get("name") == context), active) if context \
        else active
    return str((chosen or {}).get("context", {}).get("namespace") or "")


def _connect(kubeconfig: str | None, context: str | None) -> tuple[k8s.ApiClient, str]:
    """(ApiClient, default namespace) from a kubeconfig, else from the in-cluster account."""
    try:
        configuration = k8s.Configuration()
        k8s_config.load_kube_config(config_file=_config_file(kubeconfig), context=context,
                                    client_configuration=configuration)
        # jobs awaited together (AsyncMPIJob, threads) each hold a connection
        configuration.connection_pool_maxsize = POOL_SIZE
        api_client = k8s.ApiClient(configuration)
        return api_client, context_namespace(kubeconfig, context)
    except (k8s_config.ConfigException, OSError) as exc:
        if kubeconfig is not None or context is not None:
            raise ConfigurationError(_("The kubeconfig could not be used (%(problem)s): check "
                                       "the file and the context name.")
                                     % {"problem": str(exc)[:200]}) from None
    try:
        configuration = k8s.Configuration()
        k8s_config.load_incluster_config(client_configuration=configuration)
        configuration.connection_pool_maxsize = POOL_SIZE
    except k8s_config.ConfigException:
        raise ConfigurationError(_("No cluster to talk to: log in with \"oc login\" (or set "
                                   "KUBECONFIG), or pass kubeconfig= to TrainingClient."))\
            from None
    namespace = SERVICE_ACCOUNT_NAMESPACE.read_text().strip() \
        if SERVICE_ACCOUNT_NAMESPACE.exists() else ""
    return k8s.ApiClient(configuration), namespace


def _kind(kind: str | JobKind) -> JobKind:
    if isinstance(kind, JobKind):
        return kind
    slug = str(kind).lower()
    if slug not in KINDS:
        raise ValueError(_('Unknown job kind "%(kind)s": use one of %(kinds)s.')
                         % {"kind": str(kind)[:40], "kinds": ", ".join(KINDS)})
    return KINDS[slug]


class TrainingClient:
    """Training jobs in the clusters a kubeconfig (or the pod's service account) reaches."""

    def __init__(self, api_client: k8s.ApiClient | None = None, *,
                 kubeconfig: str | None = None, context: str | None = None) -> None:
        self.default_namespace = ""
        if api_client is None:
            api_client, self.default_namespace = _connect(kubeconfig, context)
        self.cluster = ClusterClient(api_client)

    def close(self) -> None:
        self.cluster.close()

    def prometheus(self, url: str) -> PrometheusClient:
        """A Prometheus query API client (OpenShift monitoring's Thanos querier) that uses
        this client's credentials and CA, for `diagnose(..., prometheus=...)`."""
        config = self.cluster.api_client.configuration
        keys = config.api_key or {}
        # the kubeconfig loader names it BearerToken, a Configuration made by hand
        # authorization
        token = str(keys.get("BearerToken") or keys.get("authorization") or "")
        token = token.removeprefix("Bearer ").strip()
        return PrometheusClient(url, token, config.ssl_ca_cert or None, timeout=(2.0, 5.0),
                                verify=bool(config.verify_ssl))

    def whoami(self) -> str:
        """The user name the cluster knows you by (OpenShift's users/~), recorded as a job's
        creator as the dashboard does; "" where the cluster does not say."""
        try:
            return str(self.cluster.whoami().get("metadata", {}).get("name") or "")
        except (errors.Forbidden, errors.NotFound):
            return ""

    def __enter__(self) -> TrainingClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- creating ------------------------------------------------------------------------
    def create_mpijob(self, spec: JobSpec, dry_run: bool = False) -> dict:
        """Create the MPIJob (with dry_run, only ask the API server whether it would).

        An empty namespace means the kubeconfig context's. Raises InvalidSpec for what the
        dashboard's validation refuses (warnings do not stop it), and the cluster's own
        refusals as odh.training.errors (QuotaExceeded, Conflict, Forbidden, Invalid...).
        """
        if not spec.namespace and self.default_namespace:
            spec = _with_namespace(spec, self.default_namespace)
        problems = errors_of(validate_spec(spec))
        if problems:  # what needs no cluster is said first
            raise InvalidSpec(problems)
        try:
            # the one way to create (odh.training.creating); this call creates what the
            # cluster admits, as it always did (MPIJob.create refuses what never starts)
            return creating.create(self.cluster, spec, created_by=spec.created_by or
                                   self.whoami(), dry_run=dry_run, force=True).object
        except creating.CreateRefused as e:
            # what the project holds refused it: a taken name is the cluster's Conflict,
            # as the API server would say it
            taken = [f for f in e.findings if f.field == "name"]
            if taken:
                raise errors.Conflict(taken[0].message, status=409,
                                      namespace=spec.namespace) from None
            raise InvalidSpec(e.findings) from None

    # -- reading -------------------------------------------------------------------------
    def get_job(self, name: str, namespace: str, kind: str | JobKind = "mpijob") -> dict:
        job_kind = _kind(kind)
        job = self.cluster.get_job(job_kind, namespace, name)
        job.setdefault("apiVersion", job_kind.api_version)
        job.setdefault("kind", job_kind.kind)
        return job

    def list_jobs(self, namespace: str | None = None, *, selector: str | None = None,
                  user: str | None = None) -> list[JobSummary]:
        """Every training job (all kinds) in a namespace; None: every namespace you may see.
        `selector`: only those whose labels match it (kubectl's `-l`: "team=nlp"); `user`:
        only those the person created (as the dashboard records its creator)."""
        return _chosen(self._listing(namespace), selector, user)

    def list_told(self, namespace: str | None = None, *, selector: str | None = None,
                  user: str | None = None) -> tuple[list[JobSummary], dict]:
        """`list_jobs`, and each job's story (odh.training.diagnosis.story.Story) by
        "<ns>/<kind slug>/<name>": the one line the dashboard's list says of it (the
        diagnosis' headline for jobs that fail or wait, read with your credentials)."""
        from odh.training.diagnosis.gather import tell_listing
        listing = self._listing(namespace)
        return _chosen(listing, selector, user), tell_listing(self.cluster, listing)

    def _listing(self, namespace: str | None):
        kinds = list(KINDS.values())
        if namespace:
            listing = list_summaries(self.cluster, [namespace], kinds)
            # Some kinds may be off limits (or not installed); the kinds made here are what
            # must be seen.
            if namespace in listing.forbidden_namespaces and not any(
                    self.cluster.can_i("list", k.plural, k.group, namespace)
                    for k in creatable_kinds()):
                raise errors.Forbidden(_("You may not list training jobs in %(namespace)s.")
                                       % {"namespace": namespace}, status=403,
                                       namespace=namespace)
        else:
            # a kind (or pods) refused cluster-wide is listed in your projects instead
            listing = list_summaries(self.cluster, None, kinds, fallback=self._namespaces)
        return listing

    def _namespaces(self) -> list[str]:
        """The projects this person may see (OpenShift), else the default namespace."""
        try:
            return [p.name for p in self.cluster.list_projects()]
        except (errors.NotFound, errors.Forbidden):
            return [self.default_namespace] if self.default_namespace else []

    def summary(self, name: str, namespace: str, kind: str | JobKind = "mpijob") -> JobSummary:
        """Status, lifecycle step, Launcher and Workers: what the job's page shows."""
        return job_detail(self.cluster, _kind(kind), namespace, name).summary

    def logs(self, name: str, namespace: str, worker: int | None = None,
             tail_lines: int | None = None, kind: str | JobKind = "mpijob") -> str:
        """The job's first pod's log (worker None: an MPIJob's Launcher, a PyTorchJob's
        Master) or Worker `worker`'s; the last `tail_lines`."""
        pod = pod_for(self.cluster, _kind(kind), namespace, name, worker)
        return self.cluster.read_log(namespace, pod.name, container=pod.container or None,
                                     tail_lines=tail_lines)

    def diagnose(self, name: str, namespace: str, kind: str | JobKind = "mpijob", *,
                 prometheus: PrometheusClient | None = None) -> Diagnosis | None:
        """Why the job failed, waits or looks unwell, and what to do: the dashboard's
        diagnosis (None for a job that is doing fine). Reads what it needs with your
        credentials (log tails, quotas, nodes...); what you may not read is named in the
        diagnosis' `unread`. Give `prometheus` (a PrometheusClient) for memory peaks and
        GPU use."""
        from odh.training.diagnosis.gather import Sources, diagnose_job

        _detail, found = diagnose_job(self.cluster, _kind(kind), namespace, name,
                                      sources=Sources(prometheus=prometheus))
        return found

    def wait(self, name: str, namespace: str, *, until: tuple[JobStatus, ...] = FINISHED,
             timeout: float = 3600, kind: str | JobKind = "mpijob",
             raise_on_failure: bool = True) -> JobSummary:
        """Wait until the job's status is one of `until`, following it with a watch (not
        polling); JobTimeoutError (a TimeoutError) after `timeout` seconds.

        A job that ends Failed raises JobFailedError (unless `raise_on_failure` is False),
        carrying the diagnosis: its headline, whose problem it is, the suggestions and the
        last log lines it rests on."""
        job_kind = _kind(kind)
        deadline = time.monotonic() + timeout
        current: JobSummary | None = None
        for obj in job_changes(self.cluster, job_kind, namespace, name, deadline=deadline):
            if obj is None:
                raise errors.NotFound(_("%(name)s was deleted.") % {"name": name},
                                      status=404, namespace=namespace)
            current = self.summary(name, namespace, job_kind)
            if current.status == JobStatus.FAILED and raise_on_failure and \
                    JobStatus.FAILED in until:
                raise self.failure(name, namespace, job_kind, current)
            if current.status in until:
                return current
        current = self.summary(name, namespace, job_kind)
        if current.status in until:
            return current
        raise errors.JobTimeoutError(
            _("%(name)s is still %(status)s after %(seconds)d seconds.")
            % {"name": name, "status": current.status.value, "seconds": int(timeout)},
            status=JobState.from_summary(current), summary=current)

    def failure(self, name: str, namespace: str, kind: str | JobKind = "mpijob",
                summary: JobSummary | None = None) -> errors.JobFailedError:
        """The JobFailedError of a job that failed: the diagnosis' headline, suggestions
        and the log lines it rests on."""
        if summary is None:
            summary = self.summary(name, namespace, kind)
        try:
            found = self.diagnose(name, namespace, kind)
        except errors.ClusterError:
            found = None
        if found is None:
            text = _("%(name)s failed: %(reason)s") % {"name": name,
                                                        "reason": summary.reason or "-"}
            return errors.JobFailedError(text, [], JobState.from_summary(summary),
                                         summary=summary)
        told = dataclasses.replace(JobState.from_summary(summary), step=found.headline,
                                   headline=found.headline)  # as status() tells it
        return errors.JobFailedError(found.headline, found.log_lines, told, found,
                                     summary=summary)

    # -- changing ------------------------------------------------------------------------
    def delete_job(self, name: str, namespace: str, kind: str | JobKind = "mpijob") -> None:
        self.cluster.delete_job(_kind(kind), namespace, name)

    def suspend(self, name: str, namespace: str, kind: str | JobKind = "mpijob") -> dict:
        """Suspend: Workers are deleted, the Launcher paused; resume() starts them again.
        A finished job raises Conflict (nothing to suspend); one already suspended is left
        as it is."""
        return set_suspended(self.cluster, _kind(kind), namespace, name, True).job

    def resume(self, name: str, namespace: str, kind: str | JobKind = "mpijob") -> dict:
        """Resume a suspended job (a finished one raises Conflict)."""
        return set_suspended(self.cluster, _kind(kind), namespace, name, False).job


def _with_namespace(spec: JobSpec, namespace: str) -> JobSpec:
    return dataclasses.replace(spec, namespace=namespace)

"""The create-job wizard's forms: what each step shows, with labels, help and htmx hooks.

The forms render and collect text; they do not decide what is valid. Every message comes
from `training.wizard.drafts` (fields that cannot be read, placed by
`training.wizard.formfields`) and `odh.training.validation` (what is
wrong with the spec), mapped onto these fields by name, so the wizard says what the SDK and
the CLI say. Rendering goes through our PatternFly crispy template pack
(templates/patternfly/field.html).
"""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from odh.training.checks.names import max_job_name_length
from odh.training.kinds import JobKind, default_kind
from odh.training.spec import MPI_IMPLEMENTATIONS
from training.wizard.formfields import MAX_TEXT, kind_fields

TEXT_ATTRS = {"autocomplete": "off", "spellcheck": "false", "autocapitalize": "none"}


def _text(label, help_text="", **attrs) -> forms.CharField:
    return forms.CharField(label=label, help_text=help_text, required=False,
                           widget=forms.TextInput(attrs={**TEXT_ATTRS, **attrs}))


def _number(label, help_text="", minimum: int = 0, maximum: int | None = None,
            **attrs) -> forms.CharField:
    # type=number for the spinner and the keypad; the form says novalidate, so the server's
    # messages (which say how to fix a value) are the ones a person reads.
    return forms.CharField(label=label, help_text=help_text, required=False,
                           widget=forms.NumberInput(attrs={
                               "min": minimum, "step": 1, "inputmode": "numeric",
                               **({"max": maximum} if maximum is not None else {}), **attrs}))


def _lines(label, help_text="", rows: int = 3, **attrs) -> forms.CharField:
    return forms.CharField(label=label, help_text=help_text, required=False,
                           widget=forms.Textarea(attrs={**TEXT_ATTRS, "rows": rows, **attrs}))


def _choice(label, choices, help_text="") -> forms.ChoiceField:
    return forms.ChoiceField(label=label, help_text=help_text, required=False, choices=choices)


class WizardStepForm(forms.Form):
    """A step's fields, bound to the draft's text; messages come from the view."""

    step = ""

    # labels and help of a kind whose pods are nodes (JobKind.counts_nodes)
    NODE_WORDS: dict = {}

    def __init__(self, *args, validate_url: str = "", messages: dict | None = None,
                 kind: JobKind | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.kind = kind or default_kind()
        # only what the kind's spec has (a TrainJob has no Launcher of its own to size)
        known = kind_fields(self.kind) | {"namespace"}
        for name in [n for n in self.fields if n not in known]:
            del self.fields[name]
        if self.kind.counts_nodes:
            for name, (label, help_text) in self.NODE_WORDS.items():
                if name in self.fields:
                    self.fields[name].label = label
                    self.fields[name].help_text = help_text
        # field name -> {"errors": [...], "warnings": [...]}
        self.field_messages: dict[str, dict[str, list[str]]] = messages or {}
        for name, bound in self.fields.items():
            attrs = bound.widget.attrs
            attrs["aria-describedby"] = f"id_{name}-help id_{name}-message" \
                if bound.help_text else f"id_{name}-message"
            if validate_url:
                live = "change" if isinstance(bound.widget, forms.Select | forms.CheckboxInput) \
                    else "input changed delay:400ms, change"
                attrs.update({"hx-post": validate_url, "hx-trigger": live,
                              "hx-target": f"#id_{name}-message", "hx-swap": "innerHTML",
                              "hx-include": "closest form", "hx-sync": "this:replace"})
            if self.field_messages.get(name, {}).get("errors"):
                attrs["aria-invalid"] = "true"

    def set_choices(self, name: str, choices: list[tuple[str, str]], unknown_label) -> None:
        """Choices for a select, keeping the draft's current value even when it is not among
        them (a clone from another project, an import) so the input is never lost."""
        current = self.data.get(name, "") if self.is_bound else ""
        values = {value for value, _label in choices}
        if current and current not in values:
            choices = [*choices, (current, unknown_label % {"value": current})]
        self.fields[name].choices = choices


class ConfigurationForm(WizardStepForm):
    step = "configuration"
    NODE_WORDS = {
        "image": (_("Training image"), _("The container image every node runs, with your "
                                         "code, e.g. quay.io/opendatahub/pytorch:2.7.1-cuda12.8."
                                         " Empty: the runtime's image.")),
        "command": (_("Command"), _("What each node runs (on an MPI runtime: the launcher), "
                                    "as you would type it in a shell, e.g. torchrun "
                                    "/workspace/train.py. Empty: the runtime's command.")),
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].help_text = gettext(
            "Lowercase letters, digits and hyphens, starting with a letter; at most %(limit)d "
            "characters so every Worker's name fits.") % {"limit": max_job_name_length()}
        self.fields["name"].widget.attrs["aria-describedby"] = "id_name-help id_name-message"

    def offer_pull_secrets(self, names: list[str] | None) -> None:
        """The image pull secret as a choice among the project's `names`, or (None: they
        cannot be listed) as the name typed."""
        old = self.fields.get("image_pull_secret")
        if old is None:
            return
        if names is None:
            old.help_text = gettext("For an image in a private registry: the name of a pull "
                                    "secret of the project (you may not list its Secrets "
                                    "here, so type it). Leave empty for public images.")
            return
        attrs = {k: v for k, v in old.widget.attrs.items()
                 if k not in ("maxlength", "spellcheck", "autocomplete", "autocapitalize")}
        self.fields["image_pull_secret"] = forms.ChoiceField(
            label=old.label, required=False, widget=forms.Select(attrs=attrs),
            help_text=gettext("For an image in a private registry: one of the project's "
                              "image pull secrets (Secrets of type "
                              "kubernetes.io/dockerconfigjson)."))
        self.set_choices("image_pull_secret",
                         [("", gettext("None (a public image)"))] + [(n, n) for n in names],
                         gettext("%(value)s (not found in this project)"))

    namespace = _choice(_("Project"), [], _("The OpenShift project the job runs in; its quota "
                                           "and storage apply."))
    runtime = _choice(_("Runtime"), [], _("The training runtime the TrainJob runs on: the "
                                          "cluster's ClusterTrainingRuntimes and this "
                                          "project's TrainingRuntimes. Its framework decides "
                                          "how the nodes meet (torchrun, MPI)."))
    name = _text(_("Job name"), "", maxlength=MAX_TEXT, placeholder="bert-finetune")
    description = _lines(_("Description"), _("Optional: what the job is for, in a sentence or "
                                             "two. The job's page shows it."), rows=2)
    image = _text(_("Training image"), _("The container image with your code and MPI, e.g. "
                                         "quay.io/opendatahub/horovod:0.28.1-pytorch2.1"),
                  maxlength=MAX_TEXT)
    image_pull_secret = _text(_("Image pull secret"), _("For an image in a private registry: "
                                                      "the name of a pull secret in the "
                                                      "project. Leave empty for public images."),
                              maxlength=253, spellcheck="false", autocomplete="off")
    command = _lines(_("Command"), _("What the Launcher runs, as you would type it in a shell, "
                                     "e.g. horovodrun -np 4 python /workspace/train.py. Quote "
                                     "arguments that contain spaces."), rows=3)
    working_dir = _text(_("Working directory"), _("Optional: the folder the command starts in, "
                                                  "e.g. /workspace. Empty: the image's own "
                                                  "working directory."), maxlength=MAX_TEXT)


class ResourcesForm(WizardStepForm):
    step = "resources"
    NODE_WORDS = {
        "workers": (_("Nodes"), _("Pods that run the training (numNodes), 1 or more.")),
        "cpu_per_worker": (_("CPUs per node"), _("Whole CPUs (4) or millicores (500m).")),
        "memory_per_worker": (_("Memory per node"), _("With a unit: 16Gi, 512Mi.")),
        "gpus_per_worker": (_("GPUs per node"), _("NVIDIA GPUs each node gets; 0 for "
                                                  "CPU-only training.")),
        "slots_per_worker": (_("Processes per node"), _("Training processes each node runs "
                                                        "(numProcPerNode); usually one per "
                                                        "GPU. Empty: the runtime's default.")),
        "mpi_implementation": (_("MPI implementation"), _("Only for an MPI runtime: must be "
                                                          "the one the runtime runs. Empty: "
                                                          "the runtime's.")),
        "gpu_product": (_("GPU type"), _("Run the nodes on cluster nodes with this GPU "
                                         "model.")),
        "node_selector": (_("Node selector"), _("Other labels of the cluster nodes the nodes "
                                                "need, one key=value per line.")),
    }

    workers = _number(_("Number of workers"), _("Pods that run the training, 1 to 100."),
                      minimum=1)
    cpu_per_worker = _text(_("CPUs per worker"), _("Whole CPUs (4) or millicores (500m)."))
    memory_per_worker = _text(_("Memory per worker"), _("With a unit: 16Gi, 512Mi."))
    gpus_per_worker = _number(_("GPUs per worker"), _("NVIDIA GPUs each Worker gets; 0 for "
                                                      "CPU-only training."))
    # -- advanced ----------------------------------------------------------------------------
    launcher_cpu = _text(_("Launcher CPUs"), _("The Launcher only starts the Workers: 1 CPU is "
                                               "usually enough."))
    launcher_memory = _text(_("Launcher memory"), _("e.g. 2Gi."))
    slots_per_worker = _number(_("Slots per worker"), _("Slots on each Worker (MPI ranks it "
                                                        "runs); usually one per GPU. Leave empty "
                                                        "for the default: GPUs per worker, or 1."),
                               minimum=1)
    mpi_implementation = _choice(_("MPI implementation"),
                                 [(m, m) for m in MPI_IMPLEMENTATIONS],
                                 _("Must match the MPI inside your image."))
    gpu_product = _choice(_("GPU type"), [], _("Run the Workers on nodes with this GPU model."))
    node_selector = _lines(_("Node selector"), _("Other node labels the Workers need, one "
                                                 "key=value per line."), rows=2)
    node_affinity = _lines(_("Node affinity"), _("Node labels the Workers and the Launcher "
                                                 "require, one per line: key In v1,v2 · key "
                                                 "NotIn v1 · key Exists · key DoesNotExist. "
                                                 "All lines must hold."), rows=2)
    tolerations = _lines(_("Tolerations"), _("Taints the pods tolerate, one per line: "
                                             "key=value:Effect, key:Effect or key (any value)."),
                         rows=2)
    priority_class = _choice(_("Priority class"), [], _("Higher priority jobs are scheduled "
                                                        "first and may preempt others."))
    queue_name = _choice(_("Kueue queue"), [], _("The LocalQueue that admits the job."))
    queue_priority = _choice(_("Queue priority"), [], _("Kueue's WorkloadPriorityClass: "
                                                       "higher priority jobs are admitted "
                                                       "first and may preempt lower ones."))
    clean_pod_policy = _choice(
        _("Clean-pod policy"),
        [("Running", _("Running: delete pods still running when the job ends")),
         ("All", _("All: delete every pod when the job ends")),
         ("None", _("None: keep every pod (and its logs)"))],
        _("What happens to the Launcher and Workers when the job finishes."))
    ttl_seconds_after_finished = _number(_("TTL after finished (seconds)"),
                                         _("Delete the job this long after it finishes. Empty: "
                                           "keep it."))
    backoff_limit = _number(_("Backoff limit"), _("How many times the Launcher is retried "
                                                  "before the job fails. Empty: the default."))
    launcher_creation_policy = _choice(
        _("Launcher creation policy"),
        [("AtStartup", _("AtStartup: start the Launcher with the Workers")),
         ("WaitForWorkersReady", _("WaitForWorkersReady: start it when every Worker is "
                                   "ready"))])
    disable_sidecar_injection = forms.BooleanField(
        label=_("Disable service-mesh sidecar"), required=False,
        help_text=_("Recommended: an Istio sidecar blocks MPI's connections between pods."))
    labels = _lines(_("Labels"), _("Job labels, one key=value per line."), rows=2)
    annotations = _lines(_("Annotations"), _("Job annotations, one key=value per line."), rows=2)
    retries = _number(_("Retries on failure"),
                      _("Start the job again, as a new job, up to this many times (0 to 5) "
                        "when it fails. Each retry waits twice as long as the one before. "
                        "Empty: no retry."), maximum=5)
    retry_on = _choice(_("Retry on"),
                       [("platform", _("Failures of the platform: a node lost, an eviction, "
                                       "a preemption")),
                        ("all", _("Any failure (an out-of-memory kill usually fails again)"))],
                       _("Failures of your code or configuration would fail the same way "
                         "again: retry them only if you know why."))

    ESSENTIALS = ("workers", "cpu_per_worker", "memory_per_worker", "gpus_per_worker")

    def essentials(self):
        return [self[name] for name in self.ESSENTIALS]

    def advanced(self, *names: str):
        return [self[name] for name in names if name in self.fields]


class ImportForm(forms.Form):
    manifest = forms.CharField(
        label=_("Paste an MPIJob manifest (YAML)"), required=False,
        widget=forms.Textarea(attrs={**TEXT_ATTRS, "rows": 8, "class": "dash-code-input",
                                     "aria-describedby": "id_manifest-message"}))
    manifest_file = forms.FileField(
        label=_("Or upload a YAML file"), required=False,
        widget=forms.ClearableFileInput(attrs={"accept": ".yaml,.yml,application/yaml,text/yaml",
                                               "aria-describedby": "id_manifest-message"}))


class SaveTemplateForm(forms.Form):
    template_name = forms.CharField(label=_("Template name"), max_length=100,
                                    widget=forms.TextInput(attrs=TEXT_ATTRS))
    description = forms.CharField(label=_("Description"), required=False, max_length=2000,
                                  widget=forms.Textarea(attrs={"rows": 2}))
    share = forms.ChoiceField(label=_("Who can use it"), initial="personal",
                              widget=forms.RadioSelect, choices=[])

    def __init__(self, *args, project: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        choices = [("personal", _("Only me"))]
        if project:
            choices.append(("project", _("Everyone who can see the project %(project)s")
                            % {"project": project}))
        self.fields["share"].choices = choices

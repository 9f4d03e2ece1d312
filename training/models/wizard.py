"""What the create-job wizard keeps: drafts in progress and saved job templates."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from odh.training.kinds import JobKind, default_kind, kind_for_slug


def default_draft_kind() -> str:
    """A new draft creates the default kind (the MPIJob)."""
    return default_kind().slug


class WizardDraft(models.Model):
    """A create-job wizard in progress: what the person typed, kept server-side.

    Each draft has its own key in the wizard's URL (/jobs/new/<key>/<step>/), so two tabs
    are two drafts, and a reload, a failed create or a trip through sign-in comes back to
    the same input. `data` holds the fields as the forms posted them (strings, lists of
    rows), valid or not; `base` is the manifest the draft started from (clone, import or
    template) so that fields the wizard does not show survive into the created job.
    """

    key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="wizard_drafts")
    step = models.CharField(max_length=32, default="type")
    # the slug of the job kind the draft creates (odh.training.kinds)
    kind = models.CharField(max_length=32, default=default_draft_kind)
    # "" | "clone:<project>/<type>/<name>" | "retry:<project>/<type>/<name>" |
    # "template:<slug or id>" | "import"
    source = models.CharField(max_length=600, blank=True)
    data = models.JSONField(default=dict, blank=True)
    base = models.JSONField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True, db_index=True)
    # the browser's send time (ms, rising per page) of the newest form post written: a live
    # check sent before a step's Next and answered after it writes nothing (views/wizard/base.py)
    revision = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["-updated"]

    @property
    def job_kind(self) -> JobKind:
        """The kind the draft creates; a kind the wizard does not show (no longer created
        here, or created by the SDK and CLI only) falls back to the default kind."""
        try:
            kind = kind_for_slug(self.kind)
        except KeyError:
            return default_kind()
        return kind if kind.wizard_ready else default_kind()

    def __str__(self) -> str:
        return f"draft {self.key} of {self.user}: {self.data.get('name', '')!r} at {self.step}"


class JobTemplate(models.Model):
    """A job configuration saved from the wizard's review step, to start from next time.

    `project` blank: personal (only `owner` sees it); otherwise shared with everyone who can
    see that project. `spec` is the MPIJob manifest without name and namespace.
    """

    owner = models.CharField(max_length=253, db_index=True)
    project = models.CharField(max_length=253, blank=True, db_index=True)
    # the shared project's uid: a project made again under the same name is another one
    # ("" for templates saved before it was kept, taken as the project of that name)
    project_uid = models.CharField(max_length=64, blank=True)
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    spec = models.JSONField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["owner", "project", "name"],
                                               name="unique_template_name")]

    def __str__(self) -> str:
        where = self.project or _("personal")
        return f"{self.name} ({where}, {self.owner})"

    @classmethod
    def for_person(cls, username: str, projects) -> models.QuerySet:
        """The templates someone may start from: their own personal ones, and those shared
        with the projects they see as those projects are now (`projects`: Project objects;
        a template of a project deleted and made again under the same name is not shown)."""
        shared = models.Q()
        for project in projects:
            shared |= models.Q(project=project.name) & (
                models.Q(project_uid=project.uid) | models.Q(project_uid=""))
        return cls.objects.filter(models.Q(project="", owner=username) | shared)

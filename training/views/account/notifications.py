"""/notifications/: a person's subscriptions to job transitions, their deliveries, and
"Send a test"; and the job page's "Notify me". Nothing is sent from here: deliveries are
queued and the watcher sends them (training/notifications.py)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from odh.training import webhooks
from odh.training.cluster.access import Access
from odh.training.cluster.api import is_namespace_name, is_object_name
from odh.training.kinds import default_kind
from training import notifications
from training.accounts import session
from training.cluster import user_client
from training.models import (
    DEFAULT_NOTIFY_STATUSES,
    NOTIFY_SIGNALS,
    NOTIFY_STATUSES,
    Notification,
    NotificationDelivery,
    NotificationSubscription,
)
from training.permissions import person_may
from training.projects import get_job_for_user, kind_or_404

Scope = NotificationSubscription.Scope
LIST_JOBS = Access("list", default_kind().plural, default_kind().group)
DELIVERIES_SHOWN = 50
NOTIFICATIONS_SHOWN = 20
PENDING_MINUTES = (1, 7 * 24 * 60)  # a week at most


def status_label(status: str) -> str:
    return {"Failed": _("Failed"), "Succeeded": _("Succeeded"), "Running": _("Running"),
            "Pending": _("Pending"), "Suspended": _("Suspended")}.get(status, status)


def signal_choice_label(signal: str, minutes: int | None = None) -> str:
    """A sign a subscription may ask for, as the form and the list name it."""
    if signal == "pending":
        if minutes:
            return _("Pending longer than %(minutes)d minutes") % {"minutes": minutes}
        return _("Pending longer than N minutes")
    return {"hang": _("A possible hang"), "restart": _("A Worker or the Launcher restarted"),
            "warnings": _("Early warnings: memory near its limit, an ETA past the job's "
                          "deadline, no log line while the GPUs idle")}.get(signal, signal)


class SubscriptionForm(forms.Form):
    scope = forms.ChoiceField(label=gettext_lazy("Notify me of"),
                              choices=[(Scope.MINE, gettext_lazy("My jobs")),
                                       (Scope.PROJECT, gettext_lazy("Every job of a project"))])
    project = forms.CharField(label=gettext_lazy("Project"), required=False, max_length=253)
    statuses = forms.MultipleChoiceField(
        label=gettext_lazy("When a job becomes"), widget=forms.CheckboxSelectMultiple,
        initial=DEFAULT_NOTIFY_STATUSES, required=False)
    signals = forms.MultipleChoiceField(
        label=gettext_lazy("And when"), widget=forms.CheckboxSelectMultiple, required=False)
    pending_minutes = forms.CharField(label=gettext_lazy("N (minutes)"), required=False,
                                      max_length=10)
    in_dashboard = forms.BooleanField(label=gettext_lazy("In the dashboard"), required=False,
                                      initial=True)
    email = forms.CharField(label=gettext_lazy("Email"), required=False, max_length=254)
    webhook_url = forms.CharField(label=gettext_lazy("Webhook URL"), required=False,
                                  max_length=webhooks.MAX_URL)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["statuses"].choices = [(s, status_label(s)) for s in NOTIFY_STATUSES]
        self.fields["signals"].choices = [(s, signal_choice_label(s)) for s in NOTIFY_SIGNALS]

    def clean_pending_minutes(self) -> int | None:
        text = self.cleaned_data.get("pending_minutes", "").strip()
        if not text:
            return None
        low, high = PENDING_MINUTES
        if not text.isdigit() or not low <= int(text) <= high:
            raise ValidationError(_("“%(value)s” is not a number of minutes: enter a whole "
                                    "number from %(low)d to %(high)d, such as 30.")
                                  % {"value": text[:20], "low": low, "high": high})
        return int(text)

    def clean_project(self) -> str:
        project = self.cleaned_data.get("project", "").strip()
        if project and not is_namespace_name(project):
            raise ValidationError(_("“%(project)s” is not a project name: lowercase letters, "
                                    "digits and hyphens.") % {"project": project[:60]})
        return project

    def clean_email(self) -> str:
        email = self.cleaned_data.get("email", "").strip()
        if email:
            try:
                validate_email(email)
            except ValidationError:
                raise ValidationError(_("“%(email)s” is not an email address: enter one such "
                                        "as alice@example.com.") % {"email": email[:60]}
                                      ) from None
        return email

    def clean_webhook_url(self) -> str:
        url = self.cleaned_data.get("webhook_url", "").strip()
        if not url:
            return ""
        allow = notifications.allow_list()
        try:
            webhooks.resolve(webhooks.check_url(url, allow), allow)
        except webhooks.Refused as e:
            raise ValidationError(str(e)) from None
        return url

    def clean(self):
        data = super().clean()
        if data.get("scope") == Scope.PROJECT and not data.get("project") and \
                "project" not in self.errors:
            self.add_error("project", _("Name the project whose jobs you want to hear of."))
        if "pending" in data.get("signals", []) and not data.get("pending_minutes") and \
                "pending_minutes" not in self.errors:
            self.add_error("pending_minutes", _("Say after how many minutes Pending you want "
                                                "to be told, such as 30."))
        if not data.get("statuses") and not data.get("signals") and "statuses" not in \
                self.errors:
            self.add_error("statuses", _("Choose at least one thing to be told of: a "
                                         "status, or one of the signs below."))
        if not (data.get("in_dashboard") or data.get("email") or data.get("webhook_url")) \
                and not self.errors:
            raise ValidationError(_("Choose at least one way to be told: in the dashboard, "
                                    "by email or by webhook."))
        return data


def _username(request: HttpRequest) -> str:
    return request.user.get_username()


def _get_subscriptions_for_user(request: HttpRequest) -> QuerySet[NotificationSubscription]:
    """The person's subscriptions; the first visit makes the default one (their own jobs,
    Failed and Succeeded, in the dashboard)."""
    username = _username(request)
    mine = NotificationSubscription.objects.filter(username=username)
    if not mine.exists():
        NotificationSubscription.objects.create(
            username=username, groups=session.groups(request), scope=Scope.MINE,
            statuses=list(DEFAULT_NOTIFY_STATUSES), in_dashboard=True)
    return mine


def _get_subscription_for_user(request: HttpRequest, pk: int) -> NotificationSubscription:
    found = NotificationSubscription.objects.filter(pk=pk, username=_username(request)).first()
    if found is None:  # another person's is not told apart from none
        raise Http404(_("There is no such subscription."))
    return found


def _context(request: HttpRequest, form: SubscriptionForm) -> dict:
    subscriptions = list(_get_subscriptions_for_user(request))
    for subscription in subscriptions:
        subscription.statuses_text = ", ".join(
            [status_label(s) for s in subscription.statuses or []] +
            [signal_choice_label(s, subscription.pending_minutes)
             for s in subscription.signals or [] if s in NOTIFY_SIGNALS])
    deliveries = NotificationDelivery.objects.filter(
        subscription__username=_username(request)).select_related(
        "subscription", "transition", "signal")[:DELIVERIES_SHOWN]
    return {"form": form, "subscriptions": subscriptions, "deliveries": deliveries,
            "notices": Notification.objects.filter(
                username=_username(request))[:NOTIFICATIONS_SHOWN]}


@require_http_methods(["GET", "POST"])
def notification_settings(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "training/notifications.html",
                      _context(request, SubscriptionForm()))
    form = SubscriptionForm(request.POST)
    if form.is_valid() and form.cleaned_data["scope"] == Scope.PROJECT:
        project = form.cleaned_data["project"]
        with user_client(request) as client:
            if not person_may(request, client, project, LIST_JOBS):
                form.add_error("project", _("You may not see the jobs of “%(project)s”: "
                                            "choose a project you are a member of.")
                               % {"project": project})
    if not form.is_valid():
        return render(request, "training/notifications.html", _context(request, form),
                      status=400)
    data = form.cleaned_data
    subscription = NotificationSubscription.objects.create(
        username=_username(request), groups=session.groups(request), scope=data["scope"],
        project=data["project"] if data["scope"] == Scope.PROJECT else "",
        statuses=[s for s in NOTIFY_STATUSES if s in data["statuses"]],
        signals=[s for s in NOTIFY_SIGNALS if s in data["signals"]],
        pending_minutes=data["pending_minutes"] if "pending" in data["signals"] else None,
        in_dashboard=data["in_dashboard"], email=data["email"],
        webhook_url=data["webhook_url"],
        webhook_secret=notifications.new_secret() if data["webhook_url"] else "")
    messages.success(request, _("Subscription saved."))
    context = _context(request, SubscriptionForm())
    # the secret is shown this once: it signs every delivery (X-ODH-Signature)
    context["new_secret"] = subscription.webhook_secret
    context["new_subscription"] = subscription
    return render(request, "training/notifications.html", context)


@require_POST
def notices_read(request: HttpRequest) -> HttpResponse:
    """The bell's drawer opened: its list, the unread ones still marked new, then all read
    (in the person's other tabs too: their bells hear it over their sockets)."""
    from training.live.notice_subscriptions import recent, render_list, tell_read

    username = _username(request)
    unread, notices = recent(username)
    Notification.objects.filter(username=username, read=False).update(read=True)
    if unread:
        tell_read(username, 0)
    return HttpResponse(render_list(notices))


@require_POST
def notification_delete(request: HttpRequest, pk: int) -> HttpResponse:
    _get_subscription_for_user(request, pk).delete()
    messages.success(request, _("Subscription removed."))
    return HttpResponseRedirect(reverse("training-notifications"))


@require_POST
def notification_test(request: HttpRequest, pk: int) -> HttpResponse:
    subscription = _get_subscription_for_user(request, pk)
    if not subscription.active:
        messages.error(request, _("This subscription is turned off: remove it and subscribe "
                                  "again."))
    else:
        notifications.queue_test(subscription)
        messages.success(request, _("A test is on its way: its delivery is listed below."))
    return HttpResponseRedirect(reverse("training-notifications"))


@require_POST
def notify_job(request: HttpRequest, project: str, kind: str, name: str) -> HttpResponse:
    """The job page's "Notify me": this job's Failed and Succeeded, in the dashboard (and by
    the email and webhook of the person's "My jobs" subscription, if it has them)."""
    job_kind = kind_or_404(kind)
    if not (is_namespace_name(project) and is_object_name(name)):
        raise Http404(_("There is no such job."))
    with user_client(request) as client:
        get_job_for_user(request, client, project, job_kind, name)  # may they see it?
    username = _username(request)
    mine = _get_subscriptions_for_user(request).filter(scope=Scope.MINE).first()
    NotificationSubscription.objects.get_or_create(
        username=username, scope=Scope.JOB, project=project, kind=job_kind.kind, job=name,
        defaults={"groups": session.groups(request),
                  "statuses": list(DEFAULT_NOTIFY_STATUSES), "in_dashboard": True,
                  "email": mine.email if mine else "",
                  "webhook_url": mine.webhook_url if mine else "",
                  "webhook_secret": mine.webhook_secret if mine else ""})
    messages.success(request, _("You will be notified when “%(name)s” fails or succeeds "
                                "(change it in Notifications).") % {"name": name})
    return HttpResponseRedirect(reverse("training-job-detail",
                                        args=[project, job_kind.slug, name]))

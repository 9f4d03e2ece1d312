"""Request ids, the person's cluster session, and cluster errors as pages people can read.

With the views because it answers as they do: the error pages, the wizard's kept input and a
missing job's history are theirs."""

from __future__ import annotations

import logging
import re
import uuid
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import DisallowedHost, RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.middleware.gzip import GZipMiddleware
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.urls import Resolver404, resolve, reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext as _
from django_htmx.http import HttpResponseClientRedirect, reswap
from django_htmx.middleware import HtmxDetails

from odh.training import errors
from training.accounts import session as cluster_session
from training.web.requestid import request_id as _request_id

log = logging.getLogger("training")

_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class CompressionMiddleware(GZipMiddleware):
    """Django's GZip (each answer padded against BREACH) for pages and JSON. Streaming
    answers (the audit CSV, log downloads) go out as they are: Django compresses an async
    stream chunk by chunk into separate gzip members, and browsers read only the first."""

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if response.streaming:
            return response
        return super().process_response(request, response)


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-Id", "")
        rid = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex[:16]
        request.request_id = rid
        token = _request_id.set(rid)
        try:
            response = self.get_response(request)
        finally:
            _request_id.reset(token)
        response["X-Request-Id"] = rid
        return response


# Where a POST-only address leads back to: the page its form is on.
_WIZARD_PAGE_OF = {"training-job-new-create": "review",
                   "training-job-new-save-template": "review",
                   "training-job-new-fix": "resources", "training-job-new-check": "resources",
                   "training-job-new-advice": "resources",
                   "training-job-new-validate": "configuration"}


def _same_site_page(request: HttpRequest, url: str | None) -> bool:
    """Is `url` a page of this site other than the address of this (non-GET) request?"""
    if not url:
        return False
    try:
        host = request.get_host()
    except DisallowedHost:
        return False
    return url_has_allowed_host_and_scheme(url, allowed_hosts={host},
                                           require_https=request.is_secure()) \
        and urlsplit(url).path != request.path


def _page_of(request: HttpRequest) -> str:
    """The page a form posting to this address is on: the draft's step, the job's page."""
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return reverse("training-job-list")
    name, kwargs = match.url_name, match.kwargs
    if name in ("training-job-new", "training-job-new-step", "training-job-retry"):
        return reverse(name, kwargs=kwargs)  # these answer GET too
    if name in _WIZARD_PAGE_OF:
        return reverse("training-job-new-step", args=[kwargs["key"], _WIZARD_PAGE_OF[name]])
    if {"project", "kind", "name"} <= kwargs.keys():
        return reverse("training-job-detail",
                       args=[kwargs["project"], kwargs["kind"], kwargs["name"]])
    return reverse("training-job-list")


def htmx_of(request: HttpRequest) -> HtmxDetails:
    """django-htmx's view of the request (HtmxMiddleware sets it early; read here for the
    requests that meet an error before it ran)."""
    found = getattr(request, "htmx", None)
    return found if isinstance(found, HtmxDetails) else HtmxDetails(request)


def _is_navigation(request: HttpRequest, htmx: HtmxDetails) -> bool:
    """Whether an htmx GET is the person going somewhere (a boosted link, a tab of the page
    they are on: the same address, other parameters), not a part of the page fetched from
    an address of its own."""
    if htmx.boosted or htmx.history_restore_request:
        return True
    current = htmx.current_url_abs_path
    return current is None or current.split("?", 1)[0] == request.path


def page_to_return_to(request: HttpRequest) -> str:
    """Where "Try again" and sign-in lead after this request: its own address after a GET;
    after a POST (whose address may take POST only: a link to it would answer 405), the
    page the form was sent from, if it is one of this site's, else the job's or draft's."""
    if request.method in ("GET", "HEAD"):
        return request.get_full_path()
    htmx = htmx_of(request)
    for url in (htmx.current_url if htmx else None, request.headers.get("Referer")):
        if _same_site_page(request, url):
            return url
    return _page_of(request)


def login_redirect(request: HttpRequest, next_url: str | None = None) -> HttpResponse:
    """Back through sign-in, then to the page the person was on (or to `next_url`)."""
    htmx = htmx_of(request)
    if next_url is None:
        next_url = page_to_return_to(request)
        if htmx and htmx.current_url:
            next_url = htmx.current_url
    url = reverse("training-login") + "?" + urlencode({"next": next_url})
    if htmx:
        response = HttpResponseClientRedirect(url)
        response.status_code = 204  # nothing to swap: htmx loads the sign-in page
        return response
    return HttpResponseRedirect(url)


class DashboardLoginRequiredMiddleware(LoginRequiredMiddleware):
    """Django's login-required default, answering htmx requests with HX-Redirect."""

    def handle_no_permission(self, request, view_func):
        return login_redirect(request)


def _takes_wizard_input(path: str) -> bool:
    from training.views.wizard import INPUT_URLS

    try:
        return resolve(path).url_name in INPUT_URLS
    except Resolver404:
        return False


class ClusterSessionMiddleware:
    """A signed-in person without a live cluster token is signed out (then sent to sign in).

    A wizard step's form sent with an expired token is first written into the person's
    draft (once the CSRF check has accepted it: in process_view), and sign-in brings them
    back to that step with what they typed.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated and not cluster_session.has_live_token(request):
            if request.method == "POST" and _takes_wizard_input(request.path_info):
                request.sign_out_after_keeping_input = True
            else:
                logout(request)
        response = self.get_response(request)
        if getattr(request, "sign_out_after_keeping_input", False):
            # refused before the view (the CSRF check): signed out all the same
            request.sign_out_after_keeping_input = False
            logout(request)
        return response

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        if not getattr(request, "sign_out_after_keeping_input", False):
            return None
        request.sign_out_after_keeping_input = False
        from training.views.wizard import keep_posted_input
        try:
            back = keep_posted_input(request, request.resolver_match.url_name, view_kwargs)
        except SuspiciousOperation:  # a form too big to read: nothing of it can be kept
            back = None
        log.info("cluster token of %s expired; %s", request.user,
                 "input kept in the draft" if back else "nothing to keep")
        logout(request)
        return login_redirect(request, back) if back else None


class ClusterErrorMiddleware:
    """Turns cluster errors raised by views, and bare 405s, into pages that say what next."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code == 405 and not getattr(response, "streaming", False) \
                and not response.content:
            from training.views.errors import not_allowed
            response = not_allowed(request, response.get("Allow", ""))
        if htmx_of(request) and request.method != "GET" and response.status_code >= 400 \
                and not isinstance(response, HttpResponseClientRedirect):
            # A form sent by htmx stays as it is, with what was typed in it: the page shows
            # the error above it (static/js/request-errors.js reads it from this answer),
            # and its "Try again" link leads to the form's page, not to this address.
            reswap(response, "none")
        return response

    def process_exception(self, request: HttpRequest, exception: Exception):
        if not isinstance(exception, errors.ClusterError):
            return None
        response = self._page_for(request, exception)
        htmx = htmx_of(request)
        if htmx and request.method == "GET" \
                and not isinstance(response, HttpResponseClientRedirect):
            if not _is_navigation(request, htmx):
                # a part the page fetched on its own (a card, a row's line): the window
                # must not go to the part's address; the page stays, and says what failed
                # (static/js/request-errors.js reads this answer)
                return reswap(response, "none")
            # htmx swaps no error response: load the address as a whole page, which shows
            # the error page (or the content, if the cluster is back by then)
            redirect = HttpResponseClientRedirect(request.get_full_path())
            redirect.status_code = response.status_code
            return redirect
        return response

    def _page_for(self, request: HttpRequest, exception: errors.ClusterError) -> HttpResponse:
        rid = getattr(request, "request_id", "-")
        if isinstance(exception, errors.Unauthorized):
            log.info("cluster token rejected; sending %s to sign in again", request.user)
            logout(request)
            return login_redirect(request)
        if isinstance(exception, errors.Forbidden):
            log.warning("forbidden: %s", exception.message)
            return render(request, "training/errors/403.html", {
                "project": exception.namespace, "message": exception.message,
                "request_id": rid}, status=403)
        if isinstance(exception, errors.NotFound):
            log.info("not found: %s", exception.message)
            # a job's address: its newest history record, if it has one (views/history.py)
            from training.views.job.history import missing_job_history
            return render(request, "training/errors/404.html", {
                "message": exception.message, "job_missing": True, "request_id": rid,
                **missing_job_history(request)}, status=404)
        log.error("cluster error (%s, HTTP %s): %s", type(exception).__name__,
                  exception.status or "-", exception.message)
        unavailable = isinstance(exception, errors.ClusterUnavailable)
        return render(request, "training/errors/503.html", {
            "unavailable": unavailable,
            "message": _("The cluster could not be reached or did not answer in time.")
            if unavailable else exception.message,
            "request_id": rid, "retry_url": page_to_return_to(request)},
            # the cluster is away (503), or it answered with an error of its own (502)
            status=503 if unavailable else 502)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler400: a request the dashboard would not read, in plain words. A YAML paste too
    big to read comes back as a message at the import field, on the wizard's first step."""
    too_big = isinstance(exception, RequestDataTooBig)
    if too_big:
        from training.views.wizard import import_too_big
        try:
            response = import_too_big(request)
        except Exception:  # the cluster away, the token gone: the page below says it all
            log.warning("could not show the import step for a form too big", exc_info=True)
            response = None
        if response is not None:
            return response
    rid = getattr(request, "request_id", "-")
    limit = filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0)
    if not hasattr(request, "user"):  # refused before sign-in was looked at (a bad Host)
        request.user = AnonymousUser()
    try:
        return render(request, "training/errors/400.html", {
            "request_id": rid, "too_big": too_big, "limit": limit}, status=400)
    except Exception:  # whatever broke the request must not break its error page too
        log.exception("the 400 page failed")
        return HttpResponseBadRequest(
            _("The dashboard could not read this request, so nothing was changed. Go back and "
              "try again. Request id: %(id)s") % {"id": rid}, content_type="text/plain")

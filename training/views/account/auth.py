"""Sign-in with OpenShift (authorization-code flow), sign-out that ends the token."""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlsplit

from authlib.integrations.base_client import OAuthError
from django.contrib.auth import get_user_model, login, logout
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from odh.training import errors
from training.accounts import session
from training.accounts.oauth import openshift
from training.cluster import client_for_token, user_client

log = logging.getLogger("training.auth")

# the page to return to, per sign-in under way (by its OAuth state): every tab that signs
# in again comes back to its own page, a wizard tab to its draft. As many as a person may
# open tabs at once (25 tabs signing in together once lost the oldest 5 of 20 kept).
NEXT_KEY = "login_next_by_state"
MAX_PENDING_SIGN_INS = 100


def _safe_next(request: HttpRequest, url: str | None) -> str:
    if url and url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure()):
        return url
    return reverse("training-job-list")


@login_not_required
@require_GET
def login_view(request: HttpRequest) -> HttpResponse:
    next_url = _safe_next(request, request.GET.get("next"))
    redirect_uri = request.build_absolute_uri(reverse("training-oauth-callback"))
    try:
        response = openshift().authorize_redirect(request, redirect_uri)
    except (OAuthError, OSError, ValueError) as e:
        log.error("cannot start sign-in: %s", e)
        return render(request, "training/signin_failed.html", {
            "reason": "unreachable"}, status=503)
    state = parse_qs(urlsplit(response["Location"]).query).get("state", [""])[0]
    pending = request.session.get(NEXT_KEY)
    pending = dict(pending) if isinstance(pending, dict) else {}
    pending[state] = next_url
    request.session[NEXT_KEY] = dict(list(pending.items())[-MAX_PENDING_SIGN_INS:])
    return response


@login_not_required
@require_GET
def callback(request: HttpRequest) -> HttpResponse:
    if request.GET.get("error"):
        # their words go to the log, not onto our page (anyone can craft this address)
        log.info("sign-in refused by the OAuth server: %s: %s", request.GET.get("error"),
                 request.GET.get("error_description", "")[:500])
        return render(request, "training/signin_failed.html", {"reason": "refused"},
                      status=403)
    try:
        token = openshift().authorize_access_token(request)
    except (OAuthError, OSError, ValueError) as e:
        log.warning("sign-in failed: %s", e)
        return render(request, "training/signin_failed.html", {"reason": "failed"}, status=400)
    access_token = token.get("access_token", "")
    try:
        with client_for_token(access_token) as client:
            user = client.whoami()
    except errors.ClusterError as e:
        log.warning("signed in but users/~ failed: %s", e)
        return render(request, "training/signin_failed.html", {"reason": "failed"}, status=400)
    username = (user.get("metadata") or {}).get("name", "")
    if not username:
        return render(request, "training/signin_failed.html", {"reason": "failed"}, status=400)
    pending = request.session.get(NEXT_KEY)
    pending = dict(pending) if isinstance(pending, dict) else {}
    next_url = pending.pop(request.GET.get("state", ""), None)
    before = request.user.get_username() if request.user.is_authenticated else ""
    account, _ = get_user_model().objects.get_or_create(username=username)
    login(request, account, backend="django.contrib.auth.backends.ModelBackend")
    session.store(request, access_token, token.get("expires_in"), username,
                  list(user.get("groups") or []))
    # the other tabs' sign-ins still under way keep their way back; another person's are
    # not carried into this one's session
    if pending and before in ("", username):
        request.session[NEXT_KEY] = pending
    log.info("%s signed in", username)
    return HttpResponseRedirect(_safe_next(request, next_url))


@login_not_required  # someone whose token expired may still sign out
@require_POST
def logout_view(request: HttpRequest) -> HttpResponse:
    token = session.token(request)
    if token:
        try:
            with user_client(request) as client:
                client.delete_own_token(token)
        except errors.ClusterError as e:
            # Sign-out still ends the dashboard session; the token expires on its own.
            log.warning("could not delete the OAuth token at sign-out: %s", e)
    logout(request)
    return HttpResponseRedirect(reverse("training-signed-out"))


@login_not_required
@require_GET
def signed_out(request: HttpRequest) -> HttpResponse:
    return render(request, "training/signed_out.html")

"""The OpenShift OAuth server: login page, authorization codes, tokens.

Behaves like openshift/oauth-server with an htpasswd identity provider:
- `/oauth/authorize` (authorization-code flow, state and redirect_uri checked against the
  OAuthClient, `grantMethod: auto`), sending people without a session to `/login`;
- `/login`: a form labelled "Username" / "Password" with a "Log in" button;
- `/oauth/token`: code exchange; tokens are `sha256~...`, stored as OAuthAccessToken
  objects named by their hash, expiring after the client's `accessTokenMaxAgeSeconds`;
- the challenging client (`openshift-challenging-client`, `response_type=token` with basic
  auth and an `X-CSRF-Token` header), which is what `oc login -u -p` uses;
- the public client `openshift-cli-client` (`oc login --web`): no secret, so its codes are
  exchanged only with the PKCE verifier of a challenge given at /oauth/authorize, and its
  loopback redirect URIs (http://127.0.0.1/callback) match on any port, as RFC 8252 asks;
- a ServiceAccount used as client may only get `user:info`, `user:check-access` and
  `role:<role>:<its namespace>` scopes.
"""

from __future__ import annotations

import base64
import hashlib
import html
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from simcluster.access.auth import SA_PREFIX, hash_oauth_token

if TYPE_CHECKING:
    from simcluster.cluster import Cluster

Obj = dict[str, Any]

DEFAULT_TOKEN_MAX_AGE = 86400
CODE_TTL = 300
SESSION_COOKIE = "ssn"
CSRF_COOKIE = "csrf"
CHALLENGING_CLIENT = "openshift-challenging-client"

INVALID_REQUEST = ("The request is missing a required parameter, includes an invalid parameter "
                   "value, includes a parameter more than once, or is otherwise malformed.")
UNAUTHORIZED_CLIENT = "The client is not authorized to request a token using this method."
INVALID_GRANT = ("The provided authorization grant (e.g., authorization code, resource owner "
                 "credentials) or refresh token is invalid, expired, revoked, does not match "
                 "the redirection URI used in the authorization request, or was issued to "
                 "another client.")
INVALID_CLIENT = ("Client authentication failed (e.g., unknown client, no client "
                  "authentication included, or unsupported authentication method).")


def new_token() -> str:
    while True:
        t = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")
        if not t.startswith("-"):
            return "sha256~" + t


@dataclass
class AuthorizeCode:
    client_id: str
    redirect_uri: str
    user: str
    scopes: list[str]
    expires: float
    code_challenge: str
    code_challenge_method: str


@dataclass
class Session:
    user: str
    expires: float


LOGIN_PAGE = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Log in · simcluster</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
 body {{ font-family: "Red Hat Text", "Overpass", Helvetica, Arial, sans-serif; background: #151515;
        color: #151515; margin: 0; }}
 main {{ max-width: 26rem; margin: 6rem auto; background: #fff; padding: 2.5rem;
         border-radius: 4px; }}
 h1 {{ font-size: 1.5rem; margin: 0 0 .5rem; }}
 p.hint {{ color: #6a6e73; margin: 0 0 1.5rem; }}
 label {{ display: block; font-weight: 600; margin: 1rem 0 .25rem; }}
 input[type=text], input[type=password] {{ width: 100%; box-sizing: border-box; padding: .5rem;
        border: 1px solid #8a8d90; font-size: 1rem; }}
 button {{ margin-top: 1.5rem; width: 100%; padding: .6rem; background: #0066cc; color: #fff;
          border: 0; font-size: 1rem; border-radius: 3px; cursor: pointer; }}
 button:focus, input:focus {{ outline: 2px solid #73bcf7; }}
 .error {{ background: #faeae8; border-left: 3px solid #c9190b; padding: .75rem; }}
</style></head>
<body><main>
<h1>Log in to your account</h1>
<p class="hint">simcluster OpenShift OAuth server ({provider})</p>
{error}
<form method="post" action="/login">
 <input type="hidden" name="then" value="{then}">
 <input type="hidden" name="csrf" value="{csrf}">
 <label for="inputUsername">Username</label>
 <input type="text" id="inputUsername" name="username" autocomplete="username" autofocus
        value="{username}" required>
 <label for="inputPassword">Password</label>
 <input type="password" id="inputPassword" name="password" autocomplete="current-password"
        required>
 <button type="submit">Log in</button>
</form>
</main></body></html>
"""


class OAuthServer:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.codes: dict[str, AuthorizeCode] = {}
        self.sessions: dict[str, Session] = {}
        self.session_max_age = 300
        self.identity_provider = "htpasswd"

    # -- discovery -------------------------------------------------------------------------
    def discovery_document(self) -> Obj:
        browser = self.cluster.oauth_browser_url
        api = self.cluster.api_url
        return {
            "issuer": api,
            "authorization_endpoint": f"{browser}/oauth/authorize",
            "token_endpoint": f"{api}/oauth/token",
            "scopes_supported": ["user:check-access", "user:full", "user:info",
                                 "user:list-projects", "user:list-scoped-projects"],
            "response_types_supported": ["code", "token"],
            "grant_types_supported": ["authorization_code", "implicit"],
            "code_challenge_methods_supported": ["plain", "S256"],
        }

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/oauth/authorize", self.authorize),
            web.get("/login", self.login_form),
            web.post("/login", self.login_submit),
            web.post("/oauth/token", self.token),
            web.get("/oauth/token", self.token),
            web.get("/logout", self.logout),
            web.get("/.well-known/oauth-authorization-server", self.discovery),
        ]

    async def discovery(self, request: web.Request) -> web.Response:
        return web.json_response(self.discovery_document())

    # -- clients ---------------------------------------------------------------------------
    def _client(self, client_id: str) -> Obj | None:
        if client_id.startswith(SA_PREFIX):
            ns, _, name = client_id[len(SA_PREFIX):].partition(":")
            sa = self.cluster.store.get_raw(self.cluster.rt("serviceaccounts"), ns, name)
            if sa is None:
                return None
            ann = sa["metadata"].get("annotations") or {}
            uris = [v for k, v in ann.items()
                    if k.startswith("serviceaccounts.openshift.io/oauth-redirecturi.")]
            return {"metadata": {"name": client_id}, "redirectURIs": uris,
                    "grantMethod": "auto", "_serviceaccount_namespace": ns,
                    "secret": self.cluster.service_account_token(ns, name)}
        return self.cluster.store.get_raw(self.cluster.rt("oauthclients"), "", client_id)

    @staticmethod
    def _redirect_ok(client: Obj, redirect_uri: str) -> bool:
        target = urlsplit(redirect_uri)
        for base in client.get("redirectURIs") or []:
            b = urlsplit(base)
            loopback = b.scheme == "http" and b.hostname in ("127.0.0.1", "::1") and \
                b.port is None and target.hostname == b.hostname
            if ((b.scheme, b.netloc) == (target.scheme, target.netloc) or loopback) and \
                    target.path.startswith(b.path.rstrip("/")):
                return True
        return False

    @staticmethod
    def _scopes_allowed(client: Obj, scopes: list[str]) -> list[str]:
        """Scopes the client may not have."""
        ns = client.get("_serviceaccount_namespace")
        if ns is None:
            return []
        denied = []
        for s in scopes:
            if s in ("user:info", "user:check-access"):
                continue
            parts = s.split(":")
            if len(parts) >= 3 and parts[0] == "role" and parts[2] == ns:
                continue
            denied.append(s)
        return denied

    # -- sessions ----------------------------------------------------------------------------
    def _session_user(self, request: web.Request) -> str | None:
        sid = request.cookies.get(SESSION_COOKIE)
        if not sid:
            return None
        s = self.sessions.get(sid)
        if s is None or s.expires < time.time():
            self.sessions.pop(sid, None)
            return None
        return s.user

    def check_password(self, username: str, password: str) -> bool:
        record = self.cluster.users.get(username)
        return bool(record) and secrets.compare_digest(
            str(record.get("password", "")), password)

    # -- /oauth/authorize ----------------------------------------------------------------------
    async def authorize(self, request: web.Request) -> web.StreamResponse:
        q = request.query
        client_id = q.get("client_id", "")
        redirect_uri = q.get("redirect_uri", "")
        response_type = q.get("response_type", "")
        state = q.get("state", "")
        client = self._client(client_id)
        if client is None:
            return _json_error(400, "unauthorized_client", UNAUTHORIZED_CLIENT, state)
        if client_id == CHALLENGING_CLIENT:
            return self._challenge(request, client)
        if not redirect_uri or not self._redirect_ok(client, redirect_uri):
            return _json_error(400, "invalid_request", INVALID_REQUEST, state)
        if response_type != "code":
            return _redirect_error(redirect_uri, "unsupported_response_type",
                                   "The authorization server does not support obtaining an "
                                   "authorization code using this method.", state)
        scopes = (q.get("scope") or "user:full").split()
        denied = self._scopes_allowed(client, scopes)
        if denied:
            return _redirect_error(redirect_uri, "access_denied",
                                   f"scope denied: {' '.join(denied)}", None)
        user = self._session_user(request)
        if user is None:
            then = request.path_qs
            raise web.HTTPFound("/login?" + urlencode({"then": then}))
        code = new_token()
        self.codes[code] = AuthorizeCode(
            client_id, redirect_uri, user, scopes, time.time() + CODE_TTL,
            q.get("code_challenge", ""), q.get("code_challenge_method", "plain"))
        sep = "&" if "?" in redirect_uri else "?"
        raise web.HTTPFound(redirect_uri + sep + urlencode({"code": code, "state": state}))

    def _challenge(self, request: web.Request, client: Obj) -> web.StreamResponse:
        """`oc login -u -p`: basic auth, answered with a token in the redirect fragment."""
        if not request.headers.get("X-CSRF-Token"):
            return web.Response(status=401, text="A non-empty X-CSRF-Token header is required "
                                "to receive basic-auth challenges")
        auth = request.headers.get("Authorization", "")
        user = None
        if auth.startswith("Basic "):
            try:
                raw = base64.b64decode(auth[6:]).decode()
                username, _, password = raw.partition(":")
                if self.check_password(username, password):
                    user = username
            except (ValueError, UnicodeDecodeError):
                user = None
        if user is None:
            return web.Response(status=401, headers={
                "WWW-Authenticate": 'Basic realm="openshift"'}, text="Unauthorized")
        scopes = (request.query.get("scope") or "user:full").split()
        token = self.issue_token(user, CHALLENGING_CLIENT, scopes, "", client)
        redirect = (client.get("redirectURIs") or [self.cluster.oauth_browser_url +
                                                   "/oauth/token/implicit"])[0]
        frag = urlencode({"access_token": token, "expires_in": self._max_age(client),
                          "scope": " ".join(scopes), "token_type": "Bearer"})
        raise web.HTTPFound(f"{redirect}#{frag}")

    # -- /login ------------------------------------------------------------------------------
    def _login_page(self, then: str, csrf: str, error: str = "", username: str = "",
                    status: int = 200) -> web.Response:
        body = LOGIN_PAGE.format(
            provider=html.escape(self.identity_provider), then=html.escape(then),
            csrf=html.escape(csrf), username=html.escape(username),
            error=f'<p class="error" role="alert">{html.escape(error)}</p>' if error else "")
        resp = web.Response(text=body, content_type="text/html", status=status)
        resp.set_cookie(CSRF_COOKIE, csrf, httponly=True, samesite="Lax", path="/")
        return resp

    async def login_form(self, request: web.Request) -> web.Response:
        then = request.query.get("then", "")
        csrf = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(16)
        return self._login_page(then, csrf)

    async def login_submit(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        then = str(form.get("then", ""))
        csrf = str(form.get("csrf", ""))
        username = str(form.get("username", ""))
        password = str(form.get("password", ""))
        if not csrf or csrf != request.cookies.get(CSRF_COOKIE):
            return self._login_page(then, secrets.token_urlsafe(16),
                                    "Your session has expired. Please try again.", username,
                                    status=403)
        if not self.check_password(username, password):
            return self._login_page(then, csrf, "Invalid login or password. Please try again.",
                                    username)
        sid = secrets.token_urlsafe(24)
        self.sessions[sid] = Session(username, time.time() + self.session_max_age)
        target = then if then.startswith("/oauth/authorize") else "/"
        resp = web.HTTPFound(target)
        resp.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="Lax", path="/",
                        max_age=self.session_max_age)
        raise resp

    async def logout(self, request: web.Request) -> web.StreamResponse:
        sid = request.cookies.get(SESSION_COOKIE)
        if sid:
            self.sessions.pop(sid, None)
        then = request.query.get("then", "")
        resp = web.HTTPFound(then if then.startswith(("http://", "https://", "/")) else "/login")
        resp.del_cookie(SESSION_COOKIE, path="/")
        raise resp

    # -- /oauth/token -------------------------------------------------------------------------
    def _max_age(self, client: Obj) -> int:
        return int(client.get("accessTokenMaxAgeSeconds") or DEFAULT_TOKEN_MAX_AGE)

    def issue_token(self, user: str, client_id: str, scopes: list[str], redirect_uri: str,
                    client: Obj, authorize_code: str = "") -> str:
        token = new_token()
        record = self.cluster.users.get(user) or {}
        self.cluster.store.create(self.cluster.rt("oauthaccesstokens"), {
            "metadata": {"name": hash_oauth_token(token)},
            "clientName": client_id,
            "expiresIn": self._max_age(client),
            "scopes": scopes,
            "redirectURI": redirect_uri,
            "userName": user,
            "userUID": record.get("uid", ""),
            "authorizeToken": hash_oauth_token(authorize_code) if authorize_code else "",
        })
        return token

    async def token(self, request: web.Request) -> web.StreamResponse:
        form = dict(await request.post()) if request.method == "POST" else {}
        form.update({k: v for k, v in request.query.items() if k not in form})
        client_id, secret = str(form.get("client_id", "")), str(form.get("client_secret", ""))
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            try:
                raw = base64.b64decode(auth[6:]).decode()
            except (ValueError, UnicodeDecodeError):
                raw = ":"
            from urllib.parse import unquote

            cid, _, csecret = raw.partition(":")
            client_id, secret = unquote(cid), unquote(csecret)
        client = self._client(client_id)
        public = client is not None and not client.get("secret") and not secret
        if client is None or (not public and (not secret or (not secrets.compare_digest(
                str(client.get("secret", "")), secret) and secret not in (
                client.get("additionalSecrets") or [])))):
            return _json_error(401 if auth else 400, "invalid_client", INVALID_CLIENT, None)
        if form.get("grant_type") != "authorization_code":
            return _json_error(400, "unsupported_grant_type",
                               "The authorization grant type is not supported by the "
                               "authorization server.", None)
        code = str(form.get("code", ""))
        grant = self.codes.pop(code, None)
        if grant is None or grant.expires < time.time() or grant.client_id != client_id or \
                grant.redirect_uri != str(form.get("redirect_uri", "")):
            return _json_error(400, "invalid_grant", INVALID_GRANT, None)
        if public and not grant.code_challenge:
            return _json_error(400, "invalid_grant", INVALID_GRANT, None)
        if grant.code_challenge:
            verifier = str(form.get("code_verifier", ""))
            if grant.code_challenge_method == "S256":
                computed = base64.urlsafe_b64encode(
                    hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            else:
                computed = verifier
            if computed != grant.code_challenge:
                return _json_error(400, "invalid_grant", INVALID_GRANT, None)
        token = self.issue_token(grant.user, client_id, grant.scopes, grant.redirect_uri,
                                 client, code)
        return web.json_response(
            {"access_token": token, "expires_in": self._max_age(client),
             "scope": " ".join(grant.scopes), "token_type": "Bearer"},
            headers={"Cache-Control": "no-cache, no-store, max-age=0, must-revalidate",
                     "Pragma": "no-cache", "Expires": "Fri, 01 Jan 1990 00:00:00 GMT"})


def _json_error(status: int, error: str, description: str, state: str | None) -> web.Response:
    body = {"error": error, "error_description": description}
    if state:
        body["state"] = state
    return web.json_response(body, status=status)


def _redirect_error(redirect_uri: str, error: str, description: str,
                    state: str | None) -> web.StreamResponse:
    params = {"error": error, "error_description": description}
    if state is not None:
        params["state"] = state
    sep = "&" if "?" in redirect_uri else "?"
    raise web.HTTPFound(redirect_uri + sep + urlencode(sorted(params.items())))

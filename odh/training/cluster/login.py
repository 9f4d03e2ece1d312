"""Signing in from a terminal, as `oc login` does: a token for the person from the cluster's
OpenShift OAuth server, then a kubeconfig context that the CLI, the SDK, `oc` and `kubectl`
all use.

- In the browser (the default): the OAuth server's address comes from the API server
  (`/.well-known/oauth-authorization-server`); a one-time listener on 127.0.0.1 is the
  redirect URI of OpenShift's public client `openshift-cli-client` (the one `oc login --web`
  uses: no secret, so the code is bound to this process by PKCE S256); the person signs in
  in their browser, the code comes back to the listener and is exchanged for a token.
- With `--token` (`oc login --token`): a token the person already has (the console's
  "Copy login command").

Either way the token is tried (`users/~`, then the projects it may see) before anything is
written, and the kubeconfig gets names as `oc login` writes them: the cluster
`api-example-com:6443`, the user `alice/api-example-com:6443`, the context
`<project>/api-example-com:6443/alice`, made current. The file is written with mode 0600.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import requests
import yaml
from kubernetes import client as k8s

from odh.training import errors
from odh.training.cluster.client import ClusterClient
from odh.training.i18n import _

CLI_CLIENT = "openshift-cli-client"
CALLBACK_PATH = "/callback"
TIMEOUT = 10.0


class LoginError(Exception):
    """Why signing in did not work, in words that say what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Server:
    url: str  # https://api.example.com:6443
    verify: bool | str = True  # a CA file, or False (--insecure-skip-tls-verify)

    @property
    def cluster_name(self) -> str:
        """As `oc login` names it: the host and port, dots made dashes."""
        parts = urlsplit(self.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return f"{(parts.hostname or '').replace('.', '-')}:{port}"


@dataclass(frozen=True)
class Identity:
    username: str
    projects: list[str]


def server_of(url: str, ca_file: str = "", insecure: bool = False) -> Server:
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "https://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise LoginError(_("“%(server)s” is not a server address: give the API server's, "
                           "such as https://api.example.com:6443.") % {"server": url})
    if ca_file and not Path(ca_file).is_file():
        raise LoginError(_("There is no file %(path)s: give the cluster's CA certificate "
                           "file to --certificate-authority.") % {"path": ca_file})
    return Server(url, False if insecure else (ca_file or True))


def _get(server: Server, url: str, **options: Any) -> requests.Response:
    try:
        return requests.get(url, verify=server.verify, timeout=TIMEOUT, **options)
    except requests.exceptions.SSLError:
        raise LoginError(_("The certificate of %(server)s is not trusted here: give the "
                           "cluster's CA with --certificate-authority FILE (or, for a test "
                           "cluster only, --insecure-skip-tls-verify).")
                         % {"server": server.url}) from None
    except requests.exceptions.RequestException as e:
        raise LoginError(_("Cannot reach %(server)s (%(reason)s): check the address and "
                           "your network.") % {"server": server.url,
                                               "reason": type(e).__name__}) from None


def reach(server: Server) -> None:
    """The server answers over a connection trusted here (any HTTP answer will do), else
    LoginError saying what to do."""
    _get(server, server.url + "/version")


def oauth_endpoints(server: Server) -> tuple[str, str]:
    """(authorization endpoint, token endpoint) as the API server publishes them."""
    answer = _get(server, server.url + "/.well-known/oauth-authorization-server")
    try:
        found = answer.json() if answer.ok else {}
    except ValueError:
        found = {}
    authorize, token = found.get("authorization_endpoint"), found.get("token_endpoint")
    if not authorize or not token:
        raise LoginError(_("%(server)s has no OpenShift OAuth server to sign in with in a "
                           "browser: log in with a token instead (--token).")
                         % {"server": server.url})
    return str(authorize), str(token)


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(
        hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


class _Callback(HTTPServer):
    """The one-time redirect target on 127.0.0.1: keeps what the browser brings back."""

    answer: dict[str, str]
    done: threading.Event


class _CallbackHandler(BaseHTTPRequestHandler):
    server: _Callback

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path != CALLBACK_PATH:
            self.send_error(404)
            return
        self.server.answer = {k: v[0] for k, v in parse_qs(parts.query).items()}
        ok = "code" in self.server.answer
        words = _("You are logged in: go back to your terminal; you may close this tab.") \
            if ok else _("Logging in did not work: your terminal says why.")
        body = (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>odh login"
                f"</title></head><body><p>{html.escape(words)}</p></body></html>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.server.done.set()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the terminal is the person's


def browser_login(server: Server, show: Callable[[str], None],
                  timeout: float = 300.0) -> str:
    """A token through the browser: `show(url)` gives the person the address to open
    (and opens it where it can); returns once they signed in."""
    authorize, token_url = oauth_endpoints(server)
    listener = _Callback(("127.0.0.1", 0), _CallbackHandler)
    listener.answer, listener.done = {}, threading.Event()
    redirect = f"http://127.0.0.1:{listener.server_address[1]}{CALLBACK_PATH}"
    verifier, challenge = _pkce()
    state = secrets.token_urlsafe(24)
    thread = threading.Thread(target=listener.serve_forever, daemon=True)
    thread.start()
    try:
        show(authorize + "?" + urlencode({
            "client_id": CLI_CLIENT, "response_type": "code", "redirect_uri": redirect,
            "state": state, "code_challenge": challenge, "code_challenge_method": "S256"}))
        if not listener.done.wait(timeout):
            raise LoginError(_("Nobody signed in within %(seconds)d seconds: run the command "
                               "again.") % {"seconds": int(timeout)})
    finally:
        listener.shutdown()
        listener.server_close()
    answer = listener.answer
    if answer.get("state") != state:
        raise LoginError(_("The answer from the sign-in page was not for this login: run "
                           "the command again."))
    if "code" not in answer:
        raise LoginError(_("The OAuth server refused: %(reason)s.") % {
            "reason": answer.get("error_description") or answer.get("error") or "?"})
    try:
        got = requests.post(token_url, verify=server.verify, timeout=TIMEOUT, data={
            "grant_type": "authorization_code", "code": answer["code"],
            "redirect_uri": redirect, "client_id": CLI_CLIENT, "code_verifier": verifier})
    except requests.exceptions.RequestException as e:
        raise LoginError(_("Cannot reach the OAuth server (%(reason)s): run the command "
                           "again.") % {"reason": type(e).__name__}) from None
    token = (got.json() if got.ok else {}).get("access_token")
    if not token:
        raise LoginError(_("The OAuth server gave no token (HTTP %(code)d): run the command "
                           "again.") % {"code": got.status_code})
    return str(token)


def identify(server: Server, token: str) -> Identity:
    """Who the token is, and the projects they may see: the token tried before it is kept."""
    config = k8s.Configuration()
    config.host = server.url
    config.api_key = {"authorization": "Bearer " + token}
    config.verify_ssl = server.verify is not False
    if isinstance(server.verify, str):
        config.ssl_ca_cert = server.verify
    with ClusterClient(k8s.ApiClient(config)) as cluster:
        try:
            username = str((cluster.whoami().get("metadata") or {}).get("name") or "")
            projects = sorted(p.name for p in cluster.list_projects())
        except errors.Unauthorized:
            raise LoginError(_("%(server)s refused the token: it is wrong or has expired; "
                               "get a new one (log in without --token, or copy the login "
                               "command from the console).") % {"server": server.url}
                             ) from None
        except errors.ClusterError as e:
            raise LoginError(e.message) from None
    if not username:
        raise LoginError(_("%(server)s did not say who the token belongs to: is it an "
                           "OpenShift cluster?") % {"server": server.url})
    return Identity(username, projects)


def _entry(items: list[dict], name: str, key: str, value: dict) -> None:
    for item in items:
        if item.get("name") == name:
            item[key] = value
            return
    items.append({"name": name, key: value})


def write_kubeconfig(path: Path, server: Server, token: str, username: str,
                     namespace: str) -> str:
    """Add (or renew) the cluster, user and context in the kubeconfig at `path`, make the
    context current, keep everything else; returns the context's name."""
    try:
        config = yaml.safe_load(path.read_text()) if path.exists() else None
    except (OSError, yaml.YAMLError) as e:
        raise LoginError(_("Cannot read the kubeconfig %(path)s (%(reason)s): fix it or "
                           "give another with --kubeconfig.") % {"path": str(path),
                                                                 "reason": e}) from None
    config = config if isinstance(config, dict) else {}
    config.setdefault("apiVersion", "v1")
    config.setdefault("kind", "Config")
    for key in ("clusters", "users", "contexts"):
        if not isinstance(config.get(key), list):
            config[key] = []
    cluster = server.cluster_name
    user = f"{username}/{cluster}"
    context = f"{namespace}/{cluster}/{username}" if namespace else f"{cluster}/{username}"
    details: dict[str, Any] = {"server": server.url}
    if server.verify is False:
        details["insecure-skip-tls-verify"] = True
    elif isinstance(server.verify, str):
        details["certificate-authority"] = str(Path(server.verify).resolve())
    _entry(config["clusters"], cluster, "cluster", details)
    _entry(config["users"], user, "user", {"token": token})
    context_details = {"cluster": cluster, "user": user}
    if namespace:
        context_details["namespace"] = namespace
    _entry(config["contexts"], context, "context", context_details)
    config["current-context"] = context
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        yaml.safe_dump(config, out, default_flow_style=False, sort_keys=False)
    os.chmod(path, 0o600)  # a file that was there before keeps no wider mode
    return context


def project_for(identity: Identity, asked: str, before: str) -> tuple[str, str]:
    """The project the new context names, and what to tell about it: the one asked for
    (which must be one the person may see), else the one the context had, else the only or
    first one."""
    if asked:
        if asked not in identity.projects:
            raise LoginError(_("You may not see project “%(project)s”: choose one of yours "
                               "(%(projects)s).") % {
                "project": asked, "projects": ", ".join(identity.projects) or "-"})
        return asked, ""
    if before and before in identity.projects:
        return before, ""
    if not identity.projects:
        return "", _("You have no projects yet: ask an administrator to add you to one.")
    if len(identity.projects) == 1:
        return identity.projects[0], ""
    return identity.projects[0], _("You have access to %(count)d projects; using "
                                   "“%(project)s”: choose another with -n PROJECT.") % {
        "count": len(identity.projects), "project": identity.projects[0]}

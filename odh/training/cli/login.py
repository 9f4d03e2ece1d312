"""`odh login`: sign in to an OpenShift cluster and write the kubeconfig context the other
commands use, as `oc login` does (odh.training.cluster.login has the how and why).

    odh login --server https://api.example.com:6443          # in the browser
    odh login --server https://api.example.com:6443 --token sha256~...
    odh login                                                # again, the current server
"""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import yaml

from odh.training.cluster import login
from odh.training.i18n import _


def login_parser() -> argparse.ArgumentParser:
    from odh.training.cli.parsing import ArgumentParser

    p = ArgumentParser(prog="odh login", description=_(
        "Sign in to an OpenShift cluster (in your browser, or with a token) and make it "
        "the kubeconfig's current context, as oc login does."))
    p.add_argument("server_arg", nargs="?", default="", metavar="SERVER",
                   help=argparse.SUPPRESS)
    p.add_argument("-s", "--server", default="",
                   help=_("the API server, e.g. https://api.example.com:6443 (default: the "
                          "current context's)"))
    p.add_argument("--token", default="",
                   help=_("a token you already have (the console's Copy login command); "
                          "without it, you sign in in your browser"))
    p.add_argument("-n", "--namespace", default="", help=_("the project to use"))
    p.add_argument("--certificate-authority", default="", metavar="FILE",
                   help=_("the cluster's CA certificate file"))
    p.add_argument("--insecure-skip-tls-verify", action="store_true",
                   help=_("do not check the server's certificate (test clusters only)"))
    p.add_argument("--kubeconfig", default="",
                   help=_("the kubeconfig to write (default: $KUBECONFIG or ~/.kube/config)"))
    p.add_argument("--no-browser", action="store_true",
                   help=_("print the sign-in address without opening a browser"))
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help=_("how long to wait for you to sign in (default: 300)"))
    return p


def _kubeconfig_path(given: str) -> Path:
    if given:
        return Path(given)
    first = (os.environ.get("KUBECONFIG") or "").split(os.pathsep)[0]
    return Path(first) if first else Path.home() / ".kube" / "config"


def _current(path: Path) -> tuple[str, str, str]:
    """(server, namespace, CA file) of the kubeconfig's current context, "" where none."""
    try:
        config = yaml.safe_load(path.read_text()) if path.exists() else None
    except (OSError, yaml.YAMLError):
        return "", "", ""
    if not isinstance(config, dict):
        return "", "", ""
    name = config.get("current-context")
    context = next((c.get("context") or {} for c in config.get("contexts") or []
                    if isinstance(c, dict) and c.get("name") == name), {})
    cluster = next((c.get("cluster") or {} for c in config.get("clusters") or []
                    if isinstance(c, dict) and c.get("name") == context.get("cluster")), {})
    return (str(cluster.get("server") or ""), str(context.get("namespace") or ""),
            str(cluster.get("certificate-authority") or ""))


def run_login(argv: Sequence[str], out: TextIO) -> int:
    from odh.training.cli import BAD_INPUT, OK, REFUSED

    args = login_parser().parse_args(list(argv))
    path = _kubeconfig_path(args.kubeconfig)
    server_url, namespace_before, ca_before = _current(path)
    asked = args.server or args.server_arg
    if asked and asked.rstrip("/") != server_url.rstrip("/"):
        namespace_before, ca_before = "", ""
    server_url = asked or server_url
    if not server_url:
        sys.stderr.write("error: " + _("which cluster? give its API server: odh login "
                                       "--server https://api.example.com:6443") + "\n")
        return BAD_INPUT
    try:
        server = login.server_of(server_url, args.certificate_authority or ca_before,
                                 args.insecure_skip_tls_verify)

        def show(url: str) -> None:
            out.write(_("Log in in your browser at:\n  %(url)s\nWaiting for you to sign "
                        "in...") % {"url": url} + "\n")
            out.flush()
            if not args.no_browser:
                webbrowser.open(url)

        login.reach(server)
        token = args.token or login.browser_login(server, show, args.timeout)
        who = login.identify(server, token)
        namespace, note = login.project_for(who, args.namespace, namespace_before)
        context = login.write_kubeconfig(path, server, token, who.username, namespace)
    except login.LoginError as e:
        sys.stderr.write(f"error: {e.message}\n")
        return REFUSED
    out.write(_("Logged into %(server)s as %(user)s.") % {"server": server.url,
                                                          "user": who.username} + "\n")
    if namespace:
        out.write(_("Using project “%(project)s”.") % {"project": namespace} + "\n")
    if note:
        out.write(note + "\n")
    out.write(_("Context %(context)s written to %(path)s.") % {"context": context,
                                                               "path": str(path)} + "\n")
    return OK

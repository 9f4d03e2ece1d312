"""Signing people in against a real simcluster, for view and browser tests."""

from __future__ import annotations

import html
import re
from contextlib import contextmanager
from urllib.parse import parse_qs, urljoin, urlsplit

import requests

from tests.simcluster_process import SimCluster


def oauth_token(sim: SimCluster, username: str, password: str | None = None) -> str:
    """A real `sha256~` user:full token from simcluster's OAuth server (as `oc login`)."""
    resp = requests.get(
        f"{sim.api_url}/oauth/authorize",
        params={"client_id": "openshift-challenging-client", "response_type": "token"},
        auth=(username, password or username), headers={"X-CSRF-Token": "1"},
        verify=str(sim.ca_file), allow_redirects=False, timeout=10)
    assert resp.status_code == 302, resp.text
    fragment = parse_qs(urlsplit(resp.headers["Location"]).fragment)
    return fragment["access_token"][0]


def sign_in(client, sim: SimCluster, username: str, token: str | None = None) -> str:
    """Make a Django test client signed in as `username`, as the OAuth callback would."""
    from django.contrib.auth import get_user_model

    from training.accounts.session import KEY, session_data

    token = token or oauth_token(sim, username)
    user, _ = get_user_model().objects.get_or_create(username=username)
    client.force_login(user)
    session = client.session
    session[KEY] = session_data(token, 3600, username,
                                ["system:authenticated", "system:authenticated:oauth"])
    session.save()
    return token


def session_token(client) -> str:
    """The OpenShift token a test client's session holds (sealed there)."""
    from training.accounts.session import KEY, token_in

    return token_in(client.session.get(KEY) or {})


def register_redirect_uri(sim: SimCluster, uri: str) -> None:
    """Let the dashboard's OAuthClient redirect to `uri` too (as an admin would)."""
    from kubernetes import client

    with sim.api_client("admin") as api:
        oauth = client.CustomObjectsApi(api)
        current = oauth.get_cluster_custom_object("oauth.openshift.io", "v1", "oauthclients",
                                                  "mpijob-dashboard")
        uris = list(current.get("redirectURIs") or [])
        if uri not in uris:
            oauth.patch_cluster_custom_object(
                "oauth.openshift.io", "v1", "oauthclients", "mpijob-dashboard",
                {"redirectURIs": uris + [uri]}, _content_type="application/merge-patch+json")


def log_in_at_openshift(sim: SimCluster, authorize_url: str, username: str,
                        browser: requests.Session | None = None) -> str:
    """What a person does on the OpenShift login page; returns where it sends them back.

    `authorize_url` is the dashboard's redirect to the OAuth server; the result is the
    dashboard's callback URL with `code` and `state`.
    """
    browser = browser or requests.Session()
    resp = browser.get(authorize_url, allow_redirects=False, timeout=10)
    if resp.status_code == 302 and urlsplit(resp.headers["Location"]).path == "/login":
        login_page = urljoin(authorize_url, resp.headers["Location"])
        form = browser.get(login_page, timeout=10)
        assert form.status_code == 200, form.text
        fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form.text))
        resp = browser.post(urljoin(login_page, "/login"), data={
            "username": username, "password": username,
            "then": html.unescape(fields["then"]), "csrf": html.unescape(fields["csrf"])},
            allow_redirects=False, timeout=10)
        assert resp.status_code == 302, resp.text
        resp = browser.get(urljoin(login_page, resp.headers["Location"]),
                           allow_redirects=False, timeout=10)
    assert resp.status_code == 302, resp.text
    return resp.headers["Location"]


def sign_in_over_http(sim: SimCluster, base_url: str, username: str) -> requests.Session:
    """A running dashboard at `base_url` signed in to by `username` the way a browser does
    it (the dashboard's redirect, the OpenShift login page, the callback), without a
    browser; returns the session holding its cookie."""
    browser = requests.Session()
    browser.verify = str(sim.ca_file)
    url = base_url + "/jobs/"
    while url.startswith(base_url):  # the dashboard's redirects, up to the OAuth server's
        resp = browser.get(url, allow_redirects=False, timeout=10)
        assert resp.status_code == 302, resp.text
        url = urljoin(url, resp.headers["Location"])
    back = log_in_at_openshift(sim, url, username, browser)
    landed = browser.get(urljoin(base_url, back), timeout=10)
    assert landed.status_code == 200 and landed.url.startswith(base_url + "/jobs/"), landed.url
    return browser


@contextmanager
def role_in(sim: SimCluster, namespace: str, user: str, role: str, binding: str):
    """`user` holds the ClusterRole `role` in `namespace` (a RoleBinding made by admin) for
    the duration of the block."""
    from kubernetes import client as k8s

    with sim.api_client("admin") as api:
        rbac = k8s.RbacAuthorizationV1Api(api)
        rbac.create_namespaced_role_binding(namespace, {
            "metadata": {"name": binding},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": user}]})
        try:
            yield
        finally:
            rbac.delete_namespaced_role_binding(binding, namespace)

"""OpenShift OAuth as a registered OAuthClient (Authlib does the protocol)."""

from __future__ import annotations

from authlib.integrations.django_client import OAuth
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from training.cluster import cluster_config

_oauth = OAuth()


def openshift():
    """The Authlib client, configured on first use from the cluster's discovery document."""
    client = _oauth.create_client("openshift")
    if client is not None:
        return client
    if not settings.OAUTH_CLIENT_SECRET:
        raise ImproperlyConfigured(
            "OAUTH_CLIENT_SECRET is not set: register the dashboard as an OAuthClient on the "
            "cluster and give its secret to the dashboard (see README.md)")
    cfg = cluster_config()
    _oauth.register(
        name="openshift",
        client_id=settings.OAUTH_CLIENT_ID,
        client_secret=settings.OAUTH_CLIENT_SECRET,
        server_metadata_url=f"{cfg.server}/.well-known/oauth-authorization-server",
        client_kwargs={"scope": settings.OAUTH_SCOPE,
                       "verify": cfg.ca_file if (cfg.verify_ssl and cfg.ca_file)
                       else cfg.verify_ssl,
                       # requests would let REQUESTS_CA_BUNDLE override `verify`
                       "trust_env": False,
                       "default_timeout": settings.CLUSTER_READ_TIMEOUT},
    )
    return _oauth.create_client("openshift")


def reset() -> None:
    """Forget the registered client (tests point the dashboard at another cluster)."""
    global _oauth
    _oauth = OAuth()

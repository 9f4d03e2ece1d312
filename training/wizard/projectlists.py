"""What the wizard lists from a project for a person to choose from, read with their own
token: the image pull secrets (Secrets of type kubernetes.io/dockerconfigjson), the keys of
its Secrets and ConfigMaps for environment variables, the cluster's StorageClasses for a
new volume claim. Names only:
what a Secret holds is never kept nor shown. None says the list cannot be read (the
person may not list Secrets there, or the cluster did not answer): the form then asks
for the name as text."""

from __future__ import annotations

import logging

from odh.training import errors
from odh.training.checks.names import is_dns1123_subdomain
from odh.training.cluster.client import ClusterClient
from odh.training.diagnosis.gather import PULL_SECRET_TYPE
from odh.training.manifests.claims import storage_class_names
from training.wizard.envsources import SourceKeys

log = logging.getLogger("training.wizard")


def pull_secret_names(client: ClusterClient, namespace: str) -> list[str] | None:
    """The project's image pull secrets, by name; None when they cannot be listed."""
    if not namespace or not is_dns1123_subdomain(namespace):
        return None
    try:
        return sorted(n for n in client.list_secret_names(namespace, PULL_SECRET_TYPE) if n)
    except errors.Forbidden:
        return None
    except errors.ClusterError as e:
        log.info("cannot list the pull secrets of %s: %s", namespace, e.message)
        return None


def source_keys(client: ClusterClient, namespace: str) -> SourceKeys:
    """The project's Secrets and ConfigMaps with their keys' names, each None where it
    cannot be listed."""
    keys = SourceKeys()
    if not namespace or not is_dns1123_subdomain(namespace):
        return keys
    for attr, read in (("secrets", client.list_secret_keys),
                       ("configmaps", client.list_configmap_keys)):
        try:
            setattr(keys, attr, read(namespace))
        except errors.Forbidden:
            continue
        except errors.ClusterError as e:
            log.info("cannot list the %s of %s: %s", attr, namespace, e.message)
    return keys


def storage_classes_for(client: ClusterClient) -> tuple[list[str], str] | None:
    """The cluster's StorageClasses by name, the default first, and the default's name
    (read with the person's token); None when they cannot be listed."""
    try:
        return storage_class_names(client.list_storage_classes())
    except errors.Unauthorized:
        raise
    except errors.ClusterError as e:
        log.info("cannot list the storage classes: %s", e.message)
        return None

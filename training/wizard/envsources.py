"""An environment variable's value taken from a key of one of the project's Secrets or
ConfigMaps (secretKeyRef, configMapKeyRef), as the wizard's select names it:
"secret/<name>/<key>", "configmap/<name>/<key>"; "" is the value typed. A valueFrom of
another kind (fieldRef, resourceFieldRef: from an import or a clone) is "kept"."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _

KEPT = "kept"
_REFS = {"secret": "secretKeyRef", "configmap": "configMapKeyRef"}


@dataclass
class SourceKeys:
    """The project's Secrets and ConfigMaps, name -> key names (None: not listable)."""

    secrets: dict[str, list[str]] | None = None
    configmaps: dict[str, list[str]] | None = None


def source_of(value_from: object) -> str:
    """The select's value for a row's valueFrom."""
    if not isinstance(value_from, dict) or not value_from:
        return ""
    for kind, ref in _REFS.items():
        found = value_from.get(ref)
        if isinstance(found, dict) and len(value_from) == 1:
            return f"{kind}/{found.get('name', '')}/{found.get('key', '')}"
    return KEPT


def value_from_for(source: str, previous: object) -> dict | None:
    """The valueFrom a select's value stands for (`previous`: the row's, for "kept")."""
    if source == KEPT:
        return previous if isinstance(previous, dict) else None
    kind, _slash, rest = source.partition("/")
    name, _slash, key = rest.partition("/")
    if kind not in _REFS or not name or not key:
        return None
    return {_REFS[kind]: {"name": name, "key": key}}


def source_choices(keys: SourceKeys, current: str) -> list[tuple[str, str]]:
    """The select's choices: the value typed, then every key of every Secret and ConfigMap
    listed (names only, never a value), and the row's own source where it is not listed."""
    choices = [("", _("The value typed"))]
    for kind, found, label in (("secret", keys.secrets, _("Secret %(name)s: %(key)s")),
                               ("configmap", keys.configmaps, _("ConfigMap %(name)s: %(key)s"))):
        for name, names in sorted((found or {}).items()):
            choices += [(f"{kind}/{name}/{key}", label % {"name": name, "key": key})
                        for key in names]
    if current and current != KEPT and current not in {value for value, _label in choices}:
        kind, _slash, rest = current.partition("/")
        name, _slash, key = rest.partition("/")
        choices.append((current, _("%(kind)s %(name)s: %(key)s (not found in this project)")
                        % {"kind": "Secret" if kind == "secret" else "ConfigMap", "name": name,
                           "key": key}))
    return choices


def object_choices(keys: SourceKeys, current: str) -> list[tuple[str, str]]:
    """A whole Secret or ConfigMap's select ("secret/<name>"): every one listed, with how
    many keys it has, and the row's own where it is not listed."""
    choices = [("", _("Choose a Secret or ConfigMap"))]
    for kind, found, label in (("secret", keys.secrets, _("Secret %(name)s (%(keys)s)")),
                               ("configmap", keys.configmaps,
                                _("ConfigMap %(name)s (%(keys)s)"))):
        for name, names in sorted((found or {}).items()):
            choices.append((f"{kind}/{name}", label % {"name": name, "keys": ", ".join(names)}))
    if current and current not in {value for value, _label in choices}:
        kind, _slash, name = current.partition("/")
        choices.append((current, _("%(kind)s %(name)s (not found in this project)")
                        % {"kind": "Secret" if kind == "secret" else "ConfigMap",
                           "name": name}))
    return choices

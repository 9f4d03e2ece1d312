"""Manifests as YAML people read: keys in the order given, multi-line text as blocks."""

from __future__ import annotations

import yaml


class _ReadableDumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # A script in a command reads far better as a literal block than as one escaped line;
    # the emitter itself falls back to quoting when a block cannot hold the text exactly.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _str)


def manifest_yaml(manifest: dict) -> str:
    """YAML for a manifest: safe types only, keys as ordered in the dict (stable), no
    line folding of long arguments."""
    return yaml.dump(manifest, Dumper=_ReadableDumper, sort_keys=False,
                     default_flow_style=False, allow_unicode=True, width=4096)

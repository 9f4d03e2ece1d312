"""Container image references, checked against the distribution reference grammar.

    reference := name [ ":" tag ] [ "@" digest ]
    name      := [ domain "/" ] path-component [ "/" path-component ]*

(github.com/distribution/reference). The first component is the registry only when it
looks like a host (has a "." or ":", or is "localhost"); the repository path is lower case.
Docker Hub's short forms ("horovod/horovod:0.28.1", "ubuntu") are references too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from odh.training.i18n import _, shown

NAME_MAX = 255
EXAMPLE = "quay.io/my-team/train:1.0"

_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = re.compile(
    rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?")
_PATH_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"(?P<algorithm>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*)"
                     r":(?P<hex>[0-9a-fA-F]{32,})")
_DIGEST_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class ImageError(ValueError):
    """An image reference that breaks the grammar; the message says how to write it."""


@dataclass(frozen=True)
class ImageRef:
    domain: str
    path: str
    tag: str = ""
    digest: str = ""

    @property
    def pinned(self) -> bool:
        return bool(self.tag or self.digest)


def _generic(reference: str) -> ImageError:
    return ImageError(_('"%(image)s" is not a valid image reference: write '
                        'registry/repository:tag, for example "%(example)s".')
                      % {"image": shown(reference), "example": EXAMPLE})


def _split_domain(name: str) -> tuple[str, str]:
    first, slash, rest = name.partition("/")
    # Stricter than the grammar, which also takes an upper-case first component for a
    # host: "MyTeam/train" is far more often a mistyped repository than a registry.
    if slash and ("." in first or ":" in first or first == "localhost"):
        return first, rest
    return "", name


def _check_digest(digest: str) -> None:
    match = _DIGEST.fullmatch(digest)
    expected = _DIGEST_LENGTHS.get(match.group("algorithm")) if match else None
    if match is None or (expected is not None and len(match.group("hex")) != expected):
        raise ImageError(_('The image digest "%(digest)s" is not valid: write it as "sha256:" '
                           "followed by 64 hexadecimal digits.") % {"digest": shown(digest)})


def _check_tag(tag: str) -> None:
    if tag == "":
        raise ImageError(_('The image reference ends with ":" but has no tag: add one (for '
                           'example ":1.0") or remove the ":".'))
    if _TAG.fullmatch(tag) is None:
        raise ImageError(_('The image tag "%(tag)s" is not valid: use up to 128 letters, digits, '
                           '"_", "." and "-", starting with a letter, digit or "_".')
                         % {"tag": shown(tag)})


def _valid_path(path: str) -> bool:
    return bool(path) and all(_PATH_COMPONENT.fullmatch(part) for part in path.split("/"))


def parse_image(reference: str) -> ImageRef:
    """The parts of an image reference; ImageError (with the fix) when it is not one."""
    if any(ch.isspace() for ch in reference):
        raise ImageError(_('The image reference "%(image)s" contains spaces: remove them.')
                         % {"image": shown(reference)})
    scheme = _SCHEME.match(reference)
    if scheme:
        raise ImageError(_('Leave out "%(scheme)s": an image reference starts with the registry '
                           'host, for example "%(example)s".')
                         % {"scheme": scheme.group(0), "example": EXAMPLE})
    name, at, digest = reference.partition("@")
    if at:
        _check_digest(digest)
    domain, remainder = _split_domain(name)
    path, colon, tag = remainder.rpartition(":") if ":" in remainder else (remainder, "", "")
    if colon:
        _check_tag(tag)
    if not path or (domain and _DOMAIN.fullmatch(domain) is None):
        raise _generic(reference)
    if not _valid_path(path):
        if _valid_path(path.lower()):
            suggestion = f"{domain}/{path.lower()}" if domain else path.lower()
            raise ImageError(_('Image repository names are lower case: use "%(suggestion)s".')
                             % {"suggestion": shown(suggestion, 80)})
        raise _generic(reference)
    if len(f"{domain}/{path}" if domain else path) > NAME_MAX:
        raise ImageError(_("The image name is longer than 255 characters: use a shorter "
                           "repository name."))
    return ImageRef(domain=domain, path=path, tag=tag, digest=digest)

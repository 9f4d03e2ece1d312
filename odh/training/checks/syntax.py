"""Kubernetes' rules for names, label keys and values (apimachinery's validation package),
and the plain-text forms people type settings in.

Each check returns the reason a value breaks the rule in plain words, or "" when it is
fine, so callers can build a message that names the field and the fix.

The text forms (one `key=value` per line, tolerations as `key=value:Effect for 30s`, a
command line with shell quoting) are how the wizard shows and reads these settings, and
how a CLI would take them. Each `read_*` returns what it could read and a message per part
it could not, so a caller can show every message without losing the rest of the input.
"""

from __future__ import annotations

import re
import shlex

from odh.training.i18n import _, shown
from odh.training.spec import Toleration

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63
QUALIFIED_NAME_MAX = 63
ANNOTATIONS_MAX_BYTES = 256 * 1024

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_dns1123_label(value: str) -> bool:
    return len(value) <= DNS1123_LABEL_MAX and _DNS1123_LABEL.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> bool:
    return (len(value) <= DNS1123_SUBDOMAIN_MAX
            and _DNS1123_SUBDOMAIN.fullmatch(value) is not None)


def is_c_identifier(value: str) -> bool:
    return _C_IDENTIFIER.fullmatch(value) is not None


def qualified_name_problem(key: str) -> str:
    """Why `key` is not a valid label or annotation key ("prefix/name"), or ""."""
    if not key:
        return _("the key is empty")
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            return _('the prefix before "/" is empty')
        if not is_dns1123_subdomain(prefix):
            return _('the prefix before "/" must be a DNS name in lower case, '
                     'such as "example.com"')
    if not name:
        return _('the name after "/" is empty')
    if len(name) > QUALIFIED_NAME_MAX:
        return _("the name part is longer than 63 characters")
    if _QUALIFIED_NAME.fullmatch(name) is None:
        return _('use letters, digits, "-", "_" and ".", starting and ending with a letter '
                 "or digit")
    return ""


def label_value_problem(value: str) -> str:
    """Why `value` is not a valid label value, or ""."""
    if value == "":
        return ""
    if len(value) > LABEL_VALUE_MAX:
        return _("a label value is at most 63 characters")
    if _QUALIFIED_NAME.fullmatch(value) is None:
        return _('use letters, digits, "-", "_" and ".", starting and ending with a letter '
                 "or digit")
    return ""


# --- text forms -------------------------------------------------------------------------

_WHOLE_NUMBER = re.compile(r"[+-]?\d{1,18}")  # a longer one is "far too large", not read


def read_whole_number(raw: str) -> tuple[int | None, str]:
    """A whole number as typed ("2", "+3", " 4 "), or None and why it is not one.

    Empty text is None with no problem: whether a number is required is the caller's rule.
    """
    text = raw.strip()
    if not text:
        return None, ""
    if _WHOLE_NUMBER.fullmatch(text):
        return int(text), ""
    if re.fullmatch(r"[+-]?\d+", text):
        return None, _("This number is far too large: enter a value below 1000000.")
    return None, (_("“%(value)s” is not a whole number: enter digits only, e.g. 2.")
                  % {"value": shown(text)})


def pairs_text(pairs: dict[str, str]) -> str:
    """Labels, annotations or a node selector as lines of key=value."""
    return "\n".join(f"{k}={v}" for k, v in pairs.items())


def read_pairs(raw: str) -> tuple[dict[str, str], list[str]]:
    """The pairs of `key=value` lines (blank lines skipped, spaces around each side
    dropped), and a message for each line that is not one."""
    pairs: dict[str, str] = {}
    problems = []
    for number, line in enumerate(raw.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            problems.append(_("Line %(number)d (“%(line)s”) is not key=value: write one "
                              "key=value pair per line.")
                            % {"number": number, "line": shown(line)})
            continue
        pairs[key.strip()] = value.strip()
    return pairs, problems


# key, key=value, key:Effect, key=value:Effect, each optionally "for <n>s"; "*" is any key.
_TOLERATION = re.compile(r"(?P<key>[^=:\s]+)(?:=(?P<value>[^:\s]*))?(?::(?P<effect>\w+))?"
                         r"(?:\s+for\s+(?P<seconds>\d{1,9})s)?")


def toleration_text(t: Toleration) -> str:
    """A toleration as one line: "nvidia.com/gpu:NoSchedule", "k=v:NoExecute for 30s"."""
    text = t.key or "*"
    if t.operator != "Exists" or t.value:
        text += f"={t.value}"
    if t.effect:
        text += f":{t.effect}"
    if t.seconds is not None:
        text += f" for {t.seconds}s"
    return text


def tolerations_text(tolerations: list[Toleration]) -> str:
    return "\n".join(toleration_text(t) for t in tolerations)


def read_tolerations(raw: str) -> tuple[list[Toleration], list[str]]:
    """The tolerations of lines written as `toleration_text` writes them, and a message for
    each line that is not one. A key alone tolerates any value (operator Exists)."""
    tolerations = []
    problems = []
    for number, line in enumerate(raw.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        match = _TOLERATION.fullmatch(line)
        if not match:
            problems.append(_(
                "Line %(number)d (“%(line)s”) is not a toleration: write key=value:Effect, "
                "key:Effect or key, e.g. nvidia.com/gpu=present:NoSchedule.")
                % {"number": number, "line": shown(line)})
            continue
        key = match.group("key")
        value = match.group("value")
        seconds = match.group("seconds")
        tolerations.append(Toleration(
            key="" if key == "*" else key,
            operator="Exists" if value is None else "Equal",
            value=value or "", effect=match.group("effect") or "",
            seconds=int(seconds) if seconds else None))
    return tolerations, problems


def command_text(command: list[str]) -> str:
    """A command as a shell would take it (each argument quoted where it needs to be)."""
    return shlex.join(command) if command else ""


def read_command(raw: str) -> tuple[list[str], str]:
    """The arguments of a command line, split as a shell would; with an unclosed quote,
    split at spaces and say why."""
    try:
        return shlex.split(raw), ""
    except ValueError:
        return raw.split(), _("The command has a quote that is never closed: close it, or "
                              "put a backslash before a quote that is part of an argument.")

"""Label selectors parsed the way apimachinery's `labels.Parse` does, errors included.

A lexer turns `app in (a,b),!tier,env!=dev` into tokens; a recursive-descent parser
builds requirements, validating keys and values with the API server's messages, so a
client that sends a selector the server cannot parse gets the very words a real cluster
answers with (`unable to parse requirement: found 'b', expected: '('`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
Predicate = Callable[[Obj], bool]

END, IDENT, COMMA, OPEN, CLOSE, NOT, EQ, DEQ, NEQ, IN, NOTIN, GT, LT, ERROR = range(14)
_SYMBOLS = {")": CLOSE, ",": COMMA, "!": NOT, "==": DEQ, "=": EQ, ">": GT, "<": LT,
            "!=": NEQ, "(": OPEN}
_KEYWORDS = {"in": IN, "notin": NOTIN}
_SPECIAL = set("=!(),><")
_WHITESPACE = set(" \t\r\n")

_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
NAME_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
            "[A-Za-z0-9]')")
QUALIFIED_MSG = ("a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                 "'my.name',  or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
                 "prefix and '/' (e.g. 'example.com/MyName')")
VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
             "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
             "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
             "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                 "characters, '-' or '.', and must start and end with an alphanumeric "
                 "character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


class SelectorError(ValueError):
    pass


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def qualified_name_errors(key: str) -> list[str]:
    """validation.IsQualifiedName."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
        errs: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        errs = []
        if not prefix:
            errs.append("prefix part must be non-empty")
        elif len(prefix) > 253:
            errs.append("prefix part must be no more than 253 characters")
        elif not _DNS_SUBDOMAIN_RE.fullmatch(prefix):
            errs.append("prefix part " + SUBDOMAIN_MSG)
    else:
        return [QUALIFIED_MSG]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if name and not _NAME_RE.fullmatch(name):
        errs.append(NAME_MSG)
    return errs


def label_value_errors(value: str) -> list[str]:
    """validation.IsValidLabelValue."""
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _VALUE_RE.fullmatch(value):
        errs.append(VALUE_MSG)
    return errs


def _lex(selector: str) -> list[tuple[int, str]]:
    items: list[tuple[int, str]] = []
    i, n = 0, len(selector)
    while True:
        while i < n and selector[i] in _WHITESPACE:
            i += 1
        if i >= n:
            items.append((END, ""))
            return items
        if selector[i] in _SPECIAL:
            buffer, last = "", None
            while i < n and selector[i] in _SPECIAL:
                candidate = buffer + selector[i]
                if candidate in _SYMBOLS:
                    buffer, last = candidate, (_SYMBOLS[candidate], candidate)
                    i += 1
                elif last is not None:
                    break
                else:
                    buffer = candidate
                    i += 1
            items.append(last or (ERROR, f"error expected: keyword found '{buffer}'"))
            continue
        start = i
        while i < n and selector[i] not in _WHITESPACE and selector[i] not in _SPECIAL:
            i += 1
        word = selector[start:i]
        items.append((_KEYWORDS.get(word, IDENT), word))


@dataclass
class Requirement:
    key: str
    op: str
    values: tuple[str, ...]

    def matches(self, labels: dict[str, str]) -> bool:
        has = self.key in labels
        value = labels.get(self.key)
        if self.op in ("=", "==", "in"):
            return has and value in self.values
        if self.op in ("!=", "notin"):
            return not has or value not in self.values
        if self.op == "exists":
            return has
        if self.op == "!":
            return not has
        if not has:
            return False
        try:
            have, want = int(str(value)), int(self.values[0])
        except ValueError:
            return False
        return have > want if self.op == "gt" else have < want


class _Parser:
    def __init__(self, selector: str) -> None:
        self.items = _lex(selector)
        self.pos = 0

    def lookahead(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        return (IDENT if values and tok in (IN, NOTIN) else tok), lit

    def consume(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.lookahead(values)
        self.pos += 1
        return tok, lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok in (IDENT, NOT):
                try:
                    reqs.append(self.requirement())
                except SelectorError as e:
                    raise SelectorError(f"unable to parse requirement: {e}") from None
                t, lit2 = self.consume()
                if t == END:
                    return reqs
                if t == COMMA:
                    t2, lit3 = self.lookahead()
                    if t2 not in (IDENT, NOT):
                        raise SelectorError(f"found '{lit3}', expected: identifier after ','")
                    continue
                raise SelectorError(f"found '{lit2}', expected: ',' or 'end of string'")
            if tok == END:
                return reqs
            raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        negate = False
        tok, key = self.consume()
        if tok == NOT:
            negate = True
            tok, key = self.consume()
        if tok != IDENT:
            raise SelectorError(f"found '{key}', expected: identifier")
        errs = qualified_name_errors(key)
        if errs:
            # validated against a nil field path, which prints as <nil>
            raise SelectorError(f"<nil>: Invalid value: {_quote(key)}: {'; '.join(errs)}")
        if self.lookahead()[0] in (END, COMMA):
            return _checked(key, "!" if negate else "exists", ())
        tok, lit = self.consume(values=False)
        ops = {IN: "in", NOTIN: "notin", EQ: "=", DEQ: "==", NEQ: "!=", GT: "gt", LT: "lt"}
        if tok not in ops:
            raise SelectorError(f"found '{lit}', expected: '=', '!=', '==', 'in', notin'")
        op = ops[tok]
        values = self.set_values() if op in ("in", "notin") else self.exact_value()
        return _checked(key, op, values)

    def set_values(self) -> tuple[str, ...]:
        tok, lit = self.consume()
        if tok != OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok == CLOSE:
            self.consume()
            return ("",)
        if tok not in (IDENT, COMMA):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        values: set[str] = set()
        while True:
            t, item = self.consume()
            if t == IDENT:
                values.add(item)
                t2, lit2 = self.lookahead()
                if t2 == COMMA:
                    continue
                if t2 == CLOSE:
                    break
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if t == COMMA:
                if not values:
                    values.add("")
                t2, _ = self.lookahead()
                if t2 == CLOSE:
                    values.add("")
                    break
                if t2 == COMMA:
                    self.consume()
                    values.add("")
                continue
            raise SelectorError(f"found '{item}', expected: ',', or identifier")
        if self.consume()[0] != CLOSE:
            raise SelectorError(f"found '{lit}', expected: ')'")
        return tuple(sorted(values))

    def exact_value(self) -> tuple[str, ...]:
        tok, lit = self.lookahead()
        if tok in (END, COMMA):
            return ("",)
        tok, lit = self.consume()
        if tok == IDENT:
            return (lit,)
        raise SelectorError(f"found '{lit}', expected: identifier")


def _checked(key: str, op: str, values: tuple[str, ...]) -> Requirement:
    """NewRequirement's validation."""
    errs: list[str] = []
    if op in ("gt", "lt"):
        for i, v in enumerate(values):
            try:
                int(v)
            except ValueError:
                errs.append(f"values[{i}]: Invalid value: {_quote(v)}: for 'Gt', 'Lt' "
                            "operators, the value must be an integer")
    for i, v in enumerate(values):
        problems = label_value_errors(v)
        if problems:
            errs.append(f"values[{i}][{key}]: Invalid value: {_quote(v)}: "
                        + "; ".join(problems))
    if errs:
        raise SelectorError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    return Requirement(key, op, values)


def parse(selector: str) -> list[Requirement]:
    """Requirements of a selector; SelectorError with apimachinery's message otherwise."""
    return sorted(_Parser(selector).parse(), key=lambda r: r.key)


def matcher(selector: str | None) -> Predicate:
    if not selector:
        return lambda obj: True
    reqs = parse(selector)

    def match(obj: Obj) -> bool:
        labels = (obj.get("metadata") or {}).get("labels")
        if not isinstance(labels, dict):
            labels = {}
        return all(r.matches(labels) for r in reqs)
    return match

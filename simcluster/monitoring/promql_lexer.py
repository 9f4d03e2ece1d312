"""PromQL's tokens: numbers, durations, strings, identifiers and operators.

The `[...]` of a range selector or subquery is one token holding its inner text, which the
parser reads as a duration (or refuses as a subquery).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800,
                   "y": 31536000}
_DURATION_RE = re.compile(r"(?:[0-9]+(?:ms|[smhdwy]))+")
_DURATION_PART = re.compile(r"([0-9]+)(ms|[smhdwy])")
_NUMBER_RE = re.compile(r"0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_IDENT_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_OPERATORS = ("==", "!=", ">=", "<=", "=~", "!~", "+", "-", "*", "/", "%", "^", ">", "<",
              "=", "(", ")", "{", "}", ",", "@", ":")


class PromQLError(ValueError):
    """A query Prometheus would answer with 400 bad_data."""


def parse_duration(text: str) -> float:
    """Prometheus durations: `30s`, `5m`, `1h30m`, `2d`, `500ms`."""
    if not _DURATION_RE.fullmatch(text):
        raise PromQLError(f'not a valid duration string: "{text}"')
    total = sum(int(n) * _DURATION_UNITS[u] for n, u in _DURATION_PART.findall(text))
    if total <= 0:
        raise PromQLError(f'duration must be greater than 0: "{text}"')
    return float(total)


@dataclass
class Token:
    kind: str  # num dur str ident op range eof
    text: str
    pos: int
    value: object = None


def _unquote(query: str, start: int) -> tuple[str, int]:
    quote = query[start]
    out: list[str] = []
    i = start + 1
    escapes = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a",
               "b": "\b", "f": "\f", "v": "\v"}
    while i < len(query):
        ch = query[i]
        if ch == quote:
            return "".join(out), i + 1
        if ch == "\\" and quote != "`":
            i += 1
            if i >= len(query):
                break
            esc = query[i]
            if esc in escapes:
                out.append(escapes[esc])
            elif esc in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[esc]
                digits = query[i + 1:i + 1 + width]
                if len(digits) != width or not all(c in "0123456789abcdefABCDEF"
                                                   for c in digits):
                    raise PromQLError(f"{where(query, i)}: parse error: invalid escape "
                                      "sequence in string")
                out.append(chr(int(digits, 16)))
                i += width
            else:
                raise PromQLError(f"{where(query, i)}: parse error: unknown escape sequence "
                                  f"'\\{esc}'")
        elif ch == "\n" and quote != "`":
            break
        else:
            out.append(ch)
        i += 1
    raise PromQLError(f"{where(query, start)}: parse error: unterminated quoted string")


def where(query: str, pos: int) -> str:
    line = query.count("\n", 0, pos) + 1
    col = pos - (query.rfind("\n", 0, pos) + 1) + 1
    return f"{line}:{col}"


def tokenize(query: str) -> list[Token]:
    tokens: list[Token] = []
    i = 0
    n = len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
            continue
        if ch == "#":
            while i < n and query[i] != "\n":
                i += 1
            continue
        if ch in "\"'`":
            text, end = _unquote(query, i)
            tokens.append(Token("str", text, i))
            i = end
            continue
        if ch == "[":
            end = query.find("]", i)
            if end < 0:
                raise PromQLError(f"{where(query, i)}: parse error: unclosed left bracket")
            tokens.append(Token("range", query[i + 1:end].strip(), i))
            i = end + 1
            continue
        if ch.isdigit() or (ch == "." and i + 1 < n and query[i + 1].isdigit()):
            m = _DURATION_RE.match(query, i)
            if m and not (m.end() < n and (query[m.end()].isalnum() or query[m.end()] in "_.")):
                tokens.append(Token("dur", m.group(), i))
                i = m.end()
                continue
            m = _NUMBER_RE.match(query, i)
            assert m is not None
            text = m.group()
            value = float(int(text, 16)) if text[:2].lower() == "0x" else float(text)
            tokens.append(Token("num", text, i, value))
            i = m.end()
            continue
        m = _IDENT_RE.match(query, i)
        if m:
            tokens.append(Token("ident", m.group(), i))
            i = m.end()
            continue
        for op in _OPERATORS:
            if query.startswith(op, i):
                tokens.append(Token("op", op, i))
                i += len(op)
                break
        else:
            raise PromQLError(f"{where(query, i)}: parse error: unexpected character: "
                              f"{ch!r}")
    tokens.append(Token("eof", "", n))
    return tokens

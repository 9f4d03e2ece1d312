"""The PromQL subset simcluster's Prometheus API understands: lexer, parser and AST.

Supported (everything else is refused with a 400 `bad_data` naming what is missing,
never answered wrongly):

- numbers (`3`, `1.5e3`, `Inf`, `NaN`) and parentheses;
- instant vector selectors with label matchers `=`, `!=`, `=~`, `!~`
  (`DCGM_FI_DEV_GPU_UTIL{namespace="team-nlp", pod=~"train-.*"}`, `{__name__="up"}`);
- range selectors (`x[5m]`; durations `ms s m h d w y`, combinable as `1h30m`) as the
  argument of `rate`, `irate`, `increase`, `avg_over_time`, `max_over_time`,
  `min_over_time`
  (or alone at the top of an instant query, which returns the raw samples);
- aggregations `sum`, `avg`, `max`, `min`, `count` with `by (...)` or `without (...)`,
  written before or after the argument;
- `+ - * /` between scalars, between a vector and a scalar, and between two vectors
  whose series have identical label sets (one-to-one matching on all labels; the
  metric name is dropped, as Prometheus does), and unary minus.

Not supported: offset and `@` modifiers, subqueries, comparison and set operators
(`> == and or unless`...), `% ^ atan2`, `bool`, vector matching modifiers
(`on`, `ignoring`, `group_left`...), string literals, and every other function or
aggregation (`topk`, `histogram_quantile`, `label_replace`, ...).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from simcluster.monitoring.promql_lexer import PromQLError, Token, parse_duration, tokenize, where

SUPPORTED_FUNCTIONS = ("rate", "irate", "increase", "avg_over_time", "max_over_time",
                       "min_over_time")
SUPPORTED_AGGREGATIONS = ("sum", "avg", "max", "min", "count")

# Real PromQL names this subset refuses with a clear message (anything else is unknown).
OTHER_AGGREGATIONS = {"topk", "bottomk", "quantile", "count_values", "stddev", "stdvar",
                      "group", "limitk", "limit_ratio"}
OTHER_FUNCTIONS = {
    "abs", "absent", "absent_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh",
    "ceil", "changes", "clamp", "clamp_max", "clamp_min", "cos", "cosh", "count_over_time",
    "day_of_month", "day_of_week", "day_of_year", "days_in_month", "deg", "delta", "deriv",
    "double_exponential_smoothing", "exp", "floor", "histogram_avg", "histogram_count",
    "histogram_fraction", "histogram_quantile", "histogram_stddev", "histogram_stdvar",
    "histogram_sum", "holt_winters", "hour", "idelta", "info", "label_join", "label_replace",
    "last_over_time", "ln", "log10", "log2", "mad_over_time", "minute",
    "month", "pi", "predict_linear", "present_over_time", "quantile_over_time", "rad",
    "resets", "round", "scalar", "sgn", "sin", "sinh", "sort", "sort_by_label",
    "sort_by_label_desc", "sort_desc", "sqrt", "stddev_over_time", "stdvar_over_time",
    "sum_over_time", "tan", "tanh", "time", "timestamp", "vector", "year",
}
SET_OPERATORS = {"and", "or", "unless", "atan2"}
MATCHING_MODIFIERS = {"on", "ignoring", "group_left", "group_right"}

_LABEL_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class Unsupported(PromQLError):
    def __init__(self, what: str) -> None:
        super().__init__(f"simcluster's PromQL subset does not support {what}; it supports "
                         "label selectors, range selectors with "
                         f"{', '.join(SUPPORTED_FUNCTIONS)}, "
                         f"{'/'.join(SUPPORTED_AGGREGATIONS)} with by/without, and + - * / "
                         "between scalars and vectors")


# -- AST ------------------------------------------------------------------------------------
@dataclass
class Matcher:
    name: str
    op: str  # = != =~ !~
    value: str
    _regex: re.Pattern | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.op in ("=~", "!~"):
            try:
                self._regex = re.compile(self.value, re.DOTALL)
            except re.error as e:
                raise PromQLError(f"error parsing regexp: {e}: `{self.value}`") from None

    def matches(self, value: str) -> bool:
        if self.op == "=":
            return value == self.value
        if self.op == "!=":
            return value != self.value
        assert self._regex is not None
        found = self._regex.fullmatch(value) is not None
        return found if self.op == "=~" else not found


def matches_all(matchers: list[Matcher], labels: dict[str, str]) -> bool:
    return all(m.matches(labels.get(m.name, "")) for m in matchers)


@dataclass
class NumberLiteral:
    value: float


@dataclass
class VectorSelector:
    matchers: list[Matcher]


@dataclass
class MatrixSelector:
    vector: VectorSelector
    range: float


@dataclass
class Call:
    func: str
    arg: MatrixSelector


@dataclass
class Aggregate:
    op: str
    expr: Expr
    grouping: list[str]
    without: bool


@dataclass
class Unary:
    expr: Expr


@dataclass
class Binary:
    op: str
    lhs: Expr
    rhs: Expr


Expr = NumberLiteral | VectorSelector | MatrixSelector | Call | Aggregate | Unary | Binary


def value_type(node: Expr) -> str:
    """`scalar`, `vector` (instant vector) or `matrix` (range vector)."""
    if isinstance(node, NumberLiteral):
        return "scalar"
    if isinstance(node, MatrixSelector):
        return "matrix"
    if isinstance(node, Unary):
        return value_type(node.expr)
    if isinstance(node, Binary):
        both = {value_type(node.lhs), value_type(node.rhs)}
        return "scalar" if both == {"scalar"} else "vector"
    return "vector"


def selectors(node: Expr) -> list[VectorSelector]:
    """Every vector selector in the expression (for label enforcement)."""
    if isinstance(node, VectorSelector):
        return [node]
    if isinstance(node, MatrixSelector):
        return [node.vector]
    if isinstance(node, Call):
        return [node.arg.vector]
    if isinstance(node, (Aggregate, Unary)):
        return selectors(node.expr)
    if isinstance(node, Binary):
        return selectors(node.lhs) + selectors(node.rhs)
    return []


# -- parser -----------------------------------------------------------------------------------
class Parser:
    def __init__(self, query: str) -> None:
        self.query = query
        self.tokens = tokenize(query)
        self.i = 0

    # helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
        t = self.tok
        self.i += 1
        return t

    def error(self, message: str, tok: Token | None = None) -> PromQLError:
        t = tok or self.tok
        return PromQLError(f"{where(self.query, t.pos)}: parse error: {message}")

    def describe(self, t: Token) -> str:
        if t.kind == "eof":
            return "end of input"
        if t.kind == "str":
            return f'string "{t.text}"'
        if t.kind == "range":
            return f"[{t.text}]"
        return f'"{t.text}"'

    def expect(self, text: str, what: str) -> Token:
        if self.tok.kind == "op" and self.tok.text == text:
            return self.next()
        raise self.error(f"unexpected {self.describe(self.tok)} {what}")

    def is_op(self, *texts: str) -> bool:
        return self.tok.kind == "op" and self.tok.text in texts

    # grammar
    def parse(self) -> Expr:
        if self.tok.kind == "eof":
            raise self.error("no expression found in input")
        node = self.expression()
        if self.tok.kind != "eof":
            self.check_unsupported_operator()
            raise self.error(f"unexpected {self.describe(self.tok)}")
        return node

    def check_unsupported_operator(self) -> None:
        t = self.tok
        if t.kind == "op" and t.text in ("%", "^"):
            raise Unsupported(f'the "{t.text}" operator')
        if t.kind == "op" and t.text in ("==", "!=", ">", "<", ">=", "<="):
            raise Unsupported(f'comparison operators ("{t.text}")')
        if t.kind == "ident" and t.text.lower() in SET_OPERATORS:
            raise Unsupported(f'the "{t.text}" operator')
        if t.kind == "ident" and t.text.lower() == "offset":
            raise Unsupported("the offset modifier")
        if t.kind == "op" and t.text == "@":
            raise Unsupported("the @ modifier")

    def expression(self) -> Expr:
        node = self.term()
        while self.is_op("+", "-"):
            op = self.next().text
            self.check_modifiers()
            node = self.binary(op, node, self.term())
        self.check_unsupported_operator()
        return node

    def term(self) -> Expr:
        node = self.unary()
        while self.is_op("*", "/"):
            op = self.next().text
            self.check_modifiers()
            node = self.binary(op, node, self.unary())
        return node

    def check_modifiers(self) -> None:
        t = self.tok
        if t.kind == "ident" and t.text.lower() == "bool":
            raise Unsupported("the bool modifier")
        if t.kind == "ident" and t.text.lower() in MATCHING_MODIFIERS and \
                self.peek().kind == "op" and self.peek().text == "(":
            raise Unsupported(f"vector matching modifiers ({t.text}(...)); vectors are "
                              "matched only when their label sets are identical")

    def binary(self, op: str, lhs: Expr, rhs: Expr) -> Expr:
        for side in (lhs, rhs):
            if value_type(side) == "matrix":
                raise PromQLError("binary expression must contain only scalar and instant "
                                  "vector types")
        return Binary(op, lhs, rhs)

    def unary(self) -> Expr:
        if self.is_op("-", "+"):
            sign = self.next().text
            inner = self.unary()
            if value_type(inner) == "matrix":
                raise PromQLError("unary expression only allowed on expressions of type "
                                  "scalar or instant vector, got \"range vector\"")
            if sign == "+":
                return inner
            if isinstance(inner, NumberLiteral):
                return NumberLiteral(-inner.value)
            return Unary(inner)
        return self.postfix()

    def postfix(self) -> Expr:
        node = self.primary()
        if self.tok.kind == "range":
            t = self.next()
            if ":" in t.text:
                raise Unsupported(f"subqueries ([{t.text}])")
            if not isinstance(node, VectorSelector):
                raise self.error("ranges only allowed for vector selectors", t)
            try:
                node = MatrixSelector(node, parse_duration(t.text))
            except PromQLError as e:
                raise self.error(str(e), t) from None
        t = self.tok
        if (t.kind == "ident" and t.text.lower() == "offset") or (t.kind == "op" and
                                                                   t.text == "@"):
            self.check_unsupported_operator()
        return node

    def primary(self) -> Expr:
        t = self.tok
        if t.kind == "num":
            self.next()
            assert isinstance(t.value, float)
            return NumberLiteral(t.value)
        if t.kind == "dur":
            raise self.error(f"unexpected duration {t.text!r}")
        if t.kind == "str":
            raise Unsupported("string literals")
        if t.kind == "range":
            raise self.error(f"unexpected [{t.text}]")
        if self.is_op("("):
            self.next()
            node = self.expression()
            self.expect(")", 'in paren expression, expected ")"')
            return node
        if self.is_op("{"):
            return self.selector(None)
        if t.kind == "ident":
            return self.identifier()
        raise self.error(f"unexpected {self.describe(t)}")

    def identifier(self) -> Expr:
        t = self.tok
        name = t.text
        lower = name.lower()
        follows = self.peek()
        opens = follows.kind == "op" and follows.text == "("
        grouping_next = follows.kind == "ident" and follows.text.lower() in ("by", "without")
        if lower in SUPPORTED_AGGREGATIONS and (opens or grouping_next):
            return self.aggregation()
        if lower in OTHER_AGGREGATIONS and (opens or grouping_next):
            raise Unsupported(f"the {lower} aggregation")
        if opens:
            if name in SUPPORTED_FUNCTIONS:
                return self.call()
            if name in OTHER_FUNCTIONS:
                raise Unsupported(f"the function {name}()")
            raise self.error(f'unknown function with name "{name}"')
        if lower in ("inf", "nan"):
            self.next()
            return NumberLiteral(math.inf if lower == "inf" else math.nan)
        return self.selector(name)

    def grouping(self) -> tuple[list[str], bool]:
        without = self.next().text.lower() == "without"
        self.expect("(", "in grouping opts, expected \"(\"")
        labels: list[str] = []
        while not self.is_op(")"):
            t = self.next()
            if t.kind != "ident" or not _LABEL_RE.fullmatch(t.text):
                raise self.error(f"unexpected {self.describe(t)} in grouping opts, expected "
                                 "label", t)
            labels.append(t.text)
            if self.is_op(","):
                self.next()
            elif not self.is_op(")"):
                raise self.error(f"unexpected {self.describe(self.tok)} in grouping opts, "
                                 'expected "," or ")"')
        self.next()
        return labels, without

    def aggregation(self) -> Expr:
        op = self.next().text.lower()
        grouping: tuple[list[str], bool] | None = None
        if self.tok.kind == "ident" and self.tok.text.lower() in ("by", "without"):
            grouping = self.grouping()
        self.expect("(", 'in aggregation, expected "("')
        if self.is_op(")"):
            raise self.error("no arguments for aggregate expression provided")
        expr = self.expression()
        if self.is_op(","):
            raise self.error("wrong number of arguments for aggregate expression provided, "
                             "expected 1, got 2")
        self.expect(")", 'in aggregation, expected ")"')
        if self.tok.kind == "ident" and self.tok.text.lower() in ("by", "without"):
            if grouping is not None:
                raise self.error("aggregation can only have one grouping clause")
            grouping = self.grouping()
        kind = value_type(expr)
        if kind != "vector":
            raise PromQLError(f"expected type instant vector in aggregation expression, got "
                              f"{'range vector' if kind == 'matrix' else kind}")
        labels, without = grouping or ([], False)
        return Aggregate(op, expr, labels, without)

    def call(self) -> Expr:
        name = self.next().text
        self.next()  # (
        args: list[Expr] = []
        while not self.is_op(")"):
            args.append(self.expression())
            if self.is_op(","):
                self.next()
            elif not self.is_op(")"):
                raise self.error(f"unexpected {self.describe(self.tok)} in function call, "
                                 'expected "," or ")"')
        self.next()
        if len(args) != 1:
            raise PromQLError(f'expected 1 argument(s) in call to "{name}", got {len(args)}')
        arg = args[0]
        if not isinstance(arg, MatrixSelector):
            kind = value_type(arg)
            raise PromQLError(f'expected type range vector in call to function "{name}", got '
                              f"{'instant vector' if kind == 'vector' else kind}")
        return Call(name, arg)

    def selector(self, name: str | None) -> VectorSelector:
        start = self.tok
        matchers: list[Matcher] = []
        if name is not None:
            self.next()
            matchers.append(Matcher("__name__", "=", name))
        if self.is_op("{"):
            self.next()
            while not self.is_op("}"):
                matchers.append(self.matcher())
                if self.is_op(","):
                    self.next()
                elif not self.is_op("}"):
                    raise self.error(f"unexpected {self.describe(self.tok)} in label matching, "
                                     'expected "," or "}"')
            self.next()
        if name is not None and any(m.name == "__name__" for m in matchers[1:]):
            raise self.error(f"metric name must not be set twice: \"{name}\"", start)
        if not any(not m.matches("") for m in matchers):
            raise self.error("vector selector must contain at least one non-empty matcher",
                             start)
        return VectorSelector(matchers)

    def matcher(self) -> Matcher:
        t = self.next()
        if t.kind != "ident" or not _LABEL_RE.fullmatch(t.text):
            raise self.error(f"unexpected {self.describe(t)} in label matching, expected "
                             "label", t)
        op = self.next()
        if op.kind != "op" or op.text not in ("=", "!=", "=~", "!~"):
            raise self.error(f"unexpected {self.describe(op)} in label matching, expected "
                             "label matching operator", op)
        value = self.next()
        if value.kind != "str":
            raise self.error(f"unexpected {self.describe(value)} in label matching, expected "
                             "string", value)
        return Matcher(t.text, op.text, value.text)


def parse(query: str) -> Expr:
    return Parser(query).parse()

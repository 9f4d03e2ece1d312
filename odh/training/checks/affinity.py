"""Node affinity as the wizard writes it, one required node label per line beside the node
selector: `key In value1,value2`, `key NotIn value`, `key Exists`, `key DoesNotExist`. All
lines must hold (one term of the pod's required node affinity); how they are read and
written, and what is wrong with them."""

from __future__ import annotations

from odh.training.checks.rules_job import Findings, text
from odh.training.checks.syntax import label_value_problem, qualified_name_problem
from odh.training.findings import FieldError, ValidationContext
from odh.training.i18n import _, shown
from odh.training.kinds.jobspec import NODE_OPERATORS, NodeRequirement
from odh.training.spec import JobSpec

EXAMPLE = "topology.kubernetes.io/zone In us-east-1a,us-east-1b"
_OPERATORS = {op.lower(): op for op in NODE_OPERATORS}
_WITH_VALUES = ("In", "NotIn")


def requirement_text(requirement: NodeRequirement) -> str:
    words = [requirement.key, requirement.operator]
    if requirement.values:
        words.append(",".join(requirement.values))
    return " ".join(words)


def node_affinity_text(requirements: list[NodeRequirement]) -> str:
    return "\n".join(requirement_text(r) for r in requirements)


def read_node_affinity(raw: str) -> tuple[list[NodeRequirement], list[str]]:
    """The requirements of lines written as `requirement_text` writes them (the operator in
    any case), and a message for each line that is not one."""
    found, problems = [], []
    for number, line in enumerate(raw.splitlines(), start=1):
        words = line.split(None, 2)
        if not words:
            continue
        operator = _OPERATORS.get(words[1].lower()) if len(words) > 1 else None
        if operator is None:
            problems.append(_(
                "Line %(number)d (“%(line)s”) is not a node requirement: write a node label's "
                "key, then In, NotIn, Exists or DoesNotExist, then the values for In and "
                "NotIn separated by commas, e.g. %(example)s.")
                % {"number": number, "line": shown(line.strip()), "example": EXAMPLE})
            continue
        values = [v.strip() for v in words[2].split(",") if v.strip()] if len(words) > 2 else []
        found.append(NodeRequirement(key=words[0], operator=operator, values=values))
    return found, problems


def check_node_affinity(spec: JobSpec, context: ValidationContext) -> Findings:
    for requirement in getattr(spec, "node_affinity", None) or []:
        key, operator = text(requirement.key), text(requirement.operator)
        values = {"key": shown(key), "operator": operator, "example": EXAMPLE}
        problem = qualified_name_problem(key)
        if problem:
            yield FieldError("node_affinity", _(
                'Node label key "%(key)s" is not valid: %(problem)s.')
                % dict(values, problem=problem))
        elif operator not in NODE_OPERATORS:
            yield FieldError("node_affinity", _(
                '"%(operator)s" is not an operator of node affinity: use In, NotIn, Exists or '
                "DoesNotExist.") % values)
        elif operator in _WITH_VALUES and not requirement.values:
            yield FieldError("node_affinity", _(
                "%(key)s %(operator)s needs values: add them after the operator, separated by "
                "commas, e.g. %(example)s.") % values)
        elif operator not in _WITH_VALUES and requirement.values:
            yield FieldError("node_affinity", _(
                "%(key)s %(operator)s takes no values: remove them, or use In or NotIn.")
                % values)
        for value in requirement.values:
            problem = label_value_problem(text(value))
            if problem:
                yield FieldError("node_affinity", _(
                    'Node label value "%(value)s" (for %(key)s) is not valid: %(problem)s.')
                    % dict(values, value=shown(text(value)), problem=problem))

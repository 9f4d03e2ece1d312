"""kubectl's label selectors, matched here (odh.training.status.lists.selectors)."""

from __future__ import annotations

import pytest

from odh.training.status.lists.selectors import SelectorError, parse_selector


@pytest.mark.parametrize("selector, labels, matches", [
    ("team=nlp", {"team": "nlp"}, True),
    ("team==nlp", {"team": "cv"}, False),
    ("team!=nlp", {}, True),  # != matches a job without the label, as Kubernetes has it
    ("team=nlp,tier!=test", {"team": "nlp", "tier": "test"}, False),
    ("gpu", {"gpu": ""}, True),
    ("!spot", {"spot": "yes"}, False),
    ("env in (a, b)", {"env": "b"}, True),
    ("env notin (a,b),team", {"env": "c", "team": "x"}, True),
    ("app.kubernetes.io/part-of=odh", {"app.kubernetes.io/part-of": "odh"}, True),
])
def test_a_selector_matches_as_kubectl_s(selector, labels, matches):
    assert parse_selector(selector).matches(labels) is matches


@pytest.mark.parametrize("selector", ["=nlp", "team in nlp", "team=a b", "a,,b"])
def test_a_selector_that_cannot_be_read_says_how_to_write_one(selector):
    with pytest.raises(SelectorError, match="is not a label selector: write KEY=VALUE"):
        parse_selector(selector)

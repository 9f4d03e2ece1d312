"""odh.training.checks.syntax's text forms: key=value lines, tolerations, commands,
whole numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odh.training.checks.syntax import (
    command_text,
    pairs_text,
    read_command,
    read_pairs,
    read_tolerations,
    read_whole_number,
    shown,
    toleration_text,
    tolerations_text,
)
from odh.training.spec import Toleration


@pytest.mark.parametrize(("raw", "number"), [("2", 2), (" +3 ", 3), ("-1", -1), ("", None),
                                             ("   ", None)])
def test_whole_numbers_are_read(raw, number):
    assert read_whole_number(raw) == (number, "")


def test_what_is_not_a_whole_number_says_why():
    assert read_whole_number("two") == (
        None, "“two” is not a whole number: enter digits only, e.g. 2.")
    assert read_whole_number("1.5")[1].startswith("“1.5” is not a whole number")
    assert read_whole_number("9" * 19) == (
        None, "This number is far too large: enter a value below 1000000.")
    assert read_whole_number("9" * 18) == (int("9" * 18), "")


def test_pairs_are_read_line_by_line_and_bad_lines_named():
    pairs, problems = read_pairs(" team = nlp \n\nzone=a=b\nnonsense\n=x")
    assert pairs == {"team": "nlp", "zone": "a=b"}
    assert problems == [
        "Line 4 (“nonsense”) is not key=value: write one key=value pair per line.",
        "Line 5 (“=x”) is not key=value: write one key=value pair per line."]
    assert pairs_text({"a": "1", "b": ""}) == "a=1\nb="
    assert read_pairs(pairs_text({"a": "1", "b": ""})) == ({"a": "1", "b": ""}, [])


def test_long_lines_are_shortened_in_messages():
    _pairs, problems = read_pairs("x" * 100)
    assert f"(“{shown('x' * 100)}”)" in problems[0]
    assert len(shown("x" * 100)) == 40


def test_tolerations_are_written_and_read_in_every_form():
    tolerations = [Toleration("nvidia.com/gpu", "Exists", effect="NoSchedule"),
                   Toleration("k", "Equal", "v", "NoExecute", 30),
                   Toleration("", "Exists"),
                   Toleration("dedicated", "Equal", "")]
    text = tolerations_text(tolerations)
    assert text == "nvidia.com/gpu:NoSchedule\nk=v:NoExecute for 30s\n*\ndedicated="
    assert read_tolerations(text) == (tolerations, [])
    assert toleration_text(Toleration("gpu", "Exists")) == "gpu"


def test_what_is_not_a_toleration_says_how_to_write_one():
    tolerations, problems = read_tolerations("gpu:NoSchedule\n=:\nk=v:NoSchedule for ever")
    assert tolerations == [Toleration("gpu", "Exists", effect="NoSchedule")]
    assert problems == [
        "Line 2 (“=:”) is not a toleration: write key=value:Effect, key:Effect or key, e.g. "
        "nvidia.com/gpu=present:NoSchedule.",
        "Line 3 (“k=v:NoSchedule for ever”) is not a toleration: write key=value:Effect, "
        "key:Effect or key, e.g. nvidia.com/gpu=present:NoSchedule."]


def test_commands_are_split_as_a_shell_would():
    command = ["mpirun", "-np", "4", "python", "/w/a b.py", "--x='y'"]
    assert command_text(command) == "mpirun -np 4 python '/w/a b.py' '--x='\"'\"'y'\"'\"''"
    assert read_command(command_text(command)) == (command, "")
    assert command_text([]) == ""
    assert read_command("") == ([], "")


def test_an_unclosed_quote_is_split_at_spaces_and_named():
    assert read_command("python 'unclosed x") == (
        ["python", "'unclosed", "x"],
        "The command has a quote that is never closed: close it, or put a backslash before "
        "a quote that is part of an argument.")


_key = st.from_regex(r"[a-z][a-z0-9.-]{0,10}(/[a-z]{1,5})?", fullmatch=True)
_value = st.from_regex(r"[A-Za-z0-9_.-]{0,10}", fullmatch=True)
_word = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(command=st.lists(_word, max_size=5), pairs=st.dictionaries(_key, _value, max_size=3),
       tolerations=st.lists(st.builds(
           Toleration, key=_key, operator=st.sampled_from(["Equal", "Exists"]),
           value=_value, effect=st.sampled_from(["", "NoSchedule", "NoExecute"]),
           seconds=st.none() | st.integers(0, 10**6)), max_size=3))
def test_any_text_form_reads_back_what_wrote_it(command, pairs, tolerations):
    tolerations = [t for t in tolerations if not (t.operator == "Exists" and t.value)]
    assert read_command(command_text(command)) == (command, "")
    assert read_pairs(pairs_text(pairs)) == (pairs, [])
    assert read_tolerations(tolerations_text(tolerations)) == (tolerations, [])

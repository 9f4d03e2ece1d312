"""A job's own log patterns (the annotation opendatahub.io/metric-patterns): what they
read, what a reader keeps from them, and what a wrong one is told."""

from __future__ import annotations

import pytest

from odh.training.logs.curves import CurveReader, read_curves
from odh.training.manifests.metric_patterns import (
    ANNOTATION,
    compile_pattern,
    job_patterns,
    parse_patterns,
)

FAIRSEQ = ["| epoch 001 | valid on 'valid' subset | loss 9.1 | ppl 551.2",
           "Iter 100 | bleu 12.5 | wps 5400",
           "Iter 200 | bleu 17.25 | wps 5550",
           "validation after epoch 1: ppl 81.5E+0"]


def test_it_reads_the_numbers_where_the_fields_are():
    pattern = compile_pattern("Iter {step} | bleu {bleu} | wps {words_per_sec}")
    assert pattern.read("2024-01-01 INFO Iter 100 | bleu 12.5 | wps 5400") == \
        (100.0, None, [("bleu", 12.5), ("words_per_sec", 5400.0)])
    assert pattern.read("iter 100|bleu 12.5|wps 5400")[2][0] == ("bleu", 12.5)  # spaces, case
    assert pattern.read("Iter 100 | bleu n/a | wps 5400") is None


def test_a_star_stands_for_any_text():
    pattern = compile_pattern("epoch {epoch} * ppl {val_ppl}")
    assert pattern.read("validation after epoch 2, on 5 shards: ppl 1.5E-01") == \
        (None, 2.0, [("val_ppl", 0.15)])


def test_a_reader_keeps_the_declared_metrics_and_reads_other_lines_as_usual():
    templates = ["Iter {step} | bleu {bleu} | wps {wps}",
                 "validation after epoch {epoch}: ppl {val_ppl}"]
    reader = read_curves(FAIRSEQ + ["step 300: loss=0.5"], templates)
    points = {s.name: [(q[0], q[1], q[2]) for q in s.points] for s in reader.series.values()}
    assert points["bleu"] == [(100, None, 12.5), (200, None, 17.25)]
    assert points["wps"] == [(100, None, 5400.0), (200, None, 5550.0)]
    assert points["val_ppl"] == [(None, 1.0, 81.5)]
    # lines no pattern matches: read as usual
    assert points["loss"] == [(None, 1.0, 9.1), (300, None, 0.5)]
    # without the patterns, the Iter lines say nothing the usual patterns read as a step
    assert "bleu" not in read_curves(FAIRSEQ).names


def test_the_patterns_are_kept_with_the_readers_state():
    reader = CurveReader(patterns=["Iter {step} | bleu {bleu}"])
    again = CurveReader(reader.state())
    again.feed(["Iter 5 | bleu 3"])
    assert again.names == ["bleu"]


@pytest.mark.parametrize(("template", "says"), [
    ("bleu {bleu}", "{step} or {epoch}"),
    ("Iter {step}", "names no metric"),
    ("Iter {step} {1st}", "starting with a letter"),
    ("Iter {step} {loss} {loss}", "twice"),
    ("* Iter * {step} * {loss} *", "more than 3"),
    ("Iter {step} " + "x" * 200 + " {loss}", "longer than 200"),
])
def test_a_wrong_pattern_says_what_to_change(template, says):
    with pytest.raises(ValueError, match=None) as wrong:
        compile_pattern(template)
    assert says in str(wrong.value)


def test_too_many_patterns_are_refused_and_a_job_with_wrong_ones_reads_none():
    with pytest.raises(ValueError) as wrong:
        parse_patterns("\n".join(f"a{i} {{step}} {{m}}" for i in range(9)))
    assert "at most 8" in str(wrong.value)
    assert job_patterns({"metadata": {"annotations": {ANNOTATION: "bleu {bleu}"}}}) == ()
    assert job_patterns({"metadata": {"annotations": {ANNOTATION: "\nIter {step} b {b}\n"}}}) \
        == ("Iter {step} b {b}",)
    assert job_patterns({"metadata": {}}) == ()


def test_a_pattern_cannot_make_a_long_line_expensive():
    pattern = compile_pattern("a * a * a * {step} {loss}")
    assert pattern.read("a " * 5000) is None  # bounded: the first LINE_LIMIT characters

"""Kubernetes quantities: parsing every suffix, formatting in the product's vocabulary."""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal

import pytest

from odh.training.quantity import (
    QuantityError,
    container_requests,
    display_memory,
    format_cpu,
    format_memory,
    format_resources,
    parse_quantity,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("2", Decimal(2)), ("0.5", Decimal("0.5")), (".5", Decimal("0.5")), ("5.", Decimal(5)),
    ("+3", Decimal(3)), ("-1", Decimal(-1)),
    ("500m", Decimal("0.5")), ("250u", Decimal("0.00025")), ("3n", Decimal("3e-9")),
    ("1k", Decimal(1000)), ("2M", Decimal(2_000_000)), ("16G", Decimal(16 * 10**9)),
    ("1T", Decimal(10**12)), ("1P", Decimal(10**15)), ("1E", Decimal(10**18)),
    ("1Ki", Decimal(1024)), ("512Mi", Decimal(512 * 2**20)), ("16Gi", Decimal(16 * 2**30)),
    ("1Ti", Decimal(2**40)), ("1Pi", Decimal(2**50)), ("1Ei", Decimal(2**60)),
    ("1.5Gi", Decimal(3 * 2**29)),
    ("1e3", Decimal(1000)), ("1E3", Decimal(1000)), ("5e-3", Decimal("0.005")),
    (" 2Gi ", Decimal(2 * 2**30)),
])
def test_parse_every_suffix(text, expected):
    assert parse_quantity(text) == expected


def test_parse_numbers_as_yaml_gives_them():
    assert parse_quantity(1) == 1
    assert parse_quantity(0.5) == Decimal("0.5")
    assert parse_quantity(Decimal("2.5")) == Decimal("2.5")


@pytest.mark.parametrize("bad", ["16GB", "", "Gi", "1 Gi", "1gi", "1e", "one", "1.2.3", "--1"])
def test_parse_rejects_with_a_message_that_says_how_to_fix(bad):
    with pytest.raises(QuantityError) as info:
        parse_quantity(bad)
    assert f'"{bad}" is not a Kubernetes quantity' in str(info.value)
    assert "500m, 2, 16Gi or 512Mi" in str(info.value)


def test_parse_suggests_the_binary_unit_for_a_familiar_mistake():
    with pytest.raises(QuantityError, match=r"did you mean 16Gi\?"):
        parse_quantity("16GB")


@pytest.mark.parametrize("huge", ["1e999999999", "9" * 5000 + "Ei", "8Ei", 10**30])
def test_parse_rejects_what_no_cluster_could_hold_with_a_short_message(huge):
    with pytest.raises(QuantityError, match="too large for a Kubernetes quantity") as info:
        parse_quantity(huge)
    assert len(str(info.value)) < 120


@pytest.mark.parametrize("odd", ["NaN", "Infinity", Decimal("NaN"), float("inf"), None, [1]])
def test_parse_rejects_values_that_are_not_numbers(odd):
    with pytest.raises(QuantityError):
        parse_quantity(odd)


def test_parse_is_exact_at_the_extremes():
    assert parse_quantity("1n") == Decimal("1e-9")
    assert parse_quantity("7Ei") == 7 * 2**60
    assert parse_quantity("123456789.123456789") == Decimal("123456789.123456789")


def test_quantity_error_is_a_value_error_and_rejects_booleans():
    with pytest.raises(ValueError):
        parse_quantity(True)


@pytest.mark.parametrize(("value", "text"), [
    (Decimal(8), "8"), (Decimal("0.5"), "500m"), (Decimal("1.25"), "1250m"),
    (Decimal("0.0005"), "0.0005"), (Decimal(0), "0"),
])
def test_format_cpu(value, text):
    assert format_cpu(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (32 * 2**30, "32Gi"), (512 * 2**20, "512Mi"), (3 * 2**29, "1.5Gi"),
    (5 * 2**28, "1.25Gi"), (2**40, "1Ti"), (1024, "1Ki"),
    (16 * 10**9, "16G"), (1000, "1k"), (1000 * 1024, "1000Ki"), (100, "100"), (0, "0"),
])
def test_format_memory(value, text):
    assert format_memory(Decimal(value)) == text


@pytest.mark.parametrize(("value", "text"), [
    # what format_memory writes short and exact stays exact
    (3 * 2**39, "1.5Ti"), (984 * 2**30, "984Gi"), (16 * 10**9, "16G"), (0, "0"),
    # and a whole figure of four digits, as people write requests
    (1400 * 2**30, "1400Gi"), (4500 * 2**20, "4500Mi"),
    # the rest rounded to three figures in the largest binary unit, not "1088256Mi"
    (1088256 * 2**20, "1.04Ti"), (1221608 * 2**20, "1.17Ti"), (4500 * 2**20 + 1, "4.39Gi"),
    (int(523.456 * 2**30), "523Gi"), (1000 * 1024 + 1, "1000Ki"), (1023 * 2**30 + 2**30 - 1, "1Ti"),
    (1500, "1.5k"), (1501, "1.47Ki"), (999, "999"),
])
def test_display_memory_is_short_and_rounded_where_it_cannot_be_exact(value, text):
    assert display_memory(Decimal(value)) == text


def test_display_memory_rounds_room_left_down():
    assert display_memory(Decimal(1088256 * 2**20), ROUND_FLOOR) == "1.03Ti"
    assert display_memory(Decimal(2**40 - 1), ROUND_FLOOR) == "1023Gi"
    assert format_memory(Decimal(1088256 * 2**20)) == "1088256Mi"  # exact, for specs


def test_format_resources_in_the_vocabulary():
    assert format_resources(Decimal(8), Decimal(32 * 2**30), 1) == "8 CPU, 32Gi, 1 GPU"
    assert format_resources(Decimal("0.5"), Decimal(512 * 2**20), 2) == "500m CPU, 512Mi, 2 GPUs"
    assert format_resources(Decimal(4), None, None) == "4 CPU"
    assert format_resources(None, Decimal(2**30), 0) == "1Gi"
    assert format_resources(None, None, None) == ""


def test_container_requests_fall_back_to_limits():
    container = {"resources": {"requests": {"cpu": "500m"},
                               "limits": {"cpu": 2, "memory": "4Gi", "nvidia.com/gpu": 1}}}
    assert container_requests(container) == {
        "cpu": Decimal("0.5"), "memory": Decimal(4 * 2**30), "nvidia.com/gpu": Decimal(1)}


def test_container_requests_of_a_container_without_resources_is_empty():
    assert container_requests({"name": "worker"}) == {}
    assert container_requests({"resources": {"limits": {"cpu": "lots"}}}) == {}

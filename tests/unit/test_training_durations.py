"""Durations as "2h 15m 43s" and Kubernetes timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from odh.training.durations import age, format_duration, parse_timestamp, rough_duration


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (-5, "0s"), (0.9, "0s"), (7, "7s"), (60, "1m 0s"), (61.7, "1m 1s"),
    (3600, "1h 0m 0s"), (2 * 3600 + 15 * 60 + 43, "2h 15m 43s"), (3723, "1h 2m 3s"),
    (86399, "23h 59m 59s"), (86400, "1d 0h 0m"), (3 * 86400 + 4 * 3600 + 12 * 60 + 59, "3d 4h 12m"),
])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("2024-05-01T10:00:00Z", datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)),
    ("2024-05-01T10:00:00.5Z", datetime(2024, 5, 1, 10, 0, 0, 500000, tzinfo=UTC)),
    ("2024-05-01T10:00:00.123456789Z", datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC)),
    ("2024-05-01T12:00:00+02:00", datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)),
    ("2024-05-01T10:00:00.25-01:30", datetime(2024, 5, 1, 11, 30, 0, 250000, tzinfo=UTC)),
    ("2024-05-01t10:00:00z", datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC)),
])
def test_parse_timestamp_gives_aware_utc(text, expected):
    parsed = parse_timestamp(text)
    assert parsed == expected
    assert parsed.tzinfo == UTC


@pytest.mark.parametrize("text", [None, "", "yesterday", "2024-05-01", "2024-05-01T10:00Z",
                                  "2024-13-01T10:00:00Z"])
def test_parse_timestamp_of_nothing_or_garbage_is_none(text):
    assert parse_timestamp(text) is None


def test_parse_timestamp_passes_datetimes_through_as_utc():
    local = datetime(2024, 5, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert parse_timestamp(local) == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def test_age():
    now = datetime(2024, 5, 1, 12, 15, 43, tzinfo=UTC)
    assert age("2024-05-01T10:00:00Z", now) == "2h 15m 43s"
    assert age(datetime(2024, 4, 28, 8, 3, tzinfo=UTC), now) == "3d 4h 12m"
    assert age(None, now) == ""
    assert age("2024-05-01T13:00:00Z", now) == "0s"  # clock skew: not negative


@pytest.mark.parametrize(("seconds", "said"), [
    (12, "1m"), (600, "10m"), (1499, "25m"), (3600, "1h"), (16692, "4h 40m"),
    (16 * 3600 + 58 * 60, "17h"), (100_000, "1d 4h")])
def test_an_estimate_is_said_no_more_precisely_than_it_is(seconds, said):
    assert rough_duration(seconds) == said

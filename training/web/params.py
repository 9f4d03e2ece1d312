"""Numbers and dates from a query string or a form, read with bounds: what is not one
(a superscript "²" passes str.isdigit, a 5,000-digit number breaks int(), a year 9999
breaks date arithmetic) reads as nothing, never as an error page."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

MAX_INDEX_DIGITS = 9
# dates a person can mean: the day after must still be a date, a timestamp a float
LATEST_DATE = date(9000, 1, 1)
EARLIEST_DATE = date(1970, 1, 1)


def index(value: object, digits: int = MAX_INDEX_DIGITS) -> int | None:
    """A non-negative whole number written in ASCII digits ("3"), of at most `digits`
    digits (small, unless said), else None."""
    if not isinstance(value, str) or not value.isascii() or not value.isdigit():
        return None
    if len(value) > digits:
        return None
    return int(value)


def in_range(day: date | None) -> bool:
    return day is None or EARLIEST_DATE <= day <= LATEST_DATE


def timestamp_in_range(seconds: float | None) -> bool:
    """A time (seconds since the epoch) between 1970 and the year 9000."""
    if seconds is None:
        return True
    latest = datetime.combine(LATEST_DATE, datetime.min.time(), tzinfo=UTC).timestamp()
    return 0 <= seconds <= latest


def day_after(day: date) -> date:
    return day + timedelta(days=1)

"""A line for the person on standard error."""

from __future__ import annotations

import sys


def err(text: str) -> None:
    sys.stderr.write(text.rstrip("\n") + "\n")

"""`make demo` runs simcluster as the API server runs on OpenShift in the way that matters for
a demo left running: Events expire an hour after their last update, so the demo's Events
(and every job page that lists them) do not grow without end."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _demo():
    spec = importlib.util.spec_from_file_location("demo_script", ROOT / "scripts" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_it_gives_the_demo_cluster_an_event_ttl_of_an_hour():
    argv = _demo().simcluster_command({"api": 6443, "oauth": 6444, "prometheus": 9090})
    assert argv[argv.index("--event-ttl") + 1] == "3600"
    assert "--event-ttl 3600" in (ROOT / "Makefile").read_text()  # `make simcluster` too

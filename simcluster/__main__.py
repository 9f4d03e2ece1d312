"""`python -m simcluster serve --scenario demo`: run a simulated cluster."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from simcluster.server import Options, run


def _positive_float(value: str) -> float:
    try:
        f = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if f <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0, e.g. 1 (real time) or 10")
    return f


def _port(value: str) -> int:
    try:
        p = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number") from None
    if not 0 <= p <= 65535:
        raise argparse.ArgumentTypeError("a port is 0..65535")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simcluster",
                                     description="A simulated OpenShift cluster with the "
                                     "Kubeflow MPI Operator.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the cluster until SIGINT/SIGTERM")
    serve.add_argument("--scenario", default="demo",
                       help="scenario name in simcluster/scenarios or a YAML path (default demo)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=6443, help="HTTPS API port (6443)")
    serve.add_argument("--oauth-port", type=_port, default=6080,
                       help="plain-http OAuth login pages for browsers (6080)")
    serve.add_argument("--prometheus-port", type=_port, default=9091,
                       help="HTTPS Prometheus query API (9091)")
    serve.add_argument("--speed", type=_positive_float, default=1.0,
                       help="how many times faster than real time jobs run (1)")
    serve.add_argument("--state-dir", type=Path, default=Path(".simcluster"),
                       help="certificates, tokens and kubeconfigs (.simcluster/)")
    serve.add_argument("--watch-history", type=int, default=10000,
                       help="changes kept for watches to resume from; older resourceVersions "
                       "get 410 Gone (10000)")
    serve.add_argument("--bookmark-interval", type=_positive_float, default=5.0,
                       help="seconds between watch BOOKMARK events (5)")
    serve.add_argument("--event-ttl", type=float, default=0.0, metavar="SECONDS",
                       help="delete Events not updated for this long, as the API server's "
                       "--event-ttl (an hour there); 0 keeps them, the scenario's past "
                       "included (0)")
    serve.add_argument("--prometheus-drop", default="", metavar="REGEX",
                       help="leave out the series whose metric name matches REGEX (whole), as "
                       "a scrape's metric_relabel_configs `action: drop` does, e.g. "
                       "'container_(network|fs)_.*' for a cluster without network and disk "
                       "series ('')")
    args = parser.parse_args(argv)
    try:
        re.compile(args.prometheus_drop)
    except re.error as e:
        parser.error(f"--prometheus-drop: {e}")
    return run(Options(scenario=args.scenario, host=args.host, port=args.port,
                       oauth_port=args.oauth_port, prometheus_port=args.prometheus_port,
                       speed=args.speed, state_dir=args.state_dir,
                       history_size=args.watch_history,
                       bookmark_interval=args.bookmark_interval,
                       event_ttl=max(0.0, args.event_ttl),
                       prometheus_drop=args.prometheus_drop))


if __name__ == "__main__":
    sys.exit(main())

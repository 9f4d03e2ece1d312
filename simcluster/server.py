"""Run simcluster: the HTTPS API (with OAuth), the plain-http OAuth pages for browsers on
loopback, and the Prometheus query API."""

from __future__ import annotations

import asyncio
import logging
import signal
import ssl
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from simcluster import scenario
from simcluster.access import pki
from simcluster.apiserver.api import Api
from simcluster.cluster import Cluster
from simcluster.monitoring.prometheus import build_app as build_prometheus_app

log = logging.getLogger("simcluster")


@dataclass
class Options:
    scenario: str = "demo"
    host: str = "127.0.0.1"
    port: int = 6443
    oauth_port: int = 6080
    prometheus_port: int = 9091
    speed: float = 1.0
    state_dir: Path = Path(".simcluster")
    history_size: int = 10000
    bookmark_interval: float = 5.0
    event_ttl: float = 0.0  # seconds; 0 keeps Events
    prometheus_drop: str = ""  # metric names (a regex, matched whole) Prometheus never has


@web.middleware
async def _server_header(request: web.Request, handler):
    resp = await handler(request)
    resp.headers.setdefault("Audit-Id", request.headers.get("X-Request-Id", ""))
    return resp


def build_api_app(cluster: Cluster) -> web.Application:
    api = Api(cluster)
    app = web.Application(client_max_size=8 * 1024 * 1024)
    app.on_response_prepare.append(cluster.request_metrics.on_response_prepare)
    app.add_routes(cluster.oauth.routes())
    app.router.add_route("*", "/{tail:.*}", api.handle)
    return app


def build_oauth_app(cluster: Cluster) -> web.Application:
    app = web.Application()
    app.add_routes(cluster.oauth.routes())

    async def root(request: web.Request) -> web.Response:
        return web.Response(text="simcluster OAuth server: sign in through an application.\n")

    app.router.add_get("/", root)
    return app


def _ssl_context(cert: Path, key: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    return ctx


class Server:
    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.cluster: Cluster | None = None
        self._runners: list[web.AppRunner] = []

    @property
    def api_url(self) -> str:
        host = self.opts.host if ":" not in self.opts.host else f"[{self.opts.host}]"
        return f"https://{host}:{self.opts.port}"

    async def start(self) -> None:
        started = time.monotonic()
        opts = self.opts
        state_dir = opts.state_dir
        hosts = sorted({"127.0.0.1", "localhost", "::1", opts.host} - {"0.0.0.0", "::"})
        ca, cert, key = pki.ensure_certificates(state_dir, hosts)
        host = opts.host if opts.host not in ("0.0.0.0", "::") else "127.0.0.1"
        path = scenario.resolve(opts.scenario)
        data = scenario.load_file(path)
        cluster = Cluster(speed=opts.speed,
                          optional_apis=list(data.get("apis") or []),
                          api_url=self.api_url.replace(opts.host, host),
                          oauth_browser_url=f"http://{host}:{opts.oauth_port}",
                          history_size=opts.history_size,
                          bookmark_interval=opts.bookmark_interval)
        self.cluster = cluster
        creds = scenario.load(cluster, data, state_dir)
        cluster.events.ttl = opts.event_ttl  # after the scenario: its past stays
        cluster.manager.running = True
        cluster.clock.start()
        cluster.manager.pump()

        kubeconfigs = {}
        for name, token in creds.tokens.items():
            kc = state_dir / f"kubeconfig-{name}"
            pki.write_kubeconfig(kc, cluster.api_url, ca, creds.users[name], token,
                                 creds.namespaces.get(name, "default"))
            kubeconfigs[name] = kc

        ctx = _ssl_context(cert, key)
        await self._serve(build_api_app(cluster), opts.port, ctx)
        await self._serve(build_oauth_app(cluster), opts.oauth_port, None)
        await self._serve(self._prometheus_app(cluster), opts.prometheus_port, ctx)
        (state_dir / "api-url").write_text(cluster.api_url + "\n")
        elapsed = time.monotonic() - started
        print(f"simcluster {path.stem}: API {cluster.api_url} (ready in {elapsed:.1f}s)",
              flush=True)
        print(f"  OAuth login (browsers): {cluster.oauth_browser_url}/oauth/authorize", flush=True)
        print(f"  Prometheus API: https://{host}:{opts.prometheus_port}", flush=True)
        print(f"  CA certificate: {ca}", flush=True)
        for name, kc in kubeconfigs.items():
            print(f"  kubeconfig {name}: {kc}", flush=True)
        print("READY", flush=True)

    def _prometheus_app(self, cluster: Cluster) -> web.Application:
        return build_prometheus_app(cluster, drop=self.opts.prometheus_drop)

    async def _serve(self, app: web.Application, port: int, ctx: ssl.SSLContext | None) -> None:
        runner = web.AppRunner(app, access_log=None, handle_signals=False,
                               shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, self.opts.host, port, ssl_context=ctx,
                           reuse_address=True)
        await site.start()
        self._runners.append(runner)

    async def stop(self) -> None:
        for runner in reversed(self._runners):
            await runner.cleanup()
        if self.cluster is not None:
            await self.cluster.clock.stop()


def run(opts: Options) -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    async def main() -> int:
        server = Server(opts)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await server.start()
        except scenario.ScenarioError as e:
            print(f"simcluster: {e}", file=sys.stderr)
            return 2
        except OSError as e:
            print(f"simcluster: cannot listen: {e}", file=sys.stderr)
            await server.stop()
            return 1
        await stop.wait()
        print("simcluster: stopping", flush=True)
        await server.stop()
        return 0

    return asyncio.run(main())

"""A TCP proxy in front of a real server that can cut every open connection at once: what
a dropped network, a load balancer's idle timeout or an API server's restart does to a
client's long requests (watches, followed logs). TLS passes through untouched."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import yaml


class CuttingProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cuts = 0
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True, name="proxy-accept").start()

    def _accept(self) -> None:
        while True:
            try:
                client, _address = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                self._close(s)

    def _close(self, s: socket.socket) -> None:
        with self._lock:
            self._open.discard(s)
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def cut(self) -> int:
        """Close every connection open now (new ones are still accepted); how many."""
        with self._lock:
            victims = list(self._open)
        for s in victims:
            self._close(s)
        self.cuts += 1
        return len(victims)

    def close(self) -> None:
        self.listener.close()
        self.cut()

    def kubeconfig(self, original: Path, written: Path) -> Path:
        """A copy of a kubeconfig whose server is this proxy."""
        config = yaml.safe_load(original.read_text())
        for cluster in config["clusters"]:
            cluster["cluster"]["server"] = f"https://127.0.0.1:{self.port}"
        written.write_text(yaml.safe_dump(config))
        return written

"""The simcluster process stops cleanly on SIGINT and SIGTERM: exit code 0, the
`simcluster: stopping` line, and every port it listened on free again."""

from __future__ import annotations

import signal
import socket

import pytest
import requests

from tests import simcluster_process


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port`."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def can_listen(port: int) -> bool:
    """Whether a new server could listen on the port (as simcluster does, SO_REUSEADDR)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen()
        except OSError:
            return False
        return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_server_with_exit_0_and_frees_its_ports(tmp_path, sig):
    sim = simcluster_process.start(tmp_path / "state", scenario="empty", speed=50)
    ports = (sim.port, sim.oauth_port, sim.prometheus_port)
    try:
        ready = requests.get(sim.api_url + "/readyz", verify=str(sim.ca_file), timeout=30)
        assert ready.status_code == 200
        assert all(listening(p) for p in ports)
        sim.process.send_signal(sig)
        assert sim.process.wait(30) == 0
    finally:
        sim.stop()
    log = sim.log()
    assert log.rstrip().endswith("simcluster: stopping"), log[-2000:]
    assert "Traceback" not in log
    assert not any(listening(p) for p in ports)
    assert all(can_listen(p) for p in ports)

    # a new server starts on the same ports and state directory and answers
    again = simcluster_process.start(tmp_path / "state", scenario="empty", speed=50,
                                     ports=ports, log_path=tmp_path / "again.log")
    try:
        assert requests.get(again.api_url + "/readyz", verify=str(again.ca_file),
                            timeout=30).status_code == 200
    finally:
        again.stop()
    assert again.process.returncode == 0

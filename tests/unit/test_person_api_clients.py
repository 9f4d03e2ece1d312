"""One ApiClient per person's token (training/cluster.py): a page's requests reuse its open
connection instead of a new client and TLS handshake each time."""

from __future__ import annotations

from training.cluster import ClusterConfig, PersonApiClients

CFG = ClusterConfig(server="https://api.example:6443", ca_file=None, verify_ssl=True,
                    token_source=None)


def test_it_gives_a_token_the_same_client_and_another_token_another():
    clients = PersonApiClients()
    alice = clients.get(CFG, "sha256~alice")
    assert clients.get(CFG, "sha256~alice") is alice
    bob = clients.get(CFG, "sha256~bob")
    assert bob is not alice
    assert bob.configuration.api_key["authorization"] == "sha256~bob"
    other_cluster = ClusterConfig("https://api.other:6443", None, True, None)
    assert clients.get(other_cluster, "sha256~alice") is not alice


def test_closing_a_persons_client_keeps_the_connection_for_their_next_request():
    from odh.training.cluster.client import ClusterClient

    clients = PersonApiClients()
    api = clients.get(CFG, "sha256~alice")
    pools = api.rest_client.pool_manager
    ClusterClient(api, shared=True).close()
    assert clients.get(CFG, "sha256~alice") is api
    assert api.rest_client.pool_manager is pools


def test_it_keeps_at_most_size_and_lets_idle_ones_go():
    now = [0.0]
    clients = PersonApiClients(size=2, idle=600, clock=lambda: now[0])
    first = clients.get(CFG, "t1")
    clients.get(CFG, "t2")
    clients.get(CFG, "t3")  # t1, the least recently used, goes
    assert len(clients) == 2
    assert clients.get(CFG, "t1") is not first
    now[0] += 601
    clients.get(CFG, "t4")  # the others were idle too long
    assert len(clients) == 1

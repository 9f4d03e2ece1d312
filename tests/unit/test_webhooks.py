"""Webhook safety (odh/training/webhooks.py): https only unless allowed, no private, local
or metadata address unless allowed (checked on the address connected to), no redirect
followed, the answer capped; and the signature a receiver checks."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from odh.training import webhooks
from odh.training.webhooks import Allow, Refused
from tests.webhook_receiver import Quiet, serving

NONE = Allow.parse([])
LOCAL = Allow.parse(["127.0.0.1"])


class _Receiver(Quiet):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((self.path, dict(self.headers), body))
        if self.path == "/moved":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.end_headers()
            return
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"x" * (webhooks.MAX_RESPONSE * 2))


@pytest.fixture
def receiver():
    with serving(_Receiver) as server:
        yield server


@pytest.mark.parametrize("url", ["https://169.254.169.254/latest/meta-data/",
                                 "https://10.0.0.7/hook", "https://[::1]/hook",
                                 "https://[::ffff:169.254.169.254]/x",
                                 "https://100.64.0.1/hook"])
def test_private_local_and_metadata_addresses_are_refused(url):
    with pytest.raises(Refused, match="private, local or metadata address"):
        webhooks.check_url(url, NONE)


def test_a_name_that_resolves_to_the_metadata_address_is_refused():
    target = webhooks.check_url("https://hooks.example.com/x", NONE)
    with pytest.raises(Refused, match=r"169\.254\.169\.254"):
        webhooks.resolve(target, NONE, resolver=lambda host, port: ["169.254.169.254"])
    # one private address among public ones is enough to refuse (rebinding)
    with pytest.raises(Refused, match=r"10\.1\.2\.3"):
        webhooks.resolve(target, NONE, resolver=lambda host, port: ["93.184.216.34",
                                                                      "10.1.2.3"])
    assert webhooks.resolve(target, NONE, resolver=lambda h, p: ["93.184.216.34"]) == \
        "93.184.216.34"


def test_plain_http_only_where_allowed():
    with pytest.raises(Refused, match="https only"):
        webhooks.check_url("http://hooks.example.com/x", NONE)
    with pytest.raises(Refused, match="https only"):
        webhooks.check_url("http://127.0.0.1:9/x", NONE)
    assert webhooks.check_url("http://127.0.0.1:9/x?a=1", LOCAL).path == "/x?a=1"
    assert webhooks.check_url("http://hooks.internal/x",
                              Allow.parse(["hooks.internal"])).port == 80
    # an allowed network
    assert webhooks.check_url("https://10.0.0.7/x", Allow.parse(["10.0.0.0/8"])).host == \
        "10.0.0.7"


@pytest.mark.parametrize("url", ["not a url", "ftp://example.com/x", "https://", "https://x:port/",
                                 "https://user:pw@hooks.example.com/x"])
def test_what_is_not_a_webhook_url_is_refused_with_the_reason(url):
    with pytest.raises(Refused) as refused:
        webhooks.check_url(url, NONE)
    assert "URL" in str(refused.value) or "user name" in str(refused.value)


def test_a_post_to_an_allowed_receiver_is_signed_and_its_answer_capped(receiver):
    port = receiver.server_address[1]
    body = b'{"event": "test"}'
    reply = webhooks.post(f"http://127.0.0.1:{port}/hook", body,
                          {webhooks.SIGNATURE_HEADER: webhooks.sign(body, "s3cret")}, LOCAL)
    assert reply.status == 200 and len(reply.body) == webhooks.MAX_RESPONSE
    ((path, headers, got),) = receiver.received
    assert path == "/hook" and got == body
    expected = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert headers[webhooks.SIGNATURE_HEADER] == f"sha256={expected}"


def test_a_redirect_is_an_answer_not_followed(receiver):
    port = receiver.server_address[1]
    reply = webhooks.post(f"http://127.0.0.1:{port}/moved", b"{}", {}, LOCAL)
    assert reply.status == 302
    assert [path for path, _h, _b in receiver.received] == ["/moved"]


def test_the_address_connected_to_is_the_one_checked(receiver):
    """The name resolved once: the connection goes to that address, the Host header still
    names the host (no second lookup a rebinding DNS could answer differently)."""
    port = receiver.server_address[1]
    allow = Allow.parse(["127.0.0.1"])
    reply = webhooks.post(f"http://receiver.test:{port}/named", b"{}", {}, allow,
                          resolver=lambda host, p: ["127.0.0.1"])
    assert reply.status == 200
    ((path, headers, _body),) = receiver.received
    assert path == "/named"
    assert headers["Host"] == f"receiver.test:{port}"
    # the same name resolving to the metadata address is refused before any connection
    with pytest.raises(Refused):
        webhooks.post(f"http://receiver.test:{port}/named", b"{}", {}, allow,
                      resolver=lambda host, p: ["169.254.169.254"])
    assert len(receiver.received) == 1

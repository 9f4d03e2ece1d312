"""Webhook deliveries that cannot be turned against the cluster's own network.

A webhook URL is someone's input, and the process that posts to it sits inside the
cluster: without care it is a way to reach the cloud's metadata service or an internal
address (SSRF). So:

- https only, unless the administrator allows the host (`Allow`: NOTIFY_WEBHOOK_ALLOW, a
  list of host names, addresses and CIDRs);
- every address the name resolves to must be public (not private, loopback, link-local
  (169.254.169.254, the metadata service), reserved or multicast) unless allowed;
- the name is resolved once and the connection made to the address checked (a second
  lookup could answer differently: DNS rebinding); the request still names the host
  (Host header, TLS SNI and certificate check);
- no redirect is followed (http.client follows none), a short timeout, and at most
  `MAX_RESPONSE` bytes of the answer read.

`check_url` checks what can be checked without the network (at save time, with
`resolve` too); `post` checks everything again when it sends.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import socket
import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from odh.training.i18n import _, shown

TIMEOUT_SECONDS = 5.0
MAX_RESPONSE = 64 * 1024
MAX_URL = 2000
SIGNATURE_HEADER = "X-ODH-Signature"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]


class Refused(ValueError):
    """The URL or the address it leads to may not be posted to; the message says why."""


@dataclass(frozen=True)
class Allow:
    """What the administrator allows besides public https addresses."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @classmethod
    def parse(cls, items: Iterable[str]) -> Allow:
        """From NOTIFY_WEBHOOK_ALLOW's items: "127.0.0.1", "10.0.0.0/8", "hooks.internal"."""
        hosts, networks = set(), []
        for item in (i.strip().lower() for i in items):
            if not item:
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                hosts.add(item.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    def host(self, name: str) -> bool:
        return name.lower().rstrip(".") in self.hosts

    def address(self, address: Address) -> bool:
        return any(address in net for net in self.networks if net.version == address.version)


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str
    port: int
    path: str


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes


def sign(body: bytes, secret: str) -> str:
    """The X-ODH-Signature header's value: "sha256=" and the body's HMAC-SHA256 in hex."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _parts(url: str) -> SplitResult:
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError:
        raise Refused(_("“%(url)s” is not a URL: enter one such as "
                        "https://hooks.example.com/notify.") % {"url": shown(url)}) from None
    return parts


def _https_only() -> Refused:
    return Refused(_("Webhooks are sent over https only: use an https:// URL (an "
                     "administrator may allow other addresses in NOTIFY_WEBHOOK_ALLOW)."))


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def check_url(url: str, allow: Allow) -> Target:
    """The URL's parts, if it may be posted to as far as can be told without the network."""
    if len(url) > MAX_URL:
        raise Refused(_("The webhook URL is too long: at most %(max)d characters.")
                      % {"max": MAX_URL})
    parts = _parts(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise Refused(_("“%(url)s” is not a URL: enter one such as "
                        "https://hooks.example.com/notify.") % {"url": shown(url)})
    if parts.username is not None or parts.password is not None:
        raise Refused(_("A webhook URL cannot carry a user name or password: use the "
                        "secret to check deliveries."))
    literal = _literal(host)
    allowed = allow.host(host) or (literal is not None and allow.address(literal))
    # a name whose address is in an allowed network is told by `resolve`
    if parts.scheme != "https" and not allowed and (literal is not None or
                                                    not allow.networks):
        raise _https_only()
    if literal is not None:
        check_address(host, literal, allow)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(url.strip(), parts.scheme, host, port, path)


def check_address(host: str, address: Address, allow: Allow) -> None:
    """Refused unless the address is public, or the host or the address is allowed."""
    mapped = getattr(address, "ipv4_mapped", None)
    address = mapped or address
    if allow.host(host) or allow.address(address) or address.is_global:
        return
    raise Refused(_("“%(host)s” leads to %(address)s, a private, local or metadata address, "
                    "which webhooks may not reach (an administrator may allow it in "
                    "NOTIFY_WEBHOOK_ALLOW).") % {"host": shown(host), "address": address})


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def resolve(target: Target, allow: Allow, resolver: Resolver = system_resolver) -> str:
    """The one address to connect to: every address the name has must pass
    `check_address` (a name with one private address among public ones is refused)."""
    literal = _literal(target.host)
    if literal is not None:
        return str(literal)
    allowed = allow.host(target.host)
    try:
        found = resolver(target.host, target.port)
    except OSError:
        if target.scheme != "https" and not allowed:
            raise _https_only() from None
        raise Refused(_("The host “%(host)s” could not be found: check the webhook URL.")
                      % {"host": shown(target.host)}) from None
    if not found:
        raise Refused(_("The host “%(host)s” could not be found: check the webhook URL.")
                      % {"host": shown(target.host)})
    for text in found:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        check_address(target.host, address, allow)
        if target.scheme != "https" and not (allowed or allow.address(address)):
            raise _https_only()
    return found[0]


class _PinnedHTTP(http.client.HTTPConnection):
    """Connects to `address` while naming `host` (the Host header)."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """Connects to `address`, with SNI and the certificate checked for `host`."""

    def __init__(self, host: str, port: int, address: str, timeout: float,
                 context: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def post(url: str, body: bytes, headers: dict[str, str], allow: Allow, *,
         timeout: float = TIMEOUT_SECONDS, resolver: Resolver = system_resolver,
         context: ssl.SSLContext | None = None) -> Reply:
    """POST `body` to `url`: `Refused` if it may not be reached, OSError or
    http.client.HTTPException if it could not be; else its status and at most
    MAX_RESPONSE bytes of its answer (a redirect is an answer like any other)."""
    target = check_url(url, allow)
    address = resolve(target, allow, resolver)
    if target.scheme == "https":
        conn: http.client.HTTPConnection = _PinnedHTTPS(
            target.host, target.port, address, timeout, context or ssl.create_default_context())
    else:
        conn = _PinnedHTTP(target.host, target.port, address, timeout)
    try:
        conn.request("POST", target.path, body=body, headers={
            "Content-Type": "application/json", "User-Agent": "odh-training-dashboard",
            **headers})
        response = conn.getresponse()
        return Reply(response.status, response.read(MAX_RESPONSE))
    finally:
        conn.close()

"""A CA and a serving certificate, made on first start and kept in the state directory,
plus kubeconfig files in the shape `kind` writes them."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _write_private(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    os.chmod(path, 0o600)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _sans(hosts: list[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for h in hosts:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            out.append(x509.DNSName(h))
    return out


def ensure_certificates(state_dir: Path, hosts: list[str]) -> tuple[Path, Path, Path]:
    """(ca.crt, server.crt, server.key); made once, remade if the hosts changed."""
    state_dir.mkdir(parents=True, exist_ok=True)
    ca_crt, ca_key = state_dir / "ca.crt", state_dir / "ca.key"
    srv_crt, srv_key = state_dir / "server.crt", state_dir / "server.key"
    now = datetime.datetime.now(datetime.UTC)
    if ca_crt.exists() and ca_key.exists():
        ca_cert = x509.load_pem_x509_certificate(ca_crt.read_bytes())
        ca_private = serialization.load_pem_private_key(ca_key.read_bytes(), None)
    else:
        ca_private = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "simcluster-ca")])
        ca_cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(ca_private.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=3650))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(True, False, False, False, False, True, True,
                                                False, False), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(
                       ca_private.public_key()), critical=False)
                   .sign(ca_private, hashes.SHA256()))
        ca_crt.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
        _write_private(ca_key, _key_pem(ca_private))
        for stale in (srv_crt, srv_key):
            stale.unlink(missing_ok=True)
    wanted = sorted(set(hosts))
    if srv_crt.exists() and srv_key.exists():
        cert = x509.load_pem_x509_certificate(srv_crt.read_bytes())
        try:
            san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            have = sorted({str(v) for v in san.get_values_for_type(x509.DNSName)} |
                          {str(v) for v in san.get_values_for_type(x509.IPAddress)})
        except x509.ExtensionNotFound:
            have = []
        if have == wanted and cert.not_valid_after_utc > now + datetime.timedelta(days=1):
            return ca_crt, srv_crt, srv_key
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "simcluster")]))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=825))
            .add_extension(x509.SubjectAlternativeName(_sans(wanted)), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_private.public_key()), critical=False)
            .sign(ca_private, hashes.SHA256()))
    srv_crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_private(srv_key, _key_pem(key))
    return ca_crt, srv_crt, srv_key


def write_kubeconfig(path: Path, server: str, ca_file: Path, user: str, token: str,
                     namespace: str = "default", context: str = "simcluster") -> None:
    ca_data = base64.b64encode(ca_file.read_bytes()).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "simcluster", "cluster": {
            "server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {
            "cluster": "simcluster", "user": user, "namespace": namespace}}],
        "current-context": context,
        "preferences": {},
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    os.chmod(path, 0o600)

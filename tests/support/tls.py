"""Test-time TLS material: a CA and a loopback server certificate it signs, as PEM files."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOOPBACK_IP = "127.0.0.1"


@dataclass(frozen=True)
class CertificateAuthority:
    name: str
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate
    certfile: Path
    """The CA certificate as PEM: what a client trusts."""


@dataclass(frozen=True)
class ServerIdentity:
    certfile: Path
    """Chain: the server certificate, then its CA's."""
    keyfile: Path
    """The server's unencrypted PKCS#8 key."""


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(
        now + datetime.timedelta(days=2)
    )


def make_ca(folder: Path, name: str) -> CertificateAuthority:
    """A self-signed CA whose certificate is written to `folder/<name>.pem`."""
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        _validity(x509.CertificateBuilder())
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    certfile = folder / f"{name}.pem"
    certfile.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return CertificateAuthority(name, key, certificate, certfile)


def make_server_identity(ca: CertificateAuthority, folder: Path, name: str = "broker") -> ServerIdentity:
    """A server certificate for IP:127.0.0.1 signed by `ca`: its chain and its key as PEM files in `folder`."""
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        _validity(x509.CertificateBuilder())
        .subject_name(_name(name))
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(LOOPBACK_IP))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False)
        .sign(ca.key, hashes.SHA256())
    )
    certfile = folder / f"{name}-chain.pem"
    certfile.write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM) + ca.certificate.public_bytes(serialization.Encoding.PEM)
    )
    keyfile = folder / f"{name}-key.pem"
    keyfile.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ServerIdentity(certfile, keyfile)

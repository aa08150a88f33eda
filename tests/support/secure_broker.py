"""A real broker with secured listeners, for the tests of ``kassign snapshot --command-config``.

:class:`SecureKafkaBroker` is tests/support/kafka_broker.py's :class:`KafkaBroker` with more listeners
(its PLAINTEXT listener stays, for the tests' own set-up):

* ``SASL_SSL``: SASL/SCRAM-SHA-512 over TLS (user :data:`SCRAM_USER`);
* ``SASL_PLAINTEXT``: SASL/PLAIN without TLS (user :data:`PLAIN_USER`);
* ``MTLS``: TLS with client certificates required (mutual TLS);
* ``BADNAME``: TLS whose certificate names another host (the host-name check must refuse it).

Every certificate comes from a throwaway CA made by :func:`make_pki` with the ``cryptography``
package; the broker reads PEM stores (``ssl.keystore.type=PEM``). The SCRAM user is created when
the storage is formatted (``StorageTool format --add-scram``). Client-side stores are written in
PEM and in PKCS12 so both kinds are exercised.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

from support.kafka_broker import KafkaBroker, free_port

SCRAM_USER = "snap-alice"
PLAIN_USER = "snap-bob"


@dataclass
class Pki:
    """Paths of the test certificates and stores, and their passwords."""

    dir: Path
    ca_pem: Path  # the CA certificate (PEM trust store)
    ca_p12: Path  # the CA certificate in a PKCS12 trust store
    rogue_ca_pem: Path  # another CA, which signed nothing the broker uses
    broker_pem: Path  # broker key + chain, SAN IP:127.0.0.1 and DNS:localhost
    badname_pem: Path  # broker key + chain, SAN DNS:wrong-host.invalid only
    client_p12: Path  # client key + certificate (PKCS12)
    client_pem: Path  # client encrypted key + certificate (PEM key store)
    truststore_password: str
    keystore_password: str
    key_password: str


def make_pki(d: Path) -> Pki:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID

    d.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def ca(cn: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(name(cn))
            .issuer_name(name(cn))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        return key, cert

    def leaf(
        ca_key: ec.EllipticCurvePrivateKey, ca_cert: x509.Certificate, cn: str, sans: list[x509.GeneralName]
    ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        b = (
            x509.CertificateBuilder()
            .subject_name(name(cn))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        )
        if sans:
            b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return key, b.sign(ca_key, hashes.SHA256())

    pem = serialization.Encoding.PEM

    def plain_key(k: ec.EllipticCurvePrivateKey) -> bytes:
        return k.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())

    ca_key, ca_cert = ca("kassign test CA")
    _, rogue_cert = ca("kassign rogue CA")
    broker_key, broker_cert = leaf(
        ca_key, ca_cert, "broker", [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    )
    bad_key, bad_cert = leaf(ca_key, ca_cert, "wrong-host", [x509.DNSName("wrong-host.invalid")])
    client_key, client_cert = leaf(ca_key, ca_cert, "kassign-client", [])

    tpw, kpw, keypw = (f"{p}-{secrets.token_hex(8)}" for p in ("trust", "store", "key"))
    pki = Pki(
        dir=d,
        ca_pem=d / "ca.pem",
        ca_p12=d / "truststore.p12",
        rogue_ca_pem=d / "rogue-ca.pem",
        broker_pem=d / "broker.pem",
        badname_pem=d / "badname.pem",
        client_p12=d / "client.p12",
        client_pem=d / "client.pem",
        truststore_password=tpw,
        keystore_password=kpw,
        key_password=keypw,
    )
    pki.ca_pem.write_bytes(ca_cert.public_bytes(pem))
    pki.rogue_ca_pem.write_bytes(rogue_cert.public_bytes(pem))
    pki.broker_pem.write_bytes(plain_key(broker_key) + broker_cert.public_bytes(pem) + ca_cert.public_bytes(pem))
    pki.badname_pem.write_bytes(plain_key(bad_key) + bad_cert.public_bytes(pem) + ca_cert.public_bytes(pem))
    enc = serialization.BestAvailableEncryption
    pki.ca_p12.write_bytes(pkcs12.serialize_key_and_certificates(None, None, None, [ca_cert], enc(tpw.encode())))
    pki.client_p12.write_bytes(
        pkcs12.serialize_key_and_certificates(b"client", client_key, client_cert, [ca_cert], enc(kpw.encode()))
    )
    pki.client_pem.write_bytes(
        client_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, enc(keypw.encode()))
        + client_cert.public_bytes(pem)
    )
    return pki


class SecureKafkaBroker(KafkaBroker):
    """A single-node broker with SASL_SSL (SCRAM-SHA-512), SASL_PLAINTEXT (PLAIN), MTLS and
    BADNAME listeners beside PLAINTEXT (``.bootstrap``)."""

    def __init__(self, libs: Path, work_dir: Path) -> None:
        super().__init__(libs, work_dir)
        self.pki = make_pki(work_dir / "pki")
        self.scram_password = f"scram-{secrets.token_hex(12)}"
        self.plain_password = f"plain-{secrets.token_hex(12)}"
        taken = {self.port, self.controller_port}
        self.ports: dict[str, int] = {}
        for listener in ("SASL_SSL", "SASL_PLAINTEXT", "MTLS", "BADNAME"):
            p = free_port()
            while p in taken:
                p = free_port()
            taken.add(p)
            self.ports[listener] = p

    def address(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"

    def extra_settings(self) -> dict[str, str]:
        names = ["PLAINTEXT", "CONTROLLER", *self.ports]
        addr = {"PLAINTEXT": self.port, "CONTROLLER": self.controller_port, **self.ports}
        proto = {
            "PLAINTEXT": "PLAINTEXT",
            "CONTROLLER": "PLAINTEXT",
            "SASL_SSL": "SASL_SSL",
            "SASL_PLAINTEXT": "SASL_PLAINTEXT",
            "MTLS": "SSL",
            "BADNAME": "SSL",
        }
        advertised = [n for n in names if n != "CONTROLLER"]
        pki = self.pki
        return {
            "listeners": ",".join(f"{n}://127.0.0.1:{addr[n]}" for n in names),
            "advertised.listeners": ",".join(f"{n}://127.0.0.1:{addr[n]}" for n in advertised),
            "listener.security.protocol.map": ",".join(f"{n}:{proto[n]}" for n in names),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(pki.broker_pem),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(pki.ca_pem),
            "listener.name.mtls.ssl.client.auth": "required",
            "listener.name.badname.ssl.keystore.type": "PEM",
            "listener.name.badname.ssl.keystore.location": str(pki.badname_pem),
            "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'user_{PLAIN_USER}="{self.plain_password}";'
            ),
        }

    def extra_format_args(self) -> list[str]:
        return ["--add-scram", f"SCRAM-SHA-512=[name={SCRAM_USER},password={self.scram_password}]"]

    def secrets(self) -> list[str]:
        """Every password the tests' configs hold (none may appear in any output or file)."""
        p = self.pki
        return [self.scram_password, self.plain_password, p.truststore_password, p.keystore_password, p.key_password]

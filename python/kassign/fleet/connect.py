"""Client settings for ``kassign snapshot``, taken the way Kafka's own tools take them.

A Java-client properties file (the file passed to ``kafka-consumer-groups.sh --command-config``)
plus single ``-X key=value`` overrides are read into one :class:`ClientSettings`. That object is
the only place where Java property names are mapped to each client the collector uses:
:meth:`ClientSettings.kafka_python` (kafka-python, classic groups and offsets) and
:meth:`ClientSettings.librdkafka` (confluent-kafka, groups on the KIP-848 consumer protocol).

Supported: ``security.protocol`` PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL; ``sasl.mechanism``
PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 with the credentials in ``sasl.jaas.config``; trust and key
stores of type PEM (files or inline ``ssl.truststore.certificates`` / ``ssl.keystore.key`` /
``ssl.keystore.certificate.chain``) and PKCS12 (needs the ``cryptography`` package); mutual TLS;
``ssl.endpoint.identification.algorithm`` (``https``, the default, verifies the broker's host
name like the Java client; empty turns the check off). JKS stores and the GSSAPI, OAUTHBEARER and
AWS_MSK_IAM mechanisms are refused with a message that says what to use instead.

Secrets (passwords, private keys) never leave this object in text form: its ``repr`` hides
them, :meth:`ClientSettings.source` records the connection without them, and
:meth:`ClientSettings.redact` scrubs any message before it is shown.
"""

from __future__ import annotations

import contextlib
import os
import re
import ssl
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Properties files larger than this are refused (a client config is a few hundred bytes).
MAX_CONFIG_BYTES = 1 << 20
#: Trust and key stores larger than this are refused.
MAX_STORE_BYTES = 16 << 20

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

#: What to use instead of a mechanism kassign does not support.
UNSUPPORTED_MECHANISMS = {
    "GSSAPI": "Kerberos (GSSAPI) is not supported: use a SCRAM or PLAIN user, or mutual TLS "
    "(security.protocol=SSL with a key store)",
    "OAUTHBEARER": "OAUTHBEARER is not supported: use a SCRAM or PLAIN user (sasl.jaas.config), or "
    "mutual TLS (security.protocol=SSL with a key store)",
    "AWS_MSK_IAM": "AWS_MSK_IAM is not supported: enable SASL/SCRAM or mutual TLS on the MSK cluster "
    "and use that listener",
}

#: The login module each supported mechanism takes in ``sasl.jaas.config``.
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}

#: Properties that are read (the rest are reported as ignored, by name only).
KNOWN = {
    "bootstrap.servers",
    "client.id",
    "security.protocol",
    "sasl.mechanism",
    "sasl.jaas.config",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
}

#: Properties whose values are secrets (never shown, never written).
SECRET_KEYS = {
    "sasl.jaas.config",
    "ssl.truststore.password",
    "ssl.keystore.password",
    "ssl.keystore.key",
    "ssl.key.password",
}


class ConfigError(ValueError):
    """The client configuration cannot be used (a bad input: ``kassign snapshot`` exits 2).
    Messages name properties and files, never secret values."""


# -- Java properties ---------------------------------------------------------------------------

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        n = s[i + 1]
        if n == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[i + 2 : i + 6]):
            out.append(chr(int(s[i + 2 : i + 6], 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(n, n))
        i += 2
    return "".join(out)


def _logical_lines(text: str) -> Iterator[str]:
    """java.util.Properties' logical lines: comments and blank lines dropped, a line ending in an
    odd number of backslashes continues on the next one (its leading blanks removed)."""
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if pending is None and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending = (pending or "") + line[:-1]
            continue
        yield (pending or "") + line
        pending = None
    if pending is not None:
        yield pending


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text (``key=value``, ``key: value`` or ``key value``; ``#`` and
    ``!`` comments; backslash continuations and escapes, ``\\uXXXX`` included)."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if c == "\\":
                i += 2
                continue
            if c in "=: \t\f":
                break
            i += 1
        key = line[:i]
        j = i
        while j < n and line[j] in " \t\f":
            j += 1
        if j < n and line[j] in "=:":
            j += 1
            while j < n and line[j] in " \t\f":
                j += 1
        props[_unescape(key)] = _unescape(line[j:])
    return props


def read_properties(path: str) -> dict[str, str]:
    """Read a properties file (UTF-8, as Java 9+ reads them); a clear :class:`ConfigError` when it
    is missing, unreadable, too large or not text."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"--command-config {path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"--command-config {path}: is a directory, not a properties file") from None
    except OSError as e:
        raise ConfigError(f"--command-config {path}: cannot read it ({e.strerror or e})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"--command-config {path}: larger than {MAX_CONFIG_BYTES} bytes, not a client config")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            text = data.decode("latin-1")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
            raise ConfigError(f"--command-config {path}: not a text file") from None
    if "\x00" in text:
        raise ConfigError(f"--command-config {path}: not a text file (NUL bytes)")
    return parse_properties(text)


def parse_overrides(items: Sequence[str] | None) -> dict[str, str]:
    """``-X key=value`` items (the value may contain ``=``)."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"-X: expected KEY=VALUE, got {item.split('=')[0]!r}")
        out[key.strip()] = value
    return out


# -- sasl.jaas.config ---------------------------------------------------------------------------

_JAAS_TOKEN = re.compile(r'\s*(?:(?P<q>"(?:[^"\\]|\\.)*")|(?P<w>[^\s=;"]+)|(?P<p>[=;]))', re.S)


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """``LoginModule flag key=value ...;`` (one module, as the Java client allows in
    ``sasl.jaas.config``) -> (module class, options). Quoted values take ``\\"`` and ``\\\\``.
    Errors never quote the text (it holds the password)."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _JAAS_TOKEN.match(text, pos)
        if m is None:
            raise ConfigError("sasl.jaas.config: cannot parse it (expected 'LoginModule required key=\"value\" ...;')")
        pos = m.end()
        if m.group("q") is not None:
            tokens.append(("s", re.sub(r"\\(.)", r"\1", m.group("q")[1:-1], flags=re.S)))
        elif m.group("w") is not None:
            tokens.append(("w", m.group("w")))
        else:
            tokens.append(("p", m.group("p")))
    if len(tokens) < 3 or tokens[0][0] != "w" or tokens[1][0] != "w":
        raise ConfigError("sasl.jaas.config: expected 'LoginModule required key=\"value\" ...;'")
    module, flag = tokens[0][1], tokens[1][1]
    if flag.lower() not in ("required", "requisite", "sufficient", "optional"):
        raise ConfigError(
            f"sasl.jaas.config: {module}: the control flag must be required, requisite, sufficient or optional"
        )
    options: dict[str, str] = {}
    i = 2
    while i < len(tokens):
        if tokens[i] == ("p", ";"):
            if i != len(tokens) - 1:
                raise ConfigError("sasl.jaas.config: more than one login module (the Java client takes one)")
            return module, options
        if i + 2 < len(tokens) and tokens[i][0] == "w" and tokens[i + 1] == ("p", "=") and tokens[i + 2][0] in "ws":
            options[tokens[i][1]] = tokens[i + 2][1]
            i += 3
            continue
        raise ConfigError(f'sasl.jaas.config: {module}: options must be key=value or key="value"')
    raise ConfigError("sasl.jaas.config: missing the ';' that ends the login module")


# -- trust and key stores -------------------------------------------------------------------------


def _read_store(prop: str, path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_STORE_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{prop}={path}: no such file") from None
    except OSError as e:
        raise ConfigError(f"{prop}={path}: cannot read it ({e.strerror or e})") from None
    if len(data) > MAX_STORE_BYTES:
        raise ConfigError(f"{prop}={path}: larger than {MAX_STORE_BYTES} bytes")
    return data


def _store_kind(data: bytes) -> str:
    if data[:4] == b"\xfe\xed\xfe\xed" or data[:4] == b"\xce\xce\xce\xce":
        return "JKS"
    if b"-----BEGIN" in data[:4096]:
        return "PEM"
    if data[:1] == b"\x30":
        return "PKCS12"
    return "unknown"


def _jks_error(prop: str, path: str) -> ConfigError:
    return ConfigError(
        f"{prop}={path}: JKS stores are not supported; convert it to PKCS12 with `keytool -importkeystore "
        f"-srckeystore {path} -destkeystore {path}.p12 -deststoretype PKCS12` and set the type to PKCS12 "
        "(or use PEM files)"
    )


_PEM_CERT = re.compile(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)
_PEM_KEY = re.compile(
    rb"-----BEGIN (?:ENCRYPTED |RSA |EC )?PRIVATE KEY-----.+?-----END (?:ENCRYPTED |RSA |EC )?PRIVATE KEY-----", re.S
)


def _pkcs12(prop: str, path: str, data: bytes, password: str | None) -> Any:
    try:
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:
        raise ConfigError(
            f"{prop}={path}: PKCS12 stores need the cryptography package (pip install 'kassign[snapshot]'), "
            "or use PEM files"
        ) from None
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError:
        raise ConfigError(f"{prop}={path}: cannot open it as PKCS12 (wrong password, or not a PKCS12 file)") from None


def _store_type(props: dict[str, str], prop: str, path: str | None, data: bytes | None) -> str:
    given = props.get(prop, "").strip().upper()
    if _store_kind(data or b"") == "JKS":  # whatever the declared type says
        raise _jks_error(prop.replace(".type", ".location"), path or "")
    if given in ("PEM", "PKCS12"):
        return given
    if given == "JKS" or given == "":
        # The Java client's default type is JKS, whose loader also opens PKCS12 files (Java 9+):
        # the file's first bytes tell which it is.
        kind = _store_kind(data or b"")
        if kind == "JKS":
            raise _jks_error(prop.replace(".type", ".location"), path or "")
        return kind if kind in ("PEM", "PKCS12") else "PKCS12"
    raise ConfigError(f"{prop}={given}: supported store types are PEM and PKCS12")


@dataclass(frozen=True)
class TlsMaterial:
    """Trust anchors and the client's certificate and key, all as PEM (in memory)."""

    ca_pem: str | None = field(default=None, repr=False)  # None: the system's trust store
    cert_chain_pem: str | None = field(default=None, repr=False)
    key_pem: str | None = field(default=None, repr=False)  # unencrypted PKCS#8 or the given PEM
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True

    def ssl_context(self) -> ssl.SSLContext:
        """A client SSLContext (TLS 1.2+, certificate and host name checks as configured). The
        key goes through a private temporary file (0600, removed at once): Python's ssl module
        only loads keys from files."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.check_hostname = self.check_hostname
        ctx.verify_mode = ssl.CERT_REQUIRED
        if self.ca_pem:
            ctx.load_verify_locations(cadata=self.ca_pem)
        else:
            ctx.load_default_certs()
        if self.cert_chain_pem and self.key_pem:
            with _private_dir() as d:
                chain, key = os.path.join(d, "chain.pem"), os.path.join(d, "key.pem")
                _write_private(chain, self.cert_chain_pem)
                _write_private(key, self.key_pem)
                try:
                    ctx.load_cert_chain(chain, key, password=self.key_password or None)
                except ssl.SSLError:
                    raise ConfigError(
                        "the key store's private key does not open or does not match its certificate "
                        "(check ssl.key.password / ssl.keystore.password)"
                    ) from None
        return ctx


@contextlib.contextmanager
def _private_dir() -> Iterator[str]:
    d = tempfile.mkdtemp(prefix="kassign-tls-")
    try:
        yield d
    finally:
        for name in os.listdir(d):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(d, name))
        with contextlib.suppress(OSError):
            os.rmdir(d)


def _write_private(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


def _certs_pem(certs: Sequence[Any]) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding

    return "".join(c.public_bytes(Encoding.PEM).decode() for c in certs)


def _truststore(props: dict[str, str]) -> str | None:
    inline = props.get("ssl.truststore.certificates", "").strip()
    loc = props.get("ssl.truststore.location", "").strip()
    if inline:
        certs = _PEM_CERT.findall(inline.encode())
        if not certs:
            raise ConfigError("ssl.truststore.certificates: no PEM certificate in it")
        return "\n".join(c.decode() for c in certs) + "\n"
    if not loc:
        return None
    data = _read_store("ssl.truststore.location", loc)
    kind = _store_type(props, "ssl.truststore.type", loc, data)
    if kind == "PEM":
        certs = _PEM_CERT.findall(data)
        if not certs:
            raise ConfigError(f"ssl.truststore.location={loc}: no PEM certificate in it")
        return "\n".join(c.decode() for c in certs) + "\n"
    p12 = _pkcs12("ssl.truststore.location", loc, data, props.get("ssl.truststore.password") or None)
    certs = [c.certificate for c in p12.additional_certs]
    if p12.cert is not None:
        certs.append(p12.cert.certificate)
    if not certs:
        raise ConfigError(f"ssl.truststore.location={loc}: no certificate in the PKCS12 store")
    return _certs_pem(certs)


def _keystore(props: dict[str, str]) -> tuple[str | None, str | None, str | None]:
    """(certificate chain PEM, private key PEM, key password) of the client, or Nones."""
    key_pw = props.get("ssl.key.password") or None
    inline_key = props.get("ssl.keystore.key", "").strip()
    inline_chain = props.get("ssl.keystore.certificate.chain", "").strip()
    loc = props.get("ssl.keystore.location", "").strip()
    if inline_key or inline_chain:
        if not (inline_key and inline_chain):
            raise ConfigError("ssl.keystore.key and ssl.keystore.certificate.chain go together (PEM key store)")
        keys, certs = _PEM_KEY.findall(inline_key.encode()), _PEM_CERT.findall(inline_chain.encode())
        if not keys or not certs:
            raise ConfigError(
                "ssl.keystore.key / ssl.keystore.certificate.chain: expected a PEM key and PEM certificates"
            )
        return "\n".join(c.decode() for c in certs) + "\n", keys[0].decode() + "\n", key_pw
    if not loc:
        return None, None, None
    data = _read_store("ssl.keystore.location", loc)
    kind = _store_type(props, "ssl.keystore.type", loc, data)
    if kind == "PEM":
        keys, certs = _PEM_KEY.findall(data), _PEM_CERT.findall(data)
        if not keys or not certs:
            raise ConfigError(
                f"ssl.keystore.location={loc}: a PEM key store holds the private key and its certificate chain"
            )
        return "\n".join(c.decode() for c in certs) + "\n", keys[0].decode() + "\n", key_pw
    store_pw = props.get("ssl.keystore.password") or None
    p12 = _pkcs12("ssl.keystore.location", loc, data, store_pw)
    if p12.key is None or p12.cert is None:
        raise ConfigError(f"ssl.keystore.location={loc}: the PKCS12 store has no private key with a certificate")
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

    key_pem = p12.key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()).decode()
    chain = _certs_pem([p12.cert.certificate, *(c.certificate for c in p12.additional_certs)])
    return chain, key_pem, None


# -- the settings ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientSettings:
    """One cluster connection, from Java client properties. ``repr`` shows no secret."""

    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    tls: TlsMaterial | None = None
    client_id: str = "kassign-snapshot"
    config_file: str | None = None
    ignored: tuple[str, ...] = ()
    _secrets: tuple[str, ...] = field(default=(), repr=False)

    # -- mapping to each client -----------------------------------------------------------------
    def kafka_python(self, timeout_s: float) -> dict[str, Any]:
        """Keyword arguments for kafka-python's clients (KafkaAdminClient)."""
        ms = max(int(timeout_s * 1000), 1)
        conf: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap_servers,
            "client_id": self.client_id,
            "security_protocol": self.security_protocol,
            "request_timeout_ms": ms,
            "bootstrap_timeout_ms": ms,
        }
        if self.tls is not None:
            conf["ssl_context"] = self.tls.ssl_context()
        if self.sasl_mechanism:
            conf["sasl_mechanism"] = self.sasl_mechanism
            conf["sasl_plain_username"] = self.sasl_username
            conf["sasl_plain_password"] = self.sasl_password
        return conf

    def librdkafka(self, timeout_s: float) -> dict[str, Any]:
        """Configuration for confluent-kafka's clients (librdkafka property names)."""
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap_servers,
            "client.id": self.client_id,
            "security.protocol": self.security_protocol.lower(),
            "socket.timeout.ms": max(int(timeout_s * 1000), 10),
        }
        if self.tls is not None:
            if self.tls.ca_pem:
                conf["ssl.ca.pem"] = self.tls.ca_pem
            else:
                conf["ssl.ca.location"] = "probe"
            if self.tls.cert_chain_pem and self.tls.key_pem:
                conf["ssl.certificate.pem"] = self.tls.cert_chain_pem
                conf["ssl.key.pem"] = self.tls.key_pem
                if self.tls.key_password:
                    conf["ssl.key.password"] = self.tls.key_password
            conf["ssl.endpoint.identification.algorithm"] = "https" if self.tls.check_hostname else "none"
        if self.sasl_mechanism:
            conf["sasl.mechanisms"] = self.sasl_mechanism
            conf["sasl.username"] = self.sasl_username
            conf["sasl.password"] = self.sasl_password
        return conf

    # -- what may be shown ----------------------------------------------------------------------
    def source(self) -> dict[str, Any]:
        """The connection as recorded in snapshot.json: no password, key or JAAS text."""
        src: dict[str, Any] = {
            "kind": "kafka",
            "bootstrap_servers": self.bootstrap_servers,
            "security_protocol": self.security_protocol,
        }
        if self.sasl_mechanism:
            src["sasl_mechanism"] = self.sasl_mechanism
            src["sasl_username"] = self.sasl_username
        if self.tls is not None:
            src["tls_client_certificate"] = bool(self.tls.cert_chain_pem)
            src["tls_hostname_verification"] = self.tls.check_hostname
        if self.config_file:
            src["command_config"] = os.path.abspath(self.config_file)
        return src

    def who(self) -> str:
        """``SASL mechanism SCRAM-SHA-512 as user 'alice'`` / ``TLS client certificate`` / ..."""
        if self.sasl_mechanism:
            return f"SASL {self.sasl_mechanism} as user {self.sasl_username!r}"
        if self.tls is not None and self.tls.cert_chain_pem:
            return "a TLS client certificate"
        return self.security_protocol

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``***``."""
        for s in sorted(self._secrets, key=len, reverse=True):
            if s:
                text = text.replace(s, "***")
        return text

    def secrets(self) -> tuple[str, ...]:
        return self._secrets


def settings_from(
    bootstrap_servers: str | None,
    command_config: str | None = None,
    overrides: Sequence[str] | None = None,
    client_id: str = "kassign-snapshot",
) -> ClientSettings:
    """Build the settings from ``--bootstrap-servers``, ``--command-config FILE`` and ``-X``
    overrides (later wins: file, then ``-X``; ``--bootstrap-servers`` over ``bootstrap.servers``)."""
    props: dict[str, str] = {}
    if command_config:
        props.update(read_properties(command_config))
    props.update(parse_overrides(overrides))
    secrets: list[str] = [v for k, v in props.items() if k in SECRET_KEYS and v]

    servers = (bootstrap_servers or props.get("bootstrap.servers", "")).strip()
    if not servers:
        raise ConfigError(
            "no bootstrap servers: pass --bootstrap-servers HOST:PORT (or bootstrap.servers in the config)"
        )

    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper() or "PLAINTEXT"
    if protocol not in PROTOCOLS:
        raise ConfigError(f"security.protocol={protocol}: expected one of {', '.join(PROTOCOLS)}")

    mechanism: str | None = None
    user: str | None = None
    password: str | None = None
    if protocol.startswith("SASL_"):
        mechanism = props.get("sasl.mechanism", "GSSAPI").strip().upper() or "GSSAPI"
        if mechanism in UNSUPPORTED_MECHANISMS:
            raise ConfigError(f"sasl.mechanism={mechanism}: {UNSUPPORTED_MECHANISMS[mechanism]}")
        if mechanism not in MECHANISMS:
            raise ConfigError(f"sasl.mechanism={mechanism}: supported mechanisms are {', '.join(MECHANISMS)}")
        jaas = props.get("sasl.jaas.config", "").strip()
        if not jaas:
            raise ConfigError(
                f"sasl.mechanism={mechanism} needs sasl.jaas.config, e.g. "
                f'{LOGIN_MODULES[mechanism]} required username="USER" password="PASSWORD";'
            )
        module, options = parse_jaas(jaas)
        short = module.rsplit(".", 1)[-1]
        if short != LOGIN_MODULES[mechanism].rsplit(".", 1)[-1]:
            if "OAuthBearer" in short:
                raise ConfigError(f"sasl.jaas.config: {short}: {UNSUPPORTED_MECHANISMS['OAUTHBEARER']}")
            if "Krb5" in short:
                raise ConfigError(f"sasl.jaas.config: {short}: {UNSUPPORTED_MECHANISMS['GSSAPI']}")
            if "IAM" in short:
                raise ConfigError(f"sasl.jaas.config: {short}: {UNSUPPORTED_MECHANISMS['AWS_MSK_IAM']}")
            raise ConfigError(
                f"sasl.jaas.config: {module} does not go with sasl.mechanism={mechanism} "
                f"(expected {LOGIN_MODULES[mechanism]})"
            )
        user, password = options.get("username"), options.get("password")
        if not user or password is None:
            raise ConfigError(f'sasl.jaas.config: {short} needs username="..." and password="..."')
        secrets.append(password)
    elif props.get("sasl.mechanism", "").strip().upper() in UNSUPPORTED_MECHANISMS:
        mech = props["sasl.mechanism"].strip().upper()
        raise ConfigError(f"sasl.mechanism={mech}: {UNSUPPORTED_MECHANISMS[mech]}")

    tls: TlsMaterial | None = None
    if protocol.endswith("SSL"):
        algo = props.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
        if algo not in ("https", ""):
            raise ConfigError(
                f"ssl.endpoint.identification.algorithm={algo}: expected https (verify the broker's "
                "host name, the default) or empty (do not)"
            )
        chain, key, key_pw = _keystore(props)
        if key:
            secrets.append(key.strip())
        tls = TlsMaterial(
            ca_pem=_truststore(props),
            cert_chain_pem=chain,
            key_pem=key,
            key_password=key_pw,
            check_hostname=algo == "https",
        )
        tls.ssl_context()  # fail now, with a clear message, on a key that does not open
    ignored = tuple(sorted(k for k in props if k not in KNOWN))
    return ClientSettings(
        bootstrap_servers=servers,
        security_protocol=protocol,
        sasl_mechanism=mechanism,
        sasl_username=user,
        sasl_password=password,
        tls=tls,
        client_id=(props.get("client.id") or client_id).strip() or client_id,
        config_file=command_config,
        ignored=ignored,
        _secrets=tuple(s for s in secrets if s),
    )


# -- the first connection: a failure named by its cause -------------------------------------------


class ConnectError(RuntimeError):
    """The cluster cannot be reached, its certificate is refused, or it refused the credentials
    (``kassign snapshot`` exits 2). The message is one line and holds no secret."""


def _servers(bootstrap: str) -> list[tuple[str, int]]:
    out = []
    for item in bootstrap.split(","):
        item = item.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep:
            host, port = item, "9092"
        host = host.strip("[]")
        try:
            out.append((host, int(port)))
        except ValueError:
            raise ConfigError(f"bootstrap server {item!r}: expected HOST:PORT") from None
    if not out:
        raise ConfigError("no bootstrap servers")
    return out


def _tls_reason(e: ssl.SSLError) -> str:
    if isinstance(e, ssl.SSLCertVerificationError):
        msg = e.verify_message or str(e)
        if "mismatch" in msg:
            return (
                f"the broker's certificate does not match the host name ({msg}); connect with a name the "
                "certificate holds, or set ssl.endpoint.identification.algorithm= (empty) to skip the check"
            )
        return f"the broker's certificate is not trusted ({msg}); set ssl.truststore.location to the CA that signed it"
    return f"TLS handshake failed ({e.reason or e})"


def probe(settings: ClientSettings, timeout_s: float) -> None:
    """Open one connection the way the clients will, before any of them starts: TCP to the first
    bootstrap server that answers, then the TLS handshake with the same context, then (SASL, TLS
    client certificates) a full handshake through librdkafka, whose errors say what failed.

    Raises :class:`ConnectError` with one line naming the cause; returns within about
    ``timeout_s``."""
    import socket
    import time

    deadline = time.monotonic() + timeout_s
    servers = _servers(settings.bootstrap_servers)
    reached: tuple[str, int] | None = None
    last = ""
    for host, port in servers:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            sock = socket.create_connection((host, port), timeout=max(min(left, timeout_s / len(servers)), 0.5))
        except OSError as e:
            last = f"{host}:{port}: {e.strerror or e}"
            continue
        try:
            if settings.tls is not None:
                ctx = settings.tls.ssl_context()
                try:
                    with ctx.wrap_socket(sock, server_hostname=host):
                        pass
                except ssl.SSLError as e:
                    raise ConnectError(f"{host}:{port}: {_tls_reason(e)}") from None
                except OSError as e:
                    raise ConnectError(f"{host}:{port}: TLS handshake failed ({e.strerror or e})") from None
        finally:
            sock.close()
        reached = (host, port)
        break
    if reached is None:
        raise ConnectError(f"cannot reach any bootstrap server ({last or 'timed out'}) within {timeout_s:g}s")
    _handshake(settings, deadline)


def _handshake(settings: ClientSettings, deadline: float) -> None:
    """A full connection through librdkafka, whose errors name the cause (SASL authentication,
    TLS client certificates, a listener of another protocol)."""
    import logging
    import time

    try:
        from confluent_kafka import KafkaError
        from confluent_kafka.admin import AdminClient
    except ImportError:  # pragma: no cover - depends on the environment
        return  # the kafka-python client reports what it can
    quiet = logging.getLogger("kassign.fleet.connect.librdkafka")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    errors: list[Any] = []
    conf = settings.librdkafka(max(deadline - time.monotonic(), 1.0))
    conf["error_cb"] = errors.append
    conf["logger"] = quiet
    admin = AdminClient(conf)
    fut = admin.describe_cluster(request_timeout=max(deadline - time.monotonic(), 1.0))
    while not fut.done() and time.monotonic() < deadline:
        admin.poll(0.05)
        if any(e.code() in (KafkaError._AUTHENTICATION, KafkaError._SSL, KafkaError._TRANSPORT) for e in errors):
            break
    for e in errors:
        text = settings.redact(e.str())
        text = text.split(": ", 1)[-1] if "://" in text.split(": ", 1)[0] else text
        if e.code() == KafkaError._AUTHENTICATION:
            raise ConnectError(f"authentication failed ({settings.who()}): {text}")
        if e.code() in (KafkaError._SSL, KafkaError._TRANSPORT):
            if "bad certificate" in text or "certificate required" in text or "unknown ca" in text:
                given = settings.tls is not None and settings.tls.cert_chain_pem
                raise ConnectError(
                    (
                        "the broker refused the TLS client certificate"
                        if given
                        else "the broker requires a TLS client certificate (mutual TLS): set ssl.keystore.location"
                    )
                    + f" ({text})"
                )
            raise ConnectError(f"connection failed: {text}")
    if not fut.done():
        raise ConnectError(f"no answer from {settings.bootstrap_servers} before the timeout")
    try:
        fut.result()
    except Exception as e:  # a KafkaException from librdkafka
        raise ConnectError(f"connection failed: {settings.redact(str(e))}") from None


class _RedactFilter:
    """A logging filter that replaces the settings' secrets in each record's message."""

    def __init__(self, settings: ClientSettings) -> None:
        self.settings = settings

    def filter(self, record: Any) -> bool:
        if self.settings.secrets():
            text = record.getMessage()
            clean = self.settings.redact(text)
            if clean != text:
                record.msg, record.args = clean, ()
        return True


@contextlib.contextmanager
def redacted_logs(settings: ClientSettings, prefixes: Sequence[str] = ("kafka",)) -> Iterator[None]:
    """While the block runs, the client libraries' loggers (kafka-python logs its whole
    configuration at DEBUG) drop the settings' secrets from every record, for applications that
    turn their logging on."""
    import logging

    flt = _RedactFilter(settings)
    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in prefixes]
    loggers = [logging.getLogger(n) for n in names]
    for lg in loggers:
        lg.addFilter(flt)
    try:
        yield
    finally:
        for lg in loggers:
            lg.removeFilter(flt)

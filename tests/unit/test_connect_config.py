"""kassign.fleet.connect without a broker: Java properties and JAAS parsing, the mapping to
kafka-python and librdkafka settings, refusals, and that no secret leaks through repr/source."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from kassign.fleet.connect import (
    ClientSettings,
    ConfigError,
    parse_jaas,
    parse_properties,
    read_properties,
    settings_from,
)

SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cr=t;\\"x";'


def test_java_properties_syntax():
    text = (
        "# comment\n"
        "! also a comment\n"
        "a=1\n"
        "b : two words\n"
        "c three\n"
        "d=line \\\n"
        "    continued\n"
        "e=tab\\tand\\u0041\n"
        "f\\=g=h\n"
        "empty=\n"
        "   indented = yes  \n"
    )
    assert parse_properties(text) == {
        "a": "1",
        "b": "two words",
        "c": "three",
        "d": "line continued",
        "e": "tab\tandA",
        "f=g": "h",
        "empty": "",
        "indented": "yes  ",
    }


def test_jaas_options_and_quoting():
    module, opts = parse_jaas(SCRAM)
    assert module == "org.apache.kafka.common.security.scram.ScramLoginModule"
    assert opts == {"username": "alice", "password": 's3cr=t;"x'}
    with pytest.raises(ConfigError, match="missing the ';'") as e:
        parse_jaas('x.PlainLoginModule required username="u" password="hunter2"')
    assert "hunter2" not in str(e.value)
    with pytest.raises(ConfigError, match="control flag"):
        parse_jaas('x.PlainLoginModule sometimes username="u";')


def test_sasl_ssl_maps_to_both_clients(tmp_path: Path):
    from support.secure_broker import make_pki

    pki = make_pki(tmp_path / "pki")
    cfg = tmp_path / "client.properties"
    cfg.write_text(
        "bootstrap.servers=broker:9093\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        f"sasl.jaas.config={SCRAM.replace(chr(92), chr(92) * 2)}\n"
        f"ssl.truststore.location={pki.ca_p12}\n"  # no type: read as PKCS12, like Java's JKS default does
        f"ssl.truststore.password={pki.truststore_password}\n"
        "linger.ms=5\n"
    )
    s = settings_from(None, str(cfg), ["ssl.endpoint.identification.algorithm="])
    assert (s.bootstrap_servers, s.security_protocol, s.sasl_mechanism, s.sasl_username) == (
        "broker:9093",
        "SASL_SSL",
        "SCRAM-SHA-512",
        "alice",
    )
    assert s.ignored == ("linger.ms",)
    kp = s.kafka_python(5)
    assert kp["sasl_plain_password"] == 's3cr=t;"x' and kp["security_protocol"] == "SASL_SSL"
    ctx = kp["ssl_context"]
    assert isinstance(ctx, ssl.SSLContext) and ctx.check_hostname is False
    assert ctx.get_ca_certs()[0]["subject"] == ((("commonName", "kassign test CA"),),)
    rd = s.librdkafka(5)
    assert rd["sasl.mechanisms"] == "SCRAM-SHA-512" and rd["sasl.password"] == 's3cr=t;"x'
    assert rd["ssl.endpoint.identification.algorithm"] == "none"
    assert "kassign test CA" not in rd["ssl.ca.pem"] and rd["ssl.ca.pem"].startswith("-----BEGIN CERTIFICATE-----")
    # nothing shown or recorded holds the password
    for shown in (repr(s), str(s.source()), s.who()):
        assert "s3cr" not in shown
    assert s.redact('oops s3cr=t;"x leaked') == "oops *** leaked"


def test_pkcs12_and_pem_key_stores(tmp_path: Path):
    from support.secure_broker import make_pki

    pki = make_pki(tmp_path / "pki")
    p12 = settings_from(
        "h:1",
        None,
        [
            "security.protocol=SSL",
            f"ssl.keystore.location={pki.client_p12}",
            "ssl.keystore.type=PKCS12",
            f"ssl.keystore.password={pki.keystore_password}",
            f"ssl.truststore.location={pki.ca_pem}",
            "ssl.truststore.type=PEM",
        ],
    )
    pem = settings_from(
        "h:1",
        None,
        [
            "security.protocol=SSL",
            f"ssl.keystore.location={pki.client_pem}",
            "ssl.keystore.type=PEM",
            f"ssl.key.password={pki.key_password}",
        ],
    )
    for s in (p12, pem):
        assert s.tls is not None and s.tls.cert_chain_pem and "BEGIN CERTIFICATE" in s.tls.cert_chain_pem
        assert s.who() == "a TLS client certificate"
        assert s.librdkafka(1)["ssl.certificate.pem"] == s.tls.cert_chain_pem
        assert pki.keystore_password not in repr(s) and pki.key_password not in repr(s)
    assert pem.tls is not None and pem.tls.ca_pem is None and pem.librdkafka(1)["ssl.ca.location"] == "probe"
    with pytest.raises(ConfigError, match="wrong password") as e:
        settings_from(
            "h:1",
            None,
            ["security.protocol=SSL", f"ssl.keystore.location={pki.client_p12}", "ssl.keystore.password=nope"],
        )
    with pytest.raises(ConfigError, match="private key does not open"):
        settings_from(
            "h:1",
            None,
            [
                "security.protocol=SSL",
                f"ssl.keystore.location={pki.client_pem}",
                "ssl.keystore.type=PEM",
                "ssl.key.password=nope",
            ],
        )
    assert "nope" not in str(e.value)


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (["security.protocol=SASL_SSL", "sasl.mechanism=GSSAPI"], "GSSAPI.*not supported.*SCRAM"),
        (["security.protocol=SASL_SSL", "sasl.mechanism=AWS_MSK_IAM"], "AWS_MSK_IAM is not supported"),
        (["security.protocol=SASL_SSL"], "sasl.mechanism=GSSAPI"),  # the Java default mechanism
        (["security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN"], "needs sasl.jaas.config"),
        (
            [
                "security.protocol=SASL_PLAINTEXT",
                "sasl.mechanism=SCRAM-SHA-256",
                "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
            ],
            "OAUTHBEARER is not supported",
        ),
        (
            [
                "security.protocol=SASL_PLAINTEXT",
                "sasl.mechanism=PLAIN",
                "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                "username=u password=p;",
            ],
            "does not go with sasl.mechanism=PLAIN",
        ),
        (["security.protocol=TLS"], "expected one of PLAINTEXT, SSL"),
        (["security.protocol=SSL", "ssl.endpoint.identification.algorithm=ldap"], "expected https"),
        (["security.protocol=SSL", "ssl.truststore.location=/no/such/file"], "no such file"),
        (["security.protocol=SSL", "ssl.keystore.key=-----BEGIN PRIVATE KEY-----"], "go together"),
        (["-X"], "expected KEY=VALUE"),
    ],
)
def test_refusals_name_the_problem(props, message):
    with pytest.raises(ConfigError, match=message):
        settings_from("h:1", None, props)


def test_a_jks_file_is_refused_and_a_pkcs12_file_typed_jks_is_read(tmp_path: Path):
    from support.secure_broker import make_pki

    jks = tmp_path / "trust.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\x00" * 60)  # the JKS magic number
    for declared in ([], ["ssl.truststore.type=JKS"]):
        with pytest.raises(ConfigError, match=r"JKS stores are not supported.*keytool -importkeystore"):
            settings_from("h:1", None, ["security.protocol=SSL", f"ssl.truststore.location={jks}", *declared])
    pki = make_pki(tmp_path / "pki")  # Java's JKS loader opens PKCS12 files too: so does kassign
    s = settings_from(
        "h:1",
        None,
        [
            "security.protocol=SSL",
            "ssl.truststore.type=JKS",
            f"ssl.truststore.location={pki.ca_p12}",
            f"ssl.truststore.password={pki.truststore_password}",
        ],
    )
    assert s.tls is not None and s.tls.ca_pem is not None


def test_config_file_errors(tmp_path: Path):
    with pytest.raises(ConfigError, match="no such file"):
        read_properties(str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="is a directory"):
        read_properties(str(tmp_path))
    big = tmp_path / "big"
    big.write_bytes(b"a=" + b"x" * (1 << 20))
    with pytest.raises(ConfigError, match="larger than"):
        read_properties(str(big))
    with pytest.raises(ConfigError, match="no bootstrap servers"):
        settings_from(None, None, [])


def test_plaintext_default():
    s = ClientSettings(bootstrap_servers="h:1")
    assert s.kafka_python(2)["security_protocol"] == "PLAINTEXT" and "ssl_context" not in s.kafka_python(2)
    assert s.librdkafka(2)["security.protocol"] == "plaintext"
    assert s.source() == {"kind": "kafka", "bootstrap_servers": "h:1", "security_protocol": "PLAINTEXT"}

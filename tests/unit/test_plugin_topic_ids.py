"""The three-broker plugin test names topics by their ids as the plugin does (Java's
``Uuid.toString()``), not as confluent-kafka prints them: the two base64 alphabets sort
differently, and the plugin breaks ties by topic order."""

from __future__ import annotations

from confluent_kafka import Uuid

from support.kafka_plugin_cluster import java_uuid_string


def test_librdkafka_uuid_spelling_becomes_javas() -> None:
    # All bits set: standard base64 "////...w", URL-safe "____...w" (java.util.Base64 URL encoder).
    assert java_uuid_string(str(Uuid(-1, -1))) == "_" * 21 + "w"
    spelled = java_uuid_string(str(Uuid(0x0FBF_0000_0000_0000, 0x3E00_0000_0000_0000)))
    assert spelled == "D78AAAAAAAA-AAAAAAAAAA"
    assert "+" not in spelled and "/" not in spelled

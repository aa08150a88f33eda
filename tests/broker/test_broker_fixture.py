"""The real-broker fixture itself: it starts, creates topics and round-trips numbered messages."""

import time

import pytest

pytestmark = pytest.mark.broker


def test_broker_starts_fast_and_round_trips_messages(kafka_broker):
    assert kafka_broker.bootstrap.startswith("127.0.0.1:")
    assert kafka_broker.alive()
    assert kafka_broker.started_in is not None and kafka_broker.started_in < 60
    topic = kafka_broker.create_topic(kafka_broker.unique_name("fixture"), partitions=3)
    counts = kafka_broker.produce_numbered([topic], 300)
    assert counts == {topic: 300}
    ends = kafka_broker.end_offsets([topic])
    assert ends == {(topic, 0): 100, (topic, 1): 100, (topic, 2): 100}

    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=kafka_broker.bootstrap,
        group_id=kafka_broker.unique_name("g"),
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
    )
    seen = set()
    deadline = time.monotonic() + 30
    try:
        while len(seen) < 300 and time.monotonic() < deadline:
            for records in consumer.poll(500).values():
                seen.update(int(r.value) for r in records)
    finally:
        consumer.close()
    assert seen == set(range(300))

"""Test harnesses shared by every test folder (tests/unit, properties, differential, broker,
spark): the real-broker fixture and its worker processes, the Java and server differential
harnesses, the oracles, the Spark environment, the headless browser.

Import them as ``from support import kafka_broker`` (pytest puts tests/ on sys.path through
``pythonpath`` in pyproject.toml); scripts launched by path insert tests/ themselves.
"""

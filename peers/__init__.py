"""The peers shared by the differential tests and the benchmarks, from one place.

* ``peers/java``: the Apache Kafka (kafka-clients, kafka-group-coordinator) harness, a Maven project;
* ``peers/go``: the franz-go harness, a Go module;
* :mod:`peers.contenders`: builds and drives them (and the Python contenders) over one line protocol;
* :mod:`peers.scenarios`: the seeded scenario documents the benchmarks and tests feed them;
* :mod:`peers.lag_quality`: the lag-quality measurement (docs/lag_quality.md) a test checks;
* :mod:`peers.server_diff`, :mod:`peers.server_kassign_diff`: the broker-side (KIP-848) differential
  drivers (the coordinator's classes against kassign's ``server-*`` strategies and broker plugin),
  whose Java build and jar paths benches/broker_plugin.py uses too.

Tests import ``peers`` (pytest puts the repo root on sys.path through ``pythonpath``), and so do the
scripts in benches/ (each inserts the repo root); no test imports benches/.
"""

"""The fleet pipeline on PySpark (``kassign fleet``): every strategy on every group of a snapshot.

* :mod:`kassign.fleet.snapshot`, :mod:`kassign.fleet.collect`, :mod:`kassign.fleet.synth` - the
  snapshot format, reading one from a cluster, generating a synthetic one.
* :mod:`kassign.fleet.job` - the orchestration of the job, with its rooms:
  :mod:`kassign.fleet.config` (configuration), :mod:`kassign.fleet.session` (the Spark session and
  the driver JVM) and :mod:`kassign.fleet.plan` (the Spark plan: by default one sorted exchange of
  each group's rows to ``mapInArrow``, the partitions and offsets shipped as Arrow files,
  :mod:`kassign.fleet.stream`; ``--plan cogroup`` keeps every table in Spark).
* :mod:`kassign.fleet.evaluate` - one group in a Spark task: the Rust core builds its inputs
  (lags included), runs every strategy, measures the results and replays churn.
* :mod:`kassign.fleet.report` - the HTML report with its figures (:mod:`kassign.fleet.plots`), the
  consumer-protocol view (:mod:`kassign.fleet.migration`), the per-group recommendations
  (:mod:`kassign.fleet.recommend`) and the exports for monitoring (:mod:`kassign.fleet.export`).

PySpark is an optional dependency (``pip install 'kassign[spark]'``); importing this package does
not import it.
"""

#: ``spark.driver.memory`` when ``kassign fleet`` starts the JVM (local mode: that JVM is the whole
#: Spark side). 1g ran the 10,000-group synthetic fleet (2 M members, 4 M partitions) with a peak RSS
#: of 2.15 GiB for the whole process tree where 2g took 3.16 GiB (notes/fleet-measurements.md): the
#: heap holds the reads' and shuffles' buffers; the per-group work and the report run in Python.
DEFAULT_DRIVER_MEMORY = "1g"

"""The fleet pipeline on PySpark (``kassign fleet``): every strategy on every group of a snapshot.

* :mod:`kassign.fleet.group` - one group: snapshot rows -> kassign inputs -> metrics (no Spark).
* :mod:`kassign.fleet.churn` - the what-if leave/join replay.
* :mod:`kassign.fleet.job` - the Spark job (groupBy/cogroup + ``applyInArrow``).
* :mod:`kassign.fleet.report` - HTML report with PNG plots and the console summary.

PySpark is an optional dependency (``pip install 'kassign[spark]'``); importing this package does
not import it.
"""

#: ``spark.driver.memory`` when ``kassign fleet`` starts the JVM (local mode: that JVM is the whole
#: Spark side). 1g ran the 10,000-group synthetic fleet (2 M members, 4 M partitions) with a peak RSS
#: of 2.15 GiB for the whole process tree where 2g took 3.16 GiB (docs/fleet.md, "Measured"): the
#: heap holds the reads' and shuffles' buffers; the per-group work and the report run in Python.
DEFAULT_DRIVER_MEMORY = "1g"

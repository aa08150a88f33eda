"""The fleet pipeline on PySpark (``kassign fleet``): every strategy on every group of a snapshot.

* :mod:`kassign.fleet.group` - one group: snapshot rows -> kassign inputs -> metrics (no Spark).
* :mod:`kassign.fleet.churn` - the what-if leave/join replay.
* :mod:`kassign.fleet.job` - the Spark job (groupBy/cogroup + ``applyInArrow``).
* :mod:`kassign.fleet.report` - HTML report with PNG plots and the console summary.

PySpark is an optional dependency (``pip install 'kassign[spark]'``); importing this package does
not import it.
"""

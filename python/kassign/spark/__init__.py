"""The fleet pipeline on PySpark (``kassign fleet``): every strategy on every group of a snapshot.

* :mod:`kassign.spark.group` - one group: snapshot rows -> kassign inputs -> metrics (no Spark).
* :mod:`kassign.spark.churn` - the what-if leave/join replay.
* :mod:`kassign.spark.job` - the Spark job (groupBy/cogroup + ``applyInArrow``).
* :mod:`kassign.spark.report` - HTML report with PNG plots and the console summary.

PySpark is an optional dependency (``pip install 'kassign[spark]'``); importing this package does
not import it.
"""

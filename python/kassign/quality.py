"""Quality metrics of an assignment: the public name of :mod:`kassign.fleet.quality`.

The metrics live with the fleet report that defines them (``kassign/fleet/quality.py``); they are
pure functions over ``kassign.Member`` and assignments, useful on their own (e.g. to measure
``kassign.assign`` results in a test), so they keep this short import path. Importing it does not
import pyarrow or pyspark.
"""

from .fleet.quality import *  # noqa: F403
from .fleet.quality import __all__  # noqa: F401

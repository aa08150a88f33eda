"""Test oracles: the Python references the core's implementations replaced.

Each module here is the Python implementation a Rust one took over from (kept as it was, apart
from imports), and the tests beside it compare the two on random inputs. None of it ships in the
wheel.
"""

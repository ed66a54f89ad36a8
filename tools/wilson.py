"""The Wilson score interval of a proportion, shared by the VALIDATION.md
tools (validation_crosscheck.py, baseline_table.py), written here apart from
the C++ (sim/experiment/statistics.cpp) so that the tables check it."""
import math


def wilson(x, n, z):
    """Interval of x successes in n trials at the normal quantile z (1.96 for 95%)."""
    if n == 0:
        return 0.0, 1.0
    p = x / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, c - h), min(1.0, c + h)

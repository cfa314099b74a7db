"""Resident memory of this process, as the benchmarks print it (MB)."""
from __future__ import annotations

import resource
import sys


def rss_mb() -> float:
    """Resident memory now (Linux ``VmRSS``; NaN where /proc is not there)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def peak_rss_mb(children: bool = False) -> float:
    """Peak resident memory of this process (with ``children``: or of its largest finished child process)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if children:
        kb = max(kb, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return kb / 1024.0 if sys.platform != "darwin" else kb / 2 ** 20

"""Truth-fed perception: the real perception code with each network's forward replaced by a stand-in
that returns the simulator's ground truth in that network's own output format (see source.py)."""
from .source import TruthSource

__all__ = ["TruthSource"]

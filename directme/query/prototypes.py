"""Prototype sentences per question kind, gathered from the kind modules (query/kinds/<kind>.py), where each
kind's sentences live beside its meaning, cue rules and solver. Add sentences there to teach the parser a
phrasing; the classifier's confidence is calibrated on them (leave-one-out), so no evaluation data is needed."""
from __future__ import annotations

from .kinds import REGISTRY, kind_names

KINDS = kind_names()
PROTOTYPES: dict[str, tuple[str, ...]] = {k: REGISTRY[k].prototypes for k in KINDS}

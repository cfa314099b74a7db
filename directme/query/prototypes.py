"""Prototype sentences per question kind, gathered from the kind modules (query/kinds/<kind>.py), where each
kind's sentences live beside its meaning, cue rules and solver. Add sentences there to teach the parser a
phrasing; the classifier's confidence is calibrated on them (leave-one-out), so no evaluation data is needed."""
from __future__ import annotations

from .kinds import classifier_prototypes

PROTOTYPES: dict[str, tuple[str, ...]] = classifier_prototypes()  # a refining kind's join the kind it refines
KINDS = tuple(PROTOTYPES)

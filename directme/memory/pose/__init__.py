"""Pose correction: the stages that keep the input's drifting poses consistent with the memory, in their order
(corrector.py): vertical, heading, scan registration, relocalisation."""
from .correction import Correction, with_pose
from .corrector import STAGES, PoseCorrector

__all__ = ["Correction", "PoseCorrector", "STAGES", "with_pose"]

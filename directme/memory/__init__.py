"""directme.memory: the causal streaming spatial memory (world-frame map + time-versioned scene graph)."""
from .config import MemoryConfig
from .snapshot import EgoTrack, KeyframeRef, MemorySnapshot, ObjectNode, PlaceNode
from .store import SpatialMemory

__all__ = ["EgoTrack", "KeyframeRef", "MemoryConfig", "MemorySnapshot", "ObjectNode", "PlaceNode", "SpatialMemory"]

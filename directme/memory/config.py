"""Parameters of the spatial memory in sections (metres, seconds, pixels; frozen so a memory's behaviour is
fixed). Every tuning constant of ``directme.memory`` is a field of a section (sections.py, pose_sections.py)
with a one-line doc; why a value was chosen is in docs/memory.md and docs/performance.md."""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping, Optional

from ..errors import InvalidInputError
from .pose_sections import HeadingConfig, RelocalisationConfig, ScanConfig, VerticalConfig
from .sections import AssociationConfig, GoneConfig, KeyframeConfig, MapConfig, OutlineConfig, PlacesConfig

__all__ = ["AssociationConfig", "GoneConfig", "HeadingConfig", "KeyframeConfig", "MapConfig", "MemoryConfig",
           "OutlineConfig", "PlacesConfig", "RelocalisationConfig", "ScanConfig", "VerticalConfig"]


_SECTIONS = {"map": MapConfig, "association": AssociationConfig, "relocalisation": RelocalisationConfig,
             "vertical": VerticalConfig, "heading": HeadingConfig, "scan": ScanConfig, "keyframes": KeyframeConfig,
             "gone": GoneConfig, "places": PlacesConfig,
             "outline": OutlineConfig}

# flat keys of the format before the sections (saved configs and old code): key -> (section, field)
_FLAT: dict[str, tuple[str, str]] = {
    **{k: ("map", k) for k in ("voxel_m", "max_voxels_per_object", "pixel_stride", "min_points", "max_depth_m",
                               "position_trim", "obs_trim")},
    **{k: ("association", k) for k in ("overlap_min", "match_radius_m", "reentry_radius_m", "drift_per_m",
                                       "max_reentry_m", "embed_min", "track_jump_m", "move_confirm", "confirm_obs")},
    "relocalize": ("relocalisation", "enabled"),
    **{f"reloc_{k}": ("relocalisation", k) for k in ("search_m", "base_m", "window_s", "tol_m", "min_support",
                                                     "min_shift_m", "max_vertical_m", "big_shift_m", "max_yaw_deg",
                                                     "min_baseline_m")},
    "heading_from_structure": ("heading", "enabled"),
    **{f"heading_{k}": ("heading", k) for k in ("grid_cols", "min_strength", "max_deg", "interval_s", "ref_frames",
                                                "noise_deg", "drift_deg_per_min", "min_deg")},
    "max_keyframes_per_object": ("keyframes", "max_per_object"),
    **{f"keyframe_{k}": ("keyframes", k) for k in ("min_gap_s", "min_angle_deg", "image_max_side", "jpeg_quality")},
    **{f"gone_{k}": ("gone", k) for k in ("margin_px", "depth_tol_m", "depth_rel", "min_empty", "min_px")},
    "place_eps_m": ("places", "eps_m"), "edge_distance_m": ("places", "edge_distance_m"),
    "edge_knn": ("places", "edge_knn"),
}

# fields that moved to another section: (old section, old field) -> (section, field); read with a DeprecationWarning
_MOVED: dict[tuple[str, str], tuple[str, str]] = {
    ("heading", f"up_{k}"): ("vertical", k) for k in ("refine_max_deg", "window_s", "min_normals", "max_wait_s")}

# fields that no longer exist (the gone-frame counter and view cone became the presence belief): read from
# older saves, ignored with a DeprecationWarning
_RETIRED: dict[str, frozenset[str]] = {"gone": frozenset({"frames", "view_half_fov_deg", "view_range_m"})}
_RETIRED_FLAT = frozenset({"gone_frames"})


@dataclass(frozen=True)
class MemoryConfig:
    """How frames are lifted, objects associated and found gone, drift corrected, places clustered and the
    graph built; one section per concern."""

    map: MapConfig = field(default_factory=MapConfig)
    association: AssociationConfig = field(default_factory=AssociationConfig)
    relocalisation: RelocalisationConfig = field(default_factory=RelocalisationConfig)
    vertical: VerticalConfig = field(default_factory=VerticalConfig)
    heading: HeadingConfig = field(default_factory=HeadingConfig)
    scan: ScanConfig = field(default_factory=ScanConfig)
    keyframes: KeyframeConfig = field(default_factory=KeyframeConfig)
    gone: GoneConfig = field(default_factory=GoneConfig)
    places: PlacesConfig = field(default_factory=PlacesConfig)
    outline: OutlineConfig = field(default_factory=OutlineConfig)
    up_world: Optional[tuple[float, float, float]] = None  # world up, when known; None: estimated (memory.vertical)

    def __post_init__(self) -> None:
        for name, cls in _SECTIONS.items():
            if not isinstance(getattr(self, name), cls):
                raise InvalidInputError(f"MemoryConfig.{name} must be a {cls.__name__}, got "
                                        f"{type(getattr(self, name)).__name__}")
        if self.up_world is not None:
            object.__setattr__(self, "up_world", _up_world(self.up_world, "memory.up_world"))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def replace(self, **dotted: Any) -> "MemoryConfig":
        """A copy with fields changed, named ``section__field`` (or ``up_world``)."""
        d = self.to_dict()
        for key, value in dotted.items():
            section, _, name = key.partition("__")
            if not name:
                d[section] = value
            else:
                d.setdefault(section, {})[name] = value
        return MemoryConfig.from_dict(d)

    @staticmethod
    def from_dict(d: Mapping[str, Any], path: str = "memory") -> "MemoryConfig":
        """From ``{"association": {...}, ..., "up_world": ...}``, strictly typed (``directme.validation``:
        booleans only from booleans, integers only from integers, numbers not from strings, each in its
        range; an error names the key path, ``memory.relocalisation.enabled: expected a boolean ...``).
        Flat keys of the older format (for example ``relocalize`` or ``voxel_m`` in a saved agent) are read
        with a DeprecationWarning naming the new key."""
        from ..validation import describe, parse_dataclass

        if isinstance(d, MemoryConfig):
            return d
        if not isinstance(d, Mapping):
            raise InvalidInputError(f"{path}: expected a mapping of sections, got {describe(d)}")
        nested: dict[str, dict[str, Any]] = {name: {} for name in _SECTIONS}
        up = d.get("up_world")
        old = []
        for key, value in d.items():
            if key == "up_world":
                continue
            if isinstance(key, str) and key in _SECTIONS:
                if not isinstance(value, Mapping):
                    raise InvalidInputError(f"MemoryConfig.{key} ({path}.{key}) must be a mapping of its fields, "
                                            f"got {describe(value)}")
                nested[key].update(value)
            elif isinstance(key, str) and key in _RETIRED_FLAT:
                old.append(f"{key} (retired: the presence belief of memory.gone replaces it)")
            elif isinstance(key, str) and key in _FLAT:
                section, name = _FLAT[key]
                nested[section][name] = value
                old.append(f"{key} -> {section}.{name}")
            else:
                raise InvalidInputError(f"unknown MemoryConfig key {describe(key)} in {path}; sections: "
                                        f"{sorted(_SECTIONS)} and up_world (docs/memory.md lists every field)")
        for (section, name), (new_section, new_name) in _MOVED.items():
            if name in nested[section]:
                nested[new_section].setdefault(new_name, nested[section].pop(name))
                old.append(f"{section}.{name} -> {new_section}.{new_name}")
        for name, retired in _RETIRED.items():
            for gone in sorted(set(nested[name]) & retired):
                del nested[name][gone]
                old.append(f"{name}.{gone} (retired: the presence belief of memory.gone replaces it)")
        if old:
            warnings.warn("MemoryConfig: older keys are deprecated, use the sections: " + ", ".join(old),
                          DeprecationWarning, stacklevel=2)
        kw: dict[str, Any] = {}
        for name, cls in _SECTIONS.items():
            known = {f.name for f in fields(cls)}
            unknown = set(nested[name]) - known
            if unknown:
                raise InvalidInputError(f"unknown MemoryConfig.{name} fields {sorted(map(str, unknown))} "
                                        f"({path}.{name}); known: {sorted(known)}")
            kw[name] = parse_dataclass(cls, nested[name], f"{path}.{name}")
        if up is not None:
            kw["up_world"] = _up_world(up, f"{path}.up_world")
        return MemoryConfig(**kw)


def _up_world(value: Any, path: str) -> tuple[float, float, float]:
    """Three finite numbers, not all zero (a direction), as floats."""
    ok = isinstance(value, (tuple, list)) and len(value) == 3 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    if not ok or math.hypot(*value) == 0:
        raise InvalidInputError(f"{path}: expected 3 finite numbers, not all zero (the world's up direction) or "
                                f"null, got {value!r:.80}")
    return (float(value[0]), float(value[1]), float(value[2]))

"""Parameters of the spatial memory (metres, seconds, pixels; frozen so a memory's behaviour is fixed)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, Optional

from ..errors import InvalidInputError


@dataclass(frozen=True)
class MemoryConfig:
    """How frames are lifted, objects associated, places clustered and the graph built."""

    # map
    voxel_m: float = 0.05  # voxel size of each object's point set
    max_voxels_per_object: int = 2048  # cap on each object's voxel set (the farthest-from-centre are dropped)
    pixel_stride: int = 4  # back-project every n-th pixel of each mask (rows and columns)
    min_points: int = 3  # instances with fewer valid lifted points are skipped
    max_depth_m: float = 20.0  # lifted points farther than this are ignored
    position_trim: float = 0.02  # position = centre of the [trim, 1 - trim] quantile box of the voxels
    obs_trim: float = 0.1  # the same for one observation's points (used to associate it)

    # association
    overlap_min: float = 0.2  # fraction of an instance's voxels inside a node's (dilated) voxels to match
    match_radius_m: float = 0.15  # centre distance that also counts as a geometric match (+ extent/8)
    reentry_radius_m: float = 0.6  # larger radius for nodes not seen for 10 s (absorbs pose drift) ...
    drift_per_m: float = 0.05  # ... growing by this much per metre walked since they were last seen ...
    max_reentry_m: float = 1.5  # ... up to this (3.0 measured worse: re-entering objects joined another of their class)
    embed_min: float = 0.8  # cosine similarity at which embeddings agree
    track_jump_m: float = 0.5  # a tracked object's anchor farther than this from its node is a move candidate
    move_confirm: int = 2  # consecutive consistent far observations that confirm a new placement
    confirm_obs: int = 2  # a node seen in fewer frames is tentative: no drift allowance when matching, and an
    #                       instance of another label that covers it absorbs it (a false or confused detection)

    # relocalisation on remembered landmarks (corrects input pose drift; relocalize.py)
    relocalize: bool = True
    reloc_search_m: float = 8.0  # same-label landmarks this close to an instance are candidates ...
    reloc_base_m: float = 1.0  # ... if their offset is within this + drift_per_m * metres walked since seen
    reloc_window_s: float = 6.0  # landmark pairs of the frames of the last seconds are pooled
    reloc_tol_m: float = 0.35  # landmarks the correction brings this close agree with it
    reloc_min_support: int = 2  # distinct landmarks that must agree on one correction
    reloc_min_shift_m: float = 0.15  # smaller position changes (and turns under 1 degree) are never applied
    reloc_max_vertical_m: float = 0.2  # odometry drifts along the floor: a larger vertical offset is a wrong match
    reloc_big_shift_m: float = 1.5  # a larger correction needs one more agreeing landmark
    # heading corrections (about the up axis): off by default - with object-centre landmarks from noisy depth
    # they were measured to add wrong turns (docs/performance.md); enable for precise depth sensors
    reloc_max_yaw_deg: float = 0.0  # largest heading correction; 0: translation only
    reloc_min_baseline_m: float = 3.0  # a rotation needs >= 3 agreeing landmarks spanning this distance
    # heading corrections from the dominant directions of walls and furniture (heading.py; Manhattan world)
    heading_from_structure: bool = True
    heading_grid_cols: int = 64  # surface normals on a grid of about this many columns of the depth map
    heading_min_strength: float = 0.4  # a frame counts when its vertical surfaces agree this well on one direction
    heading_max_deg: float = 10.0  # ... and its structure is turned by at most this from the reference
    heading_interval_s: float = 1.0  # at most one frame measured per interval (views a moment apart share a bias)
    heading_ref_frames: int = 15  # the reference: median structure heading of the first structured frames
    heading_noise_deg: float = 1.0  # one frame's structure heading error (Kalman measurement noise) ...
    heading_drift_deg_per_min: float = 1.0  # ... and the odometry heading's random walk (process noise)
    heading_min_deg: float = 1.0  # the filtered offset is applied when at least this large and this certain

    # keyframes
    max_keyframes_per_object: int = 4
    keyframe_min_gap_s: float = 5.0  # keyframes of one object are at least this far apart in time
    keyframe_min_angle_deg: float = 20.0  # ... or seen from a viewpoint this different
    keyframe_image_max_side: int = 160  # stored keyframe images are downsampled to this size
    keyframe_jpeg_quality: int = 80

    # gone detection
    gone_frames: int = 3  # frames with the object's place in view, unoccluded and empty before it is gone
    gone_margin_px: int = 8  # the object's centre must project at least this far inside the image
    gone_depth_tol_m: float = 0.03  # "empty": scene depth there >= object centre depth + tol + rel * depth
    gone_depth_rel: float = 0.01
    gone_min_empty: float = 0.6  # fraction of the object's visible, unoccluded points that must be empty
    gone_min_px: float = 6.0  # the object must project to at least this many pixels across

    # places and graph
    place_eps_m: float = 2.5  # a wearer position joins the nearest place of its tag within this distance
    edge_distance_m: float = 1.5  # object-object edges for pairs closer than this
    edge_knn: int = 3  # ... and to each object's k nearest neighbours
    up_world: Optional[tuple[float, float, float]] = None  # None: -y axis of the first camera

    def __post_init__(self) -> None:
        positive = ("voxel_m", "match_radius_m", "reentry_radius_m", "max_reentry_m", "track_jump_m", "place_eps_m",
                    "edge_distance_m", "max_depth_m", "reloc_search_m", "reloc_base_m", "reloc_tol_m",
                    "reloc_window_s", "reloc_min_baseline_m", "reloc_max_vertical_m", "reloc_big_shift_m",
                    "heading_max_deg", "heading_noise_deg", "heading_drift_deg_per_min")
        for name in positive:
            if not float(getattr(self, name)) > 0:
                raise InvalidInputError(f"MemoryConfig.{name} must be > 0, got {getattr(self, name)}")
        for name in ("pixel_stride", "max_voxels_per_object", "max_keyframes_per_object", "gone_frames",
                     "move_confirm", "min_points", "reloc_min_support", "confirm_obs", "heading_grid_cols",
                     "heading_ref_frames"):
            if int(getattr(self, name)) < 1:
                raise InvalidInputError(f"MemoryConfig.{name} must be >= 1, got {getattr(self, name)}")
        for name in ("position_trim", "obs_trim"):
            if not 0 <= getattr(self, name) < 0.5:
                raise InvalidInputError(f"MemoryConfig.{name} must be in [0, 0.5), got {getattr(self, name)}")
        if not 0 <= self.reloc_max_yaw_deg <= 90:
            raise InvalidInputError(f"MemoryConfig.reloc_max_yaw_deg must be in [0, 90], got {self.reloc_max_yaw_deg}")
        if not 0 <= self.heading_min_strength <= 1 or self.heading_min_deg < 0:
            raise InvalidInputError("MemoryConfig.heading_min_strength must be in [0, 1] and heading_min_deg >= 0, "
                                    f"got {self.heading_min_strength}, {self.heading_min_deg}")
        if self.up_world is not None and len(self.up_world) != 3:
            raise InvalidInputError(f"MemoryConfig.up_world must be 3 numbers or None, got {self.up_world}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> "MemoryConfig":
        known = set(MemoryConfig.__dataclass_fields__)
        unknown = set(d) - known
        if unknown:
            raise InvalidInputError(f"unknown MemoryConfig fields {sorted(unknown)}; known: {sorted(known)}")
        kw = dict(d)
        if kw.get("up_world") is not None:
            kw["up_world"] = tuple(float(v) for v in kw["up_world"])
        return MemoryConfig(**kw)

"""Parameters of the spatial memory in sections (metres, seconds, pixels; frozen so a memory's
behaviour is fixed). Every tuning constant of ``directme.memory`` lives here with a one-line doc;
why a value was chosen is in docs/memory.md and docs/performance.md."""
from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping, Optional

from ..errors import InvalidInputError


def _check(section: object, positive: tuple[str, ...] = (), at_least_one: tuple[str, ...] = (),
           unit: tuple[str, ...] = (), non_negative: tuple[str, ...] = ()) -> None:
    """Type and range checks shared by the sections: each field of the type it is declared with (bool, int,
    float: finite), then > 0, integers >= 1, fractions in [0, 1] and >= 0; a message names the key path
    (``memory.map.pixel_stride``). ``MemoryConfig.from_dict`` parses strictly before (directme.validation)."""
    for fd in fields(section):  # type: ignore[arg-type]
        v, kind = getattr(section, fd.name), fd.type
        ok = (isinstance(v, bool) if kind == "bool" else
              isinstance(v, numbers.Integral) and not isinstance(v, bool) if kind == "int" else
              isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) if kind == "float" else True)
        if not ok:
            raise InvalidInputError(f"{_path(section, fd.name)}: expected {_KIND_WORDS[kind]}, got {v!r:.60}")
    for f in positive:
        if not _number(section, f) > 0:
            raise InvalidInputError(f"{_path(section, f)} must be > 0, got {getattr(section, f)!r}")
    for f in at_least_one:
        if not _number(section, f) >= 1:
            raise InvalidInputError(f"{_path(section, f)} must be >= 1, got {getattr(section, f)!r}")
    for f in unit:
        if not 0 <= _number(section, f) <= 1:
            raise InvalidInputError(f"{_path(section, f)} must be in [0, 1], got {getattr(section, f)!r}")
    for f in non_negative:
        if not _number(section, f) >= 0:
            raise InvalidInputError(f"{_path(section, f)} must be >= 0, got {getattr(section, f)!r}")


_KIND_WORDS = {"bool": "a boolean (true or false)", "int": "an integer", "float": "a finite number"}


def _path(section: object, f: str) -> str:
    return f"memory.{_SECTION_OF.get(type(section), type(section).__name__)}.{f}"


def _number(section: object, f: str) -> float:
    """The field as a float (NaN for a value of the wrong type: every range check then fails, naming it)."""
    v = getattr(section, f)
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return math.nan
    try:
        return float(v)
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class MapConfig:
    """How each frame's instances are lifted into world points and voxels."""

    voxel_m: float = 0.05  # voxel size of each object's point set
    max_voxels_per_object: int = 2048  # cap on each object's voxel set (the farthest-from-centre are dropped)
    pixel_stride: int = 4  # back-project every n-th pixel of each mask (rows and columns)
    min_points: int = 3  # instances with fewer valid lifted points are skipped
    max_depth_m: float = 20.0  # lifted points farther than this are ignored
    position_trim: float = 0.02  # position = centre of the [trim, 1 - trim] quantile box of the voxels
    obs_trim: float = 0.1  # the same for one observation's points (used to associate it)
    min_cam_depth_m: float = 0.2  # points nearer the camera than this are never projected (carving, gone checks)
    max_instances_per_frame: int = 1000  # a frame with more instances is refused (a detector's output, not a scene)

    def __post_init__(self) -> None:
        _check(self, positive=("voxel_m", "max_depth_m", "min_cam_depth_m"),
               at_least_one=("pixel_stride", "max_voxels_per_object", "min_points", "max_instances_per_frame"))
        for f in ("position_trim", "obs_trim"):
            if not 0 <= _number(self, f) < 0.5:
                raise InvalidInputError(f"{_path(self, f)} must be in [0, 0.5), got {getattr(self, f)!r}")


@dataclass(frozen=True)
class AssociationConfig:
    """How an instance is matched to a remembered object, and when an object moved."""

    overlap_min: float = 0.2  # fraction of an instance's voxels inside a node's (dilated) voxels to match
    match_radius_m: float = 0.15  # centre distance that also counts as a geometric match (+ tight_extent_frac x size)
    tight_extent_frac: float = 0.125  # share of the node's largest extent added to match_radius_m
    recent_s: float = 10.0  # a node seen this recently must match tightly (no drift allowance)
    reentry_radius_m: float = 0.6  # radius for nodes not seen for recent_s (absorbs pose drift) ...
    drift_per_m: float = 0.05  # ... growing by this much per metre walked since they were last seen ...
    max_reentry_m: float = 1.5  # ... up to this
    search_min_m: float = 1.5  # candidates are searched at least this far around an instance
    strong_score: float = 1.5  # geometric score of a tight match (centre within half the radius) of another label
    track_bonus: float = 2.0  # score added to the node an instance's tracker id is bound to
    semantic_weight: float = 0.5  # weight of the label/embedding agreement in a candidate's score
    embed_min: float = 0.8  # cosine similarity at which embeddings agree
    embed_veto_margin: float = 0.3  # embeddings below embed_min minus this disagree: never the same object
    label_share_min: float = 0.25  # the instance's label has less of the node's votes: the labels disagree ...
    mismatch_size_ratio: float = 2.0  # ... and an instance this many times larger than the node is another object
    track_jump_m: float = 0.5  # a tracked object's anchor farther than this from its node is a move candidate
    move_confirm: int = 1  # consecutive consistent far observations (same track, agreeing label) that confirm a new placement
    confirm_obs: int = 2  # a node seen in fewer frames is tentative (no drift allowance; absorbed when covered)
    stand_in_merge: int = 3  # seen in its stead this often (never together): a same-label node is this one (0: off)
    ambiguous_m: float = 0.3  # two neighbours this close to equally near: which one a stray node was is unknown
    carve_min_frac: float = 0.5  # carving needs at least this share of the node's voxels in view seen through
    carry_max_depth_m: float = 0.7  # carried: seen this close in front of the camera (then no far view alone moves it) ...
    carry_cam_tol_m: float = 0.15  # ... at about the same place in the camera frame as at its last sighting ...
    carry_min_move_m: float = 0.3  # ... while it moved this far in the world (it moves with the wearer) ...
    carry_window_s: float = 2.0  # ... that sighting at most this long ago
    link_window_s: float = 60.0  # a new object confirmed this soon after the one object of its label last seen and then reached by the wearer is that one, carried (0: off)
    link_taken: bool = True  # ... also when that object was seen gone after the wearer reached it (taken by the wearer)

    def __post_init__(self) -> None:
        _check(self, positive=("match_radius_m", "reentry_radius_m", "max_reentry_m", "track_jump_m", "recent_s",
                               "search_min_m", "mismatch_size_ratio", "ambiguous_m", "carry_max_depth_m",
                               "carry_cam_tol_m", "carry_min_move_m", "carry_window_s"),
               at_least_one=("move_confirm", "confirm_obs"),
               unit=("overlap_min", "label_share_min", "carve_min_frac", "tight_extent_frac"),
               non_negative=("drift_per_m", "strong_score", "track_bonus", "semantic_weight", "embed_veto_margin",
                             "stand_in_merge", "link_window_s"))
        if not -1 <= _number(self, "embed_min") <= 1:
            raise InvalidInputError(f"{_path(self, 'embed_min')} must be a cosine similarity in [-1, 1], got "
                                    f"{self.embed_min!r}")


@dataclass(frozen=True)
class RelocalisationConfig:
    """Correcting input pose drift on remembered landmarks (relocalize.py)."""

    enabled: bool = True  # relocalise at all
    search_m: float = 8.0  # same-label landmarks this close to an instance are candidates ...
    base_m: float = 1.0  # ... if their offset is within this + association.drift_per_m x metres walked since seen
    window_s: float = 6.0  # landmark pairs of the frames of the last seconds are pooled
    tol_m: float = 0.35  # landmarks the correction brings this close agree with it
    min_support: int = 2  # distinct landmarks that must agree on one correction
    min_shift_m: float = 0.15  # smaller position changes (and turns under min_yaw_deg) are never applied
    max_vertical_m: float = 0.2  # odometry drifts along the floor: a larger vertical offset is a wrong match
    big_shift_m: float = 1.5  # a larger correction needs one more agreeing landmark
    max_yaw_deg: float = 0.0  # largest heading correction from landmarks; 0: translation only (noisy centres)
    min_baseline_m: float = 3.0  # a rotation needs >= 3 agreeing landmarks spanning this distance
    min_yaw_deg: float = 1.0  # smaller rotations are noise, never applied on their own
    recent_s: float = 10.0  # landmarks seen this recently carry no drift information (they drift with the wearer)
    max_extent_m: float = 2.5  # larger objects are rarely seen whole: their instance centre is a poor landmark
    visit_min_obs: int = 3  # a landmark seen again a moment ago counts when seen in this many frames before
    hypothesis_step_m: float = 0.05  # translation hypotheses closer than this are one

    def __post_init__(self) -> None:
        _check(self, positive=("search_m", "base_m", "tol_m", "window_s", "min_baseline_m", "max_vertical_m",
                               "big_shift_m", "recent_s", "max_extent_m", "hypothesis_step_m"),
               at_least_one=("min_support", "visit_min_obs"), non_negative=("min_shift_m", "min_yaw_deg"))
        if not 0 <= _number(self, "max_yaw_deg") <= 90:
            raise InvalidInputError(f"{_path(self, 'max_yaw_deg')} must be in [0, 90], got {self.max_yaw_deg!r}")


@dataclass(frozen=True)
class VerticalConfig:
    """The memory's one vertical (pose/vertical.py), when ``MemoryConfig.up_world`` does not give it: estimated from
    the surface normals of the first seconds; answers, ground distances, heading, scan and relocalisation use it."""

    grid_cols: int = 64  # surface normals on a grid of about this many columns of the depth map
    normals_per_frame: int = 1000  # about this many of a frame's normals are kept (an even subset)
    refine_max_deg: float = 30.0  # normals this close to the first camera's up are floor / table / ceiling normals
    refine_cones_deg: tuple[float, ...] = (15.0, 8.0, 4.0)  # then in cones this narrow about the estimate, step by step
    min_cone_normals: int = 50  # a cone with fewer horizontal-surface normals ends the narrowing (walls alone leave it free)
    window_s: float = 5.0  # the vertical is estimated from the surfaces of the first this many seconds ...
    min_normals: int = 1000  # ... once that many floor / table / ceiling normals are in (heading and scan wait for it) ...
    max_wait_s: float = 30.0  # ... or from what there is after this long

    def __post_init__(self) -> None:
        _check(self, positive=("refine_max_deg", "max_wait_s"),
               at_least_one=("grid_cols", "normals_per_frame", "min_normals", "min_cone_normals"),
               non_negative=("window_s",))
        cones = self.refine_cones_deg
        if not isinstance(cones, (tuple, list)) or not all(
                isinstance(c, (int, float)) and not isinstance(c, bool) and 0 < c <= 90 for c in cones):
            raise InvalidInputError(f"{_path(self, 'refine_cones_deg')} must be angles in (0, 90] degrees, got "
                                    f"{cones!r:.80}")
        object.__setattr__(self, "refine_cones_deg", tuple(float(c) for c in cones))


@dataclass(frozen=True)
class HeadingConfig:
    """Heading drift corrected from the dominant directions of walls and furniture (heading.py)."""

    enabled: bool = True  # correct the heading from the scene's structure
    grid_cols: int = 64  # surface normals on a grid of about this many columns of the depth map
    min_strength: float = 0.4  # a frame counts when its vertical surfaces agree this well on one direction
    max_deg: float = 10.0  # ... and its structure is turned by at most this from the reference
    interval_s: float = 1.0  # at most one frame measured per interval (views a moment apart share a bias)
    ref_frames: int = 15  # the reference: median structure heading of the first structured frames
    noise_deg: float = 1.0  # one frame's structure heading error (Kalman measurement noise) ...
    drift_deg_per_min: float = 1.0  # ... and the odometry heading's random walk (process noise)
    min_deg: float = 1.0  # the filtered offset is applied when at least this large and this certain
    vertical_max_cos: float = 0.25  # a normal with |n . up| below this is on a vertical surface
    min_vertical_normals: int = 100  # a frame with fewer normals on vertical surfaces shows no structure heading

    def __post_init__(self) -> None:
        _check(self, positive=("max_deg", "noise_deg", "drift_deg_per_min"),
               at_least_one=("grid_cols", "ref_frames", "min_vertical_normals"),
               unit=("min_strength", "vertical_max_cos"), non_negative=("min_deg", "interval_s"))


@dataclass(frozen=True)
class ScanConfig:
    """Each frame's depth registered to the structure seen before (scan.py): position drift (and heading, with
    max_turn_deg > 0) corrected while the wearer stays in view of mapped walls and furniture."""

    enabled: bool = True  # register every frame's depth to the structure grid
    cell_m: float = 0.05  # grid cell on the ground plane
    established_s: float = 10.0  # a frame is registered to structure first seen at least this long before (over seconds the input poses are better)
    pixel_stride: int = 8  # every this-many-th depth pixel (in both directions) is a scan point
    max_points: int = 400  # at most this many of a frame's structure points are registered (an even subset)
    min_depth_m: float = 0.3  # scan points nearer than this ...
    max_depth_m: float = 6.0  # ... or farther than this are not used (depth error grows with distance)
    below_cam_m: float = 1.2  # points at most this far below the camera (not the floor) ...
    above_cam_m: float = 0.3  # ... and at most this far above it (not the ceiling) are structure
    levels: int = 2  # grid resolutions, coarse (2**(levels-1) cells a field cell) to fine
    iterations: int = 6  # Gauss-Newton steps per resolution at most
    blur_cells: float = 1.0  # the occupancy is smoothed by a Gaussian of this many field cells
    hits_scale: float = 2.0  # a cell's occupancy is 1 - exp(-hits / this)
    max_grid_cells: int = 20_000_000  # the grid grows to at most this many cells (5 bytes each; 20 M: 224 m square at 5 cm)
    max_hits: int = 20  # hits counted per cell at most (long-seen structure weighs more, up to this)
    min_occupancy: float = 0.05  # points where the smoothed occupancy is lower lie on nothing mapped
    min_support: int = 60  # scan points on mapped structure needed to register a frame
    min_constraint: float = 0.3  # mean squared occupancy gradient (1/m^2) in the weakest ground direction
    damping: float = 0.01  # Levenberg-Marquardt damping, a share of the normal matrix's mean diagonal
    search_m: float = 0.5  # shifts up to this far are searched (on the coarse grid) ...
    gain_per_m: float = 0.1  # ... and a shift must raise the mean occupancy by this much more per metre
    min_shift_m: float = 0.1  # smaller shifts (with turns under min_turn_deg) are not applied: the grid's own error
    min_turn_deg: float = 0.5  # ... (see min_shift_m)
    max_turn_deg: float = 0.0  # a frame's registration turns the wearer at most this much (0: translation only; heading.py turns)
    gain: float = 0.5  # share of each frame's registration applied (a constant-gain filter: one frame's is noisy)
    min_fit: float = 0.3  # the mean occupancy at the registered points must reach this (most of the view on older structure) ...
    fit_ratio: float = 0.85  # ... and this share of the occupancy at the unmoved points on all structure (the last seconds' too)
    min_gain: float = 0.02  # the registration must raise the mean occupancy at the scan points by more than this

    def __post_init__(self) -> None:
        _check(self, positive=("cell_m", "max_depth_m", "blur_cells", "hits_scale", "min_constraint",
                               "search_m"),
               at_least_one=("pixel_stride", "max_points", "levels", "iterations", "max_hits", "min_support",
                             "max_grid_cells"),
               non_negative=("established_s", "min_depth_m", "below_cam_m", "above_cam_m", "damping", "min_gain",
                             "gain_per_m", "max_turn_deg", "min_shift_m", "min_turn_deg", "fit_ratio"),
               unit=("min_occupancy", "gain", "min_fit"))
        if _number(self, "max_hits") > 255:
            raise InvalidInputError(f"{_path(self, 'max_hits')} must be at most 255, got {self.max_hits!r}")
        if _number(self, "max_depth_m") <= _number(self, "min_depth_m"):
            raise InvalidInputError(f"{_path(self, 'min_depth_m')} must be below {_path(self, 'max_depth_m')}, got "
                                    f"{self.min_depth_m!r} and {self.max_depth_m!r}")


@dataclass(frozen=True)
class KeyframeConfig:
    """Which frames are kept as an object's keyframes, and how their images are stored."""

    max_per_object: int = 4  # live keyframes per object
    min_gap_s: float = 5.0  # keyframes of one object are at least this far apart in time ...
    min_angle_deg: float = 20.0  # ... or seen from a viewpoint this different
    image_max_side: int = 160  # stored keyframe images are downsampled to this size
    jpeg_quality: int = 80  # JPEG quality of the stored images
    max_log: int = 64  # keyframe changes logged per object; after that the set is kept as it is

    def __post_init__(self) -> None:
        _check(self, at_least_one=("max_per_object", "image_max_side", "max_log"),
               non_negative=("min_gap_s", "min_angle_deg"))
        if not 1 <= _number(self, "jpeg_quality") <= 100:
            raise InvalidInputError(f"{_path(self, 'jpeg_quality')} must be in [1, 100], got {self.jpeg_quality!r}")


# Things fixed to the building or too heavy to be carried off in everyday life: a sink or a wall clock that
# a view misses (pose drift, occlusion, a detector miss) has not left; their absence needs more evidence.
FIXED_LABELS = ("bathtub", "bed", "blackboard", "whiteboard", "cabinet", "shelf", "bookshelf", "wardrobe", "closet",
                "clock", "couch", "sofa", "desk", "dining table", "stove", "oven", "mirror", "picture", "frame",
                "painting", "refrigerator", "fridge", "sink", "toilet", "washing machine", "drying machine", "dryer",
                "dishwasher", "fireplace", "radiator", "window", "door", "curtain", "counter", "countertop", "tv",
                "television", "shower", "bathroom counter")


@dataclass(frozen=True)
class GoneConfig:
    """Presence as a belief (memory/presence.py): the log-odds that an object is at its place, raised by
    sightings, lowered by views that should have shown it (in view, line of sight reaching its place,
    in detector range) weighted by the expected detection rate, unchanged out of view. Gone = below
    ``present_p``: the one definition memory, query and answerers share."""

    p_detect: float = 0.7  # chance the detector reports a present object that is in full view, large and in range
    p_false: float = 0.05  # chance a detector reports an object at a place in view that holds none
    full_px: float = 40.0  # object size across (pixels) from which ``p_detect`` applies in full (smaller: less)
    detect_range_m: tuple[float, float] = (0.3, 6.0)  # depth range of the detector: no evidence of absence outside
    first_from_score: bool = True  # a first sighting's evidence is the detector's score as log-odds (False: one hit)
    prior: float = 0.35  # presence probability of an object at a place before its first sighting (added to that evidence)
    empty_logodds: float = -5.0  # log-odds added by a view that sees through all of the object's place (free space)
    max_logodds: float = 4.0  # the belief saturates here, so a long-seen object is found gone within a few views
    min_logodds: float = -6.0  # ... and here, so an object found gone comes back with a few sightings
    present_p: float = 0.5  # an object is present while its presence probability is at least this
    margin_px: int = 8  # points projected closer than this to the image border are not in view
    depth_tol_m: float = 0.03  # "empty": scene depth there >= point depth + tol + rel * depth
    depth_rel: float = 0.01  # the relative part of that tolerance
    min_empty: float = 0.6  # fraction of the object's visible, unoccluded points that must be empty to see through
    empty_rel: float = 0.0  # extra relative depth margin (x depth) before a point counts as seen through
    min_px: float = 6.0  # the object must project to at least this many pixels across for any evidence
    min_visible: float = 0.3  # share of its points in view and unoccluded below which a view says nothing
    full_view: float = 0.5  # share in view and unoccluded from which a view's evidence counts in full (less: in part)
    fixed_labels: tuple[str, ...] = FIXED_LABELS  # built-in or heavy things that seldom leave (a label part or its last word)
    fixed_absence_scale: float = 0.2  # share of the evidence of absence counted for those (a low prior of removal)
    just_seen_s: float = 2.0  # an object seen this recently ...
    hand_reach_m: float = 1.2  # ... while the wearer (who alone could have taken it so fast) never came this near it along the ground since ...
    just_seen_absence_scale: float = 0.3  # ... counts this share of the evidence of absence
    odometry_window_s: float = 10.0  # an object seen this recently is looked for through the drift correction of its last sighting (0: the current one)
    colour_levels: int = 4  # an object's colour histogram: this many grey cells, 3x as many hues in 2 saturation bands (memory/appearance.py)
    colour_max_pixels: int = 400  # about this many pixels, on an even grid, make a histogram (a sighting's mask, a place, its ring)
    colour_update: float = 0.2  # weight of each new sighting in the object's colours (the rest: the earlier ones)
    colour_min_similarity: float = 0.4  # a place read as free space still shows the object when its colours match this much ...
    colour_margin: float = 0.2  # ... and this much more than a ring around it: then the view is a plain miss
    colour_core_shrink: float = 0.2  # the place's colours are read inside its box less this share of its size on each side
    colour_ring: float = 0.5  # the ring's width as a share of the box's larger side ...
    colour_ring_min_px: int = 3  # ... and at least this many pixels
    colour_min_sightings: int = 2  # objects seen fewer times are not kept by their colours (a false detection's are the background's)

    def __post_init__(self) -> None:
        _check(self, positive=("depth_tol_m", "min_px", "full_px"), unit=("min_empty", "p_detect", "p_false", "prior",
                                                                          "present_p", "min_visible", "full_view",
                                                                          "fixed_absence_scale", "just_seen_absence_scale", "colour_update",
                                                                          "colour_min_similarity", "colour_margin"),
               non_negative=("margin_px", "depth_rel", "empty_rel", "just_seen_s", "hand_reach_m", "odometry_window_s",
                             "colour_ring",
                             "colour_ring_min_px"),
               at_least_one=("colour_max_pixels", "colour_min_sightings"))
        if not 2 <= self.colour_levels <= 16 or not 0 <= self.colour_core_shrink < 0.5:
            raise InvalidInputError(f"{_path(self, 'colour_levels')} must be in [2, 16] and {_path(self, 'colour_core_shrink')} "
                                    f"in [0, 0.5), got {self.colour_levels!r}, {self.colour_core_shrink!r}")
        if not 0 < self.p_false < self.p_detect < 1 or not 0 < self.prior < 1:
            raise InvalidInputError(f"{_path(self, 'p_false')} < {_path(self, 'p_detect')} must lie in (0, 1) and "
                                    f"{_path(self, 'prior')} in (0, 1), got {self.p_false!r}, {self.p_detect!r}, "
                                    f"{self.prior!r}")
        if not self.min_logodds < 0 < self.max_logodds or self.empty_logodds >= 0:
            raise InvalidInputError(f"{_path(self, 'min_logodds')} < 0 < {_path(self, 'max_logodds')} and "
                                    f"{_path(self, 'empty_logodds')} < 0 required, got {self.min_logodds!r}, "
                                    f"{self.max_logodds!r}, {self.empty_logodds!r}")
        if not _pair(self.detect_range_m) or not 0 <= self.detect_range_m[0] < self.detect_range_m[1]:
            raise InvalidInputError(f"{_path(self, 'detect_range_m')} must be (near, far) with 0 <= near < far, got "
                                    f"{self.detect_range_m!r}")


@dataclass(frozen=True)
class PlacesConfig:
    """Places (clusters of the wearer's positions per scene tag) and the scene graph's edges."""

    eps_m: float = 2.5  # a wearer position joins the nearest place of its tag within this distance
    edge_distance_m: float = 1.5  # object-object edges for pairs closer than this
    edge_knn: int = 3  # ... and to each object's k nearest neighbours
    max_near_edges: int = 16  # of the pairs closer than edge_distance_m, each object keeps its this many nearest

    def __post_init__(self) -> None:
        _check(self, positive=("eps_m", "edge_distance_m"), non_negative=("edge_knn",),
               at_least_one=("max_near_edges",))


def _pair(v: object) -> bool:
    """Two finite numbers (a range or a pair of angles)."""
    return isinstance(v, (tuple, list)) and len(v) == 2 and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)


_SECTIONS = {"map": MapConfig, "association": AssociationConfig, "relocalisation": RelocalisationConfig,
             "vertical": VerticalConfig, "heading": HeadingConfig, "scan": ScanConfig, "keyframes": KeyframeConfig, "gone": GoneConfig, "places": PlacesConfig}
_SECTION_OF = {cls: name for name, cls in _SECTIONS.items()}

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

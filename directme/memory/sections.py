"""The sections of ``MemoryConfig`` for the object table, the map, keyframes, presence and places (the pose
stages' sections are in pose_sections.py), and the checks every section shares. Each field is a tuning constant
with a one-line doc; why a value was chosen is in docs/memory.md."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, TypeVar

from ..errors import InvalidInputError
from ..validation import check_section, number_or_nan

SECTION_NAMES: dict[type, str] = {}  # section class -> its key in MemoryConfig (error messages name the key path)
T = TypeVar("T")


def section(name: str) -> Callable[[T], T]:
    """Register a section class under its key in ``MemoryConfig`` (``memory.<name>.<field>`` in messages)."""
    def register(cls: T) -> T:
        SECTION_NAMES[cls] = name  # type: ignore[index]
        return cls
    return register


def _check(section: object, positive: tuple[str, ...] = (), at_least_one: tuple[str, ...] = (),
           unit: tuple[str, ...] = (), non_negative: tuple[str, ...] = ()) -> None:
    """The shared type and range checks (directme.validation.check_section) under the section's key path
    (``memory.map.pixel_stride``). ``MemoryConfig.from_dict`` parses strictly before (directme.validation)."""
    check_section(section, _path(section, "")[:-1], positive, at_least_one, unit, non_negative)


def _path(section: object, f: str) -> str:
    return f"memory.{SECTION_NAMES.get(type(section), type(section).__name__)}.{f}"


def _number(section: object, f: str) -> float:
    """The field as a float (NaN for a value of the wrong type: every range check then fails, naming it)."""
    return number_or_nan(getattr(section, f))


@section("map")
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
    dense_below_px: int = 16  # a mask with fewer valid strided pixels is lifted at full resolution
    inlier_sigmas: float = 3.0  # a mask's depths within this many robust sigmas of their median are the object's ...
    inlier_min_rel: float = 0.1  # ... or within this share of the median depth, whichever is wider
    inlier_min_px: int = 8  # a small mask with fewer valid pixels keeps them all (too few for a median)
    back_flat_ratio: float = 0.25  # points shallower along the view than this share of their width are a face-on shell
    back_min_width_m: float = 0.1  # a shell narrower than this gets no back side
    back_ring_px: int = 2  # the space behind a shell is read in a ring this many strided pixels wide around it ...
    back_ring_quantile: float = 0.75  # ... at this quantile of the ring's depths
    back_free_widths: float = 1.5  # the ring this many shell widths behind: it stands free, its back side is added
    back_min_ring_px: int = 3  # a ring with fewer valid pixels says nothing about the space behind
    measure_erode_px: int = 2  # measured extent (memory/extent.py): each view's mask eroded by this many pixels ...
    measure_window_px: int = 9  # ... its depths averaged over this window (odd) within the eroded mask ...
    measure_trim: float = 0.02  # ... the [trim, 1 - trim] quantile box of its points is the view's size ...
    measure_border_px: int = 1  # ... a view whose mask comes this near the image border is cut off ...
    measure_quantile: float = 0.75  # ... the extent: this weighted quantile of the clear views' sizes per axis ...
    measure_px_power: float = 0.5  # ... each view weighing its mask's pixel count to this power (0: alike)
    measure_max_views: int = 16  # an object keeps at most this many views, spread over kinds of view ...
    measure_dir_split: float = 0.38  # ... its direction: the unit vector's components beyond +- this (45 deg bins) ...
    measure_band_ratio: float = 2.0  # ... and its distance band, this ratio wide ...
    measure_interval_s: float = 2.0  # ... a view of a new kind is measured this long after the object's last one ...
    measure_repeat_s: float = 6.0  # ... one of a kind it holds this long after

    def __post_init__(self) -> None:
        _check(self, positive=("voxel_m", "max_depth_m", "min_cam_depth_m", "inlier_sigmas", "back_min_width_m",
                               "back_free_widths"),
               at_least_one=("pixel_stride", "max_voxels_per_object", "min_points", "max_instances_per_frame",
                             "dense_below_px", "inlier_min_px", "back_ring_px", "back_min_ring_px",
                             "measure_window_px", "measure_max_views"),
               unit=("back_ring_quantile", "measure_quantile", "measure_dir_split"),
               non_negative=("inlier_min_rel", "back_flat_ratio", "measure_erode_px", "measure_border_px",
                             "measure_px_power", "measure_interval_s", "measure_repeat_s"))
        if not _number(self, "measure_band_ratio") > 1:
            raise InvalidInputError(f"{_path(self, 'measure_band_ratio')} must be > 1, got {self.measure_band_ratio!r}")
        for f in ("position_trim", "obs_trim", "measure_trim"):
            if not 0 <= _number(self, f) < 0.5:
                raise InvalidInputError(f"{_path(self, f)} must be in [0, 0.5), got {getattr(self, f)!r}")


@section("association")
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
    carve_min_points: int = 3  # ... and at least this many of them
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
               at_least_one=("move_confirm", "confirm_obs", "carve_min_points"),
               unit=("overlap_min", "label_share_min", "carve_min_frac", "tight_extent_frac"),
               non_negative=("drift_per_m", "strong_score", "track_bonus", "semantic_weight", "embed_veto_margin",
                             "stand_in_merge", "link_window_s"))
        if not -1 <= _number(self, "embed_min") <= 1:
            raise InvalidInputError(f"{_path(self, 'embed_min')} must be a cosine similarity in [-1, 1], got "
                                    f"{self.embed_min!r}")


@section("keyframes")
@dataclass(frozen=True)
class KeyframeConfig:
    """Which frames are kept as an object's keyframes, and how their images are stored."""

    max_per_object: int = 4  # live keyframes per object
    min_gap_s: float = 5.0  # keyframes of one object are at least this far apart in time ...
    min_angle_deg: float = 20.0  # ... or seen from a viewpoint this different
    image_max_side: int = 160  # stored keyframe images are downsampled to this size
    jpeg_quality: int = 80  # JPEG quality of the stored images
    pending_mb: float = 16.0  # new keyframes' frames held unencoded up to this size (JPEG-encoded when read or saved)
    max_log: int = 64  # keyframe changes logged per object; after that the set is kept as it is
    full_area: float = 0.05  # an object filling this share of the image is fully visible (smaller: its score scaled down)
    border_scale: float = 0.5  # the visibility of an object cut by the image border is scaled by this
    clearer_ratio: float = 1.5  # a view like a kept one replaces it when this many times more visible
    replace_ratio: float = 1.2  # a full set takes a new view when it adds this many times more than the weakest kept one

    def __post_init__(self) -> None:
        _check(self, at_least_one=("max_per_object", "image_max_side", "max_log", "clearer_ratio", "replace_ratio"),
               positive=("full_area",), unit=("border_scale",), non_negative=("min_gap_s", "min_angle_deg", "pending_mb"))
        if not 1 <= _number(self, "jpeg_quality") <= 100:
            raise InvalidInputError(f"{_path(self, 'jpeg_quality')} must be in [1, 100], got {self.jpeg_quality!r}")


# Things fixed to the building or too heavy to be carried off in everyday life: a sink or a wall clock that
# a view misses (pose drift, occlusion, a detector miss) has not left; their absence needs more evidence.
FIXED_LABELS = ("bathtub", "bed", "blackboard", "whiteboard", "cabinet", "shelf", "bookshelf", "wardrobe", "closet",
                "clock", "couch", "sofa", "desk", "dining table", "stove", "oven", "mirror", "picture", "frame",
                "painting", "refrigerator", "fridge", "sink", "toilet", "washing machine", "drying machine", "dryer",
                "dishwasher", "fireplace", "radiator", "window", "door", "curtain", "counter", "countertop", "tv",
                "television", "shower", "bathroom counter")


@section("gone")
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
    score_clip: float = 0.02  # detector scores are clipped to [this, 1 - this] before they are read as log-odds
    view_points: int = 32  # about this many of an object's points are projected to judge a view of it
    min_view_points: int = 3  # a view whose line of sight reaches fewer of those points says nothing
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
    colour_every: int = 3  # after colour_min_sightings sightings, an object's colours take every this-many-th sighting only (1: each)
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
               at_least_one=("colour_max_pixels", "colour_min_sightings", "colour_every", "view_points",
                             "min_view_points"))
        if not 0 < _number(self, "score_clip") < 0.5:
            raise InvalidInputError(f"{_path(self, 'score_clip')} must be in (0, 0.5), got {self.score_clip!r}")
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


@section("places")
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


@section("outline")
@dataclass(frozen=True)
class OutlineConfig:
    """Where each frame saw the room's walls end (outline.py): the floor area a place covers."""

    enabled: bool = True  # log each frame's far edges (off: areas come from the walk alone)
    bins: int = 16  # bearing slices across the view, one far edge each
    pixel_stride: int = 8  # every this-many-th depth pixel (rows and columns) is used
    min_depth_m: float = 0.3  # points nearer than this ...
    max_depth_m: float = 8.0  # ... or farther than this are not used
    below_cam_m: float = 0.3  # points at most this far below the camera (upper walls, above most furniture) count
    far_quantile: float = 0.9  # a slice's far distance: this quantile of its points' ground distances ...
    band: float = 0.15  # ... its far edge: the median of the points beyond (1 - this) of it
    min_points: int = 8  # a slice with fewer points has no far edge
    batch_frames: int = 8  # frames whose far edges are found together (sooner when their rows are read or saved)

    def __post_init__(self) -> None:
        _check(self, positive=("max_depth_m",), at_least_one=("bins", "pixel_stride", "min_points", "batch_frames"),
               non_negative=("min_depth_m", "below_cam_m"), unit=("far_quantile", "band"))


def _pair(v: object) -> bool:
    """Two finite numbers (a range or a pair of angles)."""
    return isinstance(v, (tuple, list)) and len(v) == 2 and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)



"""The sections of ``MemoryConfig`` for the pose stages (pose/): vertical, heading, scan registration and
relocalisation."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidInputError
from .sections import _check, _number, _path, section


@section("relocalisation")
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


@section("vertical")
@dataclass(frozen=True)
class VerticalConfig:
    """The memory's one vertical (pose/vertical.py), when ``MemoryConfig.up_world`` does not give it: estimated from
    the surface normals of the first seconds; answers, ground distances, heading, scan and relocalisation use it."""

    grid_cols: int = 64  # surface normals on a grid of about this many columns of the depth map
    normals_per_frame: int = 1000  # about this many of a frame's normals are kept (an even subset)
    refine_max_deg: float = 30.0  # normals this close to the first camera's up are floor / table / ceiling normals
    refine_cones_deg: tuple[float, ...] = (15.0, 8.0, 4.0)  # then in cones this narrow about the estimate, step by step
    min_cone_normals: int = 50  # fewer floor / table / ceiling normals in a cone end the narrowing (walls leave it free)
    window_s: float = 5.0  # the vertical is estimated from the surfaces of the first this many seconds ...
    min_normals: int = 1000  # ... once that many floor / table / ceiling normals are in (heading and scan wait) ...
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


@section("heading")
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
    innovation_clip_sigmas: float = 3.0  # a frame moves the filter by at most this many sigmas (one wild frame, little)
    min_deg: float = 1.0  # the filtered offset is applied when at least this large and this certain
    vertical_max_cos: float = 0.25  # a normal with |n . up| below this is on a vertical surface
    min_vertical_normals: int = 100  # a frame with fewer normals on vertical surfaces shows no structure heading

    def __post_init__(self) -> None:
        _check(self, positive=("max_deg", "noise_deg", "drift_deg_per_min", "innovation_clip_sigmas"),
               at_least_one=("grid_cols", "ref_frames", "min_vertical_normals"),
               unit=("min_strength", "vertical_max_cos"), non_negative=("min_deg", "interval_s"))


@section("scan")
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
    iterations: int = 6  # Gauss-Newton steps on the finest resolution at most ...
    coarse_iterations: int = 3  # ... and on each coarser one (the correlative search put the start within a coarse cell)
    blur_cells: float = 1.0  # the occupancy is smoothed by a Gaussian of this many field cells
    hits_scale: float = 2.0  # a cell's occupancy is 1 - exp(-hits / this)
    max_grid_cells: int = 20_000_000  # at most this many cells (5 bytes each; 20 M: 5 ha at 5 cm): then the oldest tiles go
    grid_tile_cells: int = 64  # the grid is kept in square tiles of this many cells a side, made where structure is hit
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
               at_least_one=("pixel_stride", "max_points", "levels", "iterations", "coarse_iterations", "max_hits",
                             "min_support", "max_grid_cells", "grid_tile_cells"),
               non_negative=("established_s", "min_depth_m", "below_cam_m", "above_cam_m", "damping", "min_gain",
                             "gain_per_m", "max_turn_deg", "min_shift_m", "min_turn_deg", "fit_ratio"),
               unit=("min_occupancy", "gain", "min_fit"))
        if _number(self, "max_hits") > 255:
            raise InvalidInputError(f"{_path(self, 'max_hits')} must be at most 255, got {self.max_hits!r}")
        if _number(self, "max_depth_m") <= _number(self, "min_depth_m"):
            raise InvalidInputError(f"{_path(self, 'min_depth_m')} must be below {_path(self, 'max_depth_m')}, got "
                                    f"{self.min_depth_m!r} and {self.max_depth_m!r}")

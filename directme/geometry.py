"""Numpy-only geometry: SE(3) poses, pinhole intrinsics, back-projection, ego directions.

Frames (see docs/conventions.md):
- camera frame: OpenCV, x right, y down, z forward, metres;
- world frame: given poses' frame, else the first camera (T_world_cam(0) = I);
- ego frame: origin at the camera centre, x forward (camera heading projected on the
  ground plane), y left, z up (gravity when known, else the first camera's -y).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .errors import InvalidInputError

_ORTHO_TOL = 1e-3
MAX_IMAGE_SIDE = 1 << 16  # pixels
MIN_FOV_DEG, MAX_FOV_DEG = 0.5, 179.0  # plausible fields of view (intrinsics outside them are a unit mistake)


def _is_real(v: object) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _finite(v: object) -> bool:
    try:
        return bool(np.isfinite(float(v)))  # type: ignore[arg-type]
    except OverflowError:  # a 400-digit integer
        return False


def _as_matrix(matrix: np.ndarray) -> np.ndarray:
    m = np.asarray(matrix, dtype=np.float64)
    if m.shape == (3, 4):
        m = np.vstack([m, [0.0, 0.0, 0.0, 1.0]])
    if m.shape != (4, 4):
        raise InvalidInputError(f"pose must be a 4x4 (or 3x4) matrix, got shape {m.shape}")
    if not np.isfinite(m).all():
        raise InvalidInputError(f"pose contains non-finite values:\n{m}")
    # np.allclose's test (|a - b| <= atol + rtol |b|, rtol 1e-5) written out: poses are built every frame
    if not (np.abs(m[3] - _LAST_ROW) <= _LAST_ROW_TOL).all():
        raise InvalidInputError(f"pose last row must be [0, 0, 0, 1], got {m[3]}")
    r = m[:3, :3]
    if not (np.abs(r.T @ r - _EYE3) <= _ORTHO_LIMIT).all() or _det3(r.tolist()) < 0:
        raise InvalidInputError("pose rotation is not a proper rotation (R^T R != I or det < 0)")
    return m


_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])
_LAST_ROW_TOL = 1e-6 + 1e-5 * np.abs(_LAST_ROW)
_EYE3 = np.eye(3)
_ORTHO_LIMIT = _ORTHO_TOL + 1e-5 * _EYE3


def _det3(r: list) -> float:
    """Determinant of a 3x3 matrix given as rows (its sign is all ``_as_matrix`` needs: near +-1 there)."""
    (a, b, c), (d, e, f), (g, h, i) = r
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


@dataclass(frozen=True, eq=False)
class Pose:
    """Rigid transform T_a_b (4x4) mapping points expressed in frame b into frame a."""

    matrix: np.ndarray

    def __post_init__(self) -> None:
        m = _as_matrix(self.matrix)
        m.setflags(write=False)
        object.__setattr__(self, "matrix", m)

    @staticmethod
    def identity() -> "Pose":
        return Pose(np.eye(4))

    @staticmethod
    def from_Rt(R: np.ndarray, t: np.ndarray) -> "Pose":
        m = np.eye(4)
        m[:3, :3] = np.asarray(R, dtype=np.float64)
        m[:3, 3] = np.asarray(t, dtype=np.float64).reshape(3)
        return Pose(m)

    @property
    def R(self) -> np.ndarray:
        return self.matrix[:3, :3]

    @property
    def t(self) -> np.ndarray:
        return self.matrix[:3, 3]

    def inverse(self) -> "Pose":
        m = np.eye(4)
        m[:3, :3] = self.R.T
        m[:3, 3] = -self.R.T @ self.t
        return Pose(m)

    def __matmul__(self, other: "Pose") -> "Pose":
        return Pose(self.matrix @ other.matrix)

    def apply(self, points: np.ndarray) -> np.ndarray:
        """Transform (N, 3) or (3,) points from frame b into frame a."""
        p = np.asarray(points, dtype=np.float64)
        return p @ self.R.T + self.t

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pose) and np.array_equal(self.matrix, other.matrix)

    def __hash__(self) -> int:
        return hash(self.matrix.tobytes())


def vector_norm(x: np.ndarray) -> np.floating:
    """``np.linalg.norm`` of a 1-D float array, as it computes it (the square root of ``x.dot(x)``, a numpy
    scalar) without its argument handling: the per-frame stages measure many short vectors."""
    return np.sqrt(x.dot(x))


def columns(*cols: np.ndarray) -> np.ndarray:
    """``np.stack(cols, axis=1)`` of equally long 1-D arrays (an (N, k) array), without its argument handling."""
    out = np.empty((len(cols[0]), len(cols)), dtype=np.result_type(*cols))
    for j, c in enumerate(cols):
        out[:, j] = c
    return out


def row_norms(x: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(x, axis=1)`` of a 2-D float array, as it computes it, without its argument handling."""
    return np.sqrt(np.add.reduce(x * x, axis=1))


def rotation_about_axis(axis: np.ndarray, angle_rad: float) -> np.ndarray:
    """Rodrigues' formula: rotation matrix of ``angle_rad`` about unit ``axis``."""
    a = np.asarray(axis, dtype=np.float64)
    n = vector_norm(a.ravel())
    if n < 1e-12:
        return np.eye(3)
    if angle_rad == 0.0 and math.isfinite(n):
        return np.eye(3)  # the formula's value at 0 (identity plus terms of +-0), bit for bit
    k = a / n
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle_rad) * kx + (1 - np.cos(angle_rad)) * (kx @ kx)


def so3_exp(rotvec: np.ndarray) -> np.ndarray:
    """Rotation matrix of a rotation vector (axis * angle in radians)."""
    v = np.asarray(rotvec, dtype=np.float64)
    return rotation_about_axis(v, float(np.linalg.norm(v)))


@dataclass(frozen=True)
class Intrinsics:
    """Pinhole intrinsics in pixels for an image of ``width`` x ``height``."""

    fx: float
    fy: float
    cx: float
    cy: float
    width: int
    height: int

    def __post_init__(self) -> None:
        size = (self.width, self.height)
        if not all(_is_real(v) and _finite(v) and float(v) == int(v) and 0 < int(v) <= MAX_IMAGE_SIDE for v in size):
            raise InvalidInputError(f"intrinsics image size must be whole numbers of pixels in [1, {MAX_IMAGE_SIDE}], "
                                    f"got {self.width!r:.40} x {self.height!r:.40}")
        w, h = int(self.width), int(self.height)
        vals = (self.fx, self.fy, self.cx, self.cy)
        if not all(_is_real(v) and _finite(v) for v in vals) or self.fx <= 0 or self.fy <= 0:
            raise InvalidInputError(f"intrinsics need finite positive focal lengths, got {vals!r:.120}")
        for name, f, side, across in (("fx", float(self.fx), w, "wide"), ("fy", float(self.fy), h, "high")):
            lo, hi = side / (2 * np.tan(np.deg2rad(MAX_FOV_DEG) / 2)), side / (2 * np.tan(np.deg2rad(MIN_FOV_DEG) / 2))
            if not lo <= f <= hi:
                raise InvalidInputError(
                    f"intrinsics {name}={f:.6g} px gives a field of view outside [{MIN_FOV_DEG}, {MAX_FOV_DEG}] deg "
                    f"for an image {side} px {across} (plausible {name}: {lo:.3g} to {hi:.3g} px): focal lengths are "
                    "in pixels of this image size (normalised or in millimetres? for a resized image use resized())")
        for name, c, side in (("cx", float(self.cx), w), ("cy", float(self.cy), h)):
            if not -side <= c <= 2 * side:
                raise InvalidInputError(f"intrinsics {name}={c:.6g} px is far outside the {w}x{h} image "
                                        f"(expected about {side / 2:g}); principal points are in pixels")
        for name, v in (("fx", self.fx), ("fy", self.fy), ("cx", self.cx), ("cy", self.cy)):
            object.__setattr__(self, name, float(v))
        object.__setattr__(self, "width", w)
        object.__setattr__(self, "height", h)

    @staticmethod
    def from_K(K: np.ndarray, width: int, height: int) -> "Intrinsics":
        k = np.asarray(K, dtype=np.float64)
        if k.shape != (3, 3):
            raise InvalidInputError(f"K must be 3x3, got {k.shape}")
        return Intrinsics(float(k[0, 0]), float(k[1, 1]), float(k[0, 2]), float(k[1, 2]), int(width), int(height))

    @staticmethod
    def from_fov(width: int, height: int, hfov_deg: float) -> "Intrinsics":
        fx = 0.5 * width / np.tan(np.deg2rad(hfov_deg) / 2)
        return Intrinsics(fx, fx, (width - 1) / 2, (height - 1) / 2, width, height)

    @property
    def K(self) -> np.ndarray:
        return np.array([[self.fx, 0, self.cx], [0, self.fy, self.cy], [0, 0, 1.0]])

    @property
    def shape_hw(self) -> tuple[int, int]:
        return (int(self.height), int(self.width))

    def resized(self, width: int, height: int) -> "Intrinsics":
        """Intrinsics of the same camera after resizing the image to ``width`` x ``height``.

        Uses the pixel-centre convention: u' + 0.5 = (u + 0.5) * s.
        """
        sx, sy = width / self.width, height / self.height
        return Intrinsics(self.fx * sx, self.fy * sy, (self.cx + 0.5) * sx - 0.5,
                          (self.cy + 0.5) * sy - 0.5, int(width), int(height))

    def cropped(self, x0: int, y0: int, width: int, height: int) -> "Intrinsics":
        """Intrinsics after cropping the window [x0, x0+width) x [y0, y0+height)."""
        if x0 < 0 or y0 < 0 or x0 + width > self.width or y0 + height > self.height:
            raise InvalidInputError(f"crop ({x0},{y0},{width},{height}) outside image {self.width}x{self.height}")
        return Intrinsics(self.fx, self.fy, self.cx - x0, self.cy - y0, int(width), int(height))

    def project(self, points_cam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Project (N, 3) camera-frame points to pixel coordinates (N, 2) and depth z (N,)."""
        p = np.asarray(points_cam, dtype=np.float64).reshape(-1, 3)
        z = p[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            u = self.fx * p[:, 0] / z + self.cx
            v = self.fy * p[:, 1] / z + self.cy
        return np.stack([u, v], axis=1), z


def check_depth(depth_m: np.ndarray, intrinsics: Intrinsics) -> np.ndarray:
    d = np.asarray(depth_m)
    if d.ndim != 2:
        raise InvalidInputError(f"depth_m must be 2-D (H, W), got shape {d.shape}")
    if d.shape != intrinsics.shape_hw:
        raise InvalidInputError(
            f"depth shape {d.shape} does not match intrinsics image size {intrinsics.shape_hw} (H, W); "
            "resize the intrinsics with Intrinsics.resized() or the depth to the image size")
    return d


def median(x: np.ndarray) -> float:
    """``np.median`` of a 1-D array without NaN, the same value without its overhead (most of the cost at the
    few hundred values of an object's pixels); NaN for no values, as ``np.median`` (without its warning)."""
    n = len(x)
    h = n // 2
    if n == 0:
        return math.nan
    if n % 2:
        return float(np.partition(x, h)[h])
    part = np.partition(x, (h - 1, h))
    return float((part[h - 1] + part[h]) / 2)


def mask_pixels(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of the True pixels of a 2-D mask in row-major order: ``np.nonzero(mask)``, which is
    several times slower on 2-D boolean images than a flat search."""
    flat = np.flatnonzero(mask)
    return flat // mask.shape[1], flat % mask.shape[1]


def mask_box(mask: np.ndarray) -> Optional[tuple[int, int, int, int]]:
    """Pixel box (x0, y0, x1, y1; x1, y1 exclusive) of a 2-D mask's True pixels; None when it has none."""
    mask = np.asarray(mask)
    if mask.dtype == bool and mask.ndim == 2 and mask.size and mask.shape[1] % 8 == 0 and mask.flags.c_contiguous:
        # eight pixels a word (numpy reduces short rows slowly): the first and last non-zero words give the rows,
        # the OR of the rows between them the columns
        words = mask.view(np.uint64)
        on = words.reshape(-1) != 0
        first = int(on.argmax())
        if not on[first]:
            return None
        r0, r1 = first // words.shape[1], (len(on) - 1 - int(on[::-1].argmax())) // words.shape[1]
        c = np.bitwise_or.reduce(words[r0:r1 + 1], axis=0).view(np.uint8) != 0
        return int(c.argmax()), r0, len(c) - int(c[::-1].argmax()), r1 + 1
    rows = mask.any(axis=1).nonzero()[0]  # np.flatnonzero of a 1-D array
    if not len(rows):
        return None
    cols = mask[rows[0]:rows[-1] + 1].any(axis=0).nonzero()[0]  # only the rows it spans
    return int(cols[0]), int(rows[0]), int(cols[-1] + 1), int(rows[-1] + 1)


def backproject(depth_m: np.ndarray, intrinsics: Intrinsics, mask: Optional[np.ndarray] = None,
                stride: int = 1) -> np.ndarray:
    """Lift pixels with finite positive depth (optionally inside ``mask``) to (N, 3) camera points."""
    d = check_depth(depth_m, intrinsics)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        if m.shape != d.shape:
            raise InvalidInputError(f"mask shape {m.shape} does not match depth shape {d.shape}")
    if stride > 1:
        d = d[::stride, ::stride]
        m = mask[::stride, ::stride] if mask is not None else None
    else:
        m = mask
    valid = np.isfinite(d) & (d > 0)
    if m is not None:
        valid &= np.asarray(m, dtype=bool)
    vs, us = mask_pixels(valid)
    z = d[vs, us].astype(np.float64)
    us = us * stride
    vs = vs * stride
    x = (us - intrinsics.cx) / intrinsics.fx * z
    y = (vs - intrinsics.cy) / intrinsics.fy * z
    return np.stack([x, y, z], axis=1)


def lift_to_world(depth_m: np.ndarray, intrinsics: Intrinsics, T_world_cam: Pose,
                  mask: Optional[np.ndarray] = None, stride: int = 1) -> np.ndarray:
    """Back-project masked depth pixels into (N, 3) world points."""
    return T_world_cam.apply(backproject(depth_m, intrinsics, mask, stride))


_GROUND_BASES: dict[tuple, np.ndarray] = {}  # ground_basis by the up vector's bytes (a memory has one or two ups)
_GROUND_BASES_MAX = 64  # entries kept before the cache starts over


def ground_basis(up_world: np.ndarray) -> np.ndarray:
    """(2, 3) rows e1, e2 spanning the ground plane, right-handed seen from above (e1 x e2 = up); read-only.

    With up = +z this is (x, y), so a top-down plot of a z-up world shows plain world x / y. Several pose stages
    ask for the basis of the same vertical every frame: each one is computed once.
    """
    up = np.asarray(up_world, dtype=np.float64)
    key = (up.shape, up.tobytes())
    B = _GROUND_BASES.get(key)
    if B is None:
        B = _ground_basis(up)
        B.setflags(write=False)
        if len(_GROUND_BASES) >= _GROUND_BASES_MAX:
            _GROUND_BASES.clear()
        _GROUND_BASES[key] = B
    return B


def _ground_basis(up: np.ndarray) -> np.ndarray:
    up = up / np.linalg.norm(up)
    axis = np.eye(3)[1] if abs(up[0]) > 0.9 else np.eye(3)[0]  # world x, unless x is (nearly) up
    e1 = axis - np.dot(axis, up) * up
    e1 /= np.linalg.norm(e1)
    u0, u1, u2 = up.tolist()
    a0, a1, a2 = e1.tolist()
    return np.array([e1, [u1 * a2 - u2 * a1, u2 * a0 - u0 * a2, u0 * a1 - u1 * a0]])  # e2 = up x e1


# ---------------------------------------------------------------- ego frame and directions

DIRECTIONS_8 = ("front", "front-left", "left", "behind-left", "behind", "behind-right", "right", "front-right")


def default_up_world(T_world_cam0: Pose) -> np.ndarray:
    """'Up' when gravity is unknown: the first camera's -y axis expressed in the world."""
    return -T_world_cam0.R[:, 1]


@dataclass(frozen=True, eq=False)
class EgoFrame:
    """The wearer's ego frame at one instant: x forward, y left, z up (metres)."""

    T_world_ego: Pose

    @staticmethod
    def from_camera(T_world_cam: Pose, up_world: np.ndarray) -> "EgoFrame":
        up = np.asarray(up_world, dtype=np.float64)
        up = up / np.linalg.norm(up)
        fwd = T_world_cam.R[:, 2] - np.dot(T_world_cam.R[:, 2], up) * up
        if np.linalg.norm(fwd) < 1e-6:  # looking straight up/down: use the camera's -y (top of image)
            fwd = -T_world_cam.R[:, 1] - np.dot(-T_world_cam.R[:, 1], up) * up
        fwd = fwd / np.linalg.norm(fwd)
        left = np.cross(up, fwd)
        return EgoFrame(Pose.from_Rt(np.stack([fwd, left, up], axis=1), T_world_cam.t))

    def to_ego(self, points_world: np.ndarray) -> np.ndarray:
        return self.T_world_ego.inverse().apply(points_world)


def azimuth_deg(p_ego: np.ndarray) -> float:
    """Angle of an ego-frame point on the ground plane: 0 front, +90 left, -90 right, 180 behind."""
    return float(np.degrees(np.arctan2(p_ego[1], p_ego[0])))


def direction_word(azimuth: float) -> str:
    """One of DIRECTIONS_8 for an azimuth in degrees (45 degree sectors centred on each word)."""
    idx = int(np.floor(((azimuth % 360.0) + 22.5) / 45.0)) % 8
    return DIRECTIONS_8[idx]


def clock_hour(azimuth: float) -> int:
    """Clock-face direction: 12 front, 3 right, 6 behind, 9 left."""
    hour = int(np.round((-azimuth % 360.0) / 30.0)) % 12
    return 12 if hour == 0 else hour


def ground_distance_m(p_ego: np.ndarray) -> float:
    return float(np.hypot(p_ego[0], p_ego[1]))


def ground_distances_m(points_w: np.ndarray, point_w: np.ndarray, up_world: Optional[np.ndarray]) -> np.ndarray:
    """Distances (m) from each of ``points_w`` (N, 3) to ``point_w`` along the ground: across the world's
    ``up_world`` (None: unknown, the full 3-D distance)."""
    diff = np.asarray(points_w, dtype=np.float64) - np.asarray(point_w, dtype=np.float64)
    if up_world is not None:
        up = np.asarray(up_world, dtype=np.float64)
        up = up / (np.linalg.norm(up) or 1.0)
        diff = diff - np.outer(diff @ up, up)
    return np.linalg.norm(diff, axis=1)


def nearest_ground_distance_m(points_w: np.ndarray, point_w: np.ndarray, up_world: Optional[np.ndarray]) -> float:
    """The least of ``ground_distances_m`` (inf for no points): e.g. the wearer's nearest approach to a place."""
    if not len(points_w):
        return math.inf
    return float(np.min(ground_distances_m(points_w, point_w, up_world)))

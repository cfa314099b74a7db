"""The update path's shortcuts (tables, cached weights, column layouts, skipped work) give the values of the
plain computation they replace, bit for bit: small cases against the plain numpy/scipy formula."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from directme.memory.config import ScanConfig
from directme.memory.pose import scan
from directme.memory.pose.scan import ScanMatcher
from directme.memory.pose.scan_grid import Field, StructureGrid, gaussian_weights, occupancy_table
from directme.memory.pose.vertical import _all_valid_share

RNG = np.random.default_rng(7)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.ascontiguousarray(a).tobytes() == \
        np.ascontiguousarray(b).tobytes()


@pytest.mark.parametrize("scale", [2.0, 3.0, 0.7])
def test_occupancy_table_is_the_formula(scale):
    for n, off in [(1, 0), (17, 3), (256, 1), (4001, 2)]:
        hits = RNG.integers(0, 256, n + off).astype(np.uint8)[off:]
        assert _same(occupancy_table(scale)[hits], 1.0 - np.exp(-hits.astype(np.float32) / scale))


@pytest.mark.parametrize("sigma", [1.0, 0.6, 2.0])
def test_two_correlations_are_the_gaussian_filter(sigma):
    w = gaussian_weights(sigma)
    for shape in [(1, 1), (3, 9), (23, 17)]:
        occ = RNG.random(shape).astype(np.float32) * (RNG.random(shape) < 0.5)
        out = np.empty_like(occ)
        ndimage.correlate1d(occ, w, 0, out, mode="constant", cval=0.0, origin=0)
        ndimage.correlate1d(out, w, 1, out, mode="constant", cval=0.0, origin=0)
        assert _same(out, ndimage.gaussian_filter(occ, sigma, mode="constant"))


def _plain_sample(f: Field, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bilinear value and gradient by the plain per-axis formula (four 2-D gathers, rows of two)."""
    g = (xy - f.lo) / f.cell - 0.5
    i0 = np.floor(g).astype(np.int64)
    fr = g - i0
    n0, n1 = f.occ.shape
    ok = (i0[:, 0] >= 0) & (i0[:, 1] >= 0) & (i0[:, 0] < n0 - 1) & (i0[:, 1] < n1 - 1)
    val, grad = np.zeros(len(xy)), np.zeros((len(xy), 2))
    i, j, a, b = i0[ok, 0], i0[ok, 1], fr[ok, 0], fr[ok, 1]
    m00, m10, m01, m11 = f.occ[i, j], f.occ[i + 1, j], f.occ[i, j + 1], f.occ[i + 1, j + 1]
    val[ok] = (1 - a) * ((1 - b) * m00 + b * m01) + a * ((1 - b) * m10 + b * m11)
    grad[ok, 0] = ((1 - b) * (m10 - m00) + b * (m11 - m01)) / f.cell
    grad[ok, 1] = ((1 - a) * (m01 - m00) + a * (m11 - m10)) / f.cell
    return val, grad


@pytest.mark.parametrize("inside", [True, False])
def test_field_sample_is_the_plain_bilinear(inside):
    for _ in range(20):
        n0, n1 = RNG.integers(2, 30, 2)
        occ = RNG.random((n0, n1)).astype(np.float32)
        f = Field(occ / np.float32(occ.max()), RNG.normal(size=2), 0.05 * RNG.uniform(0.5, 2.0))
        span = np.array([n0, n1]) * f.cell
        lo, hi = (0.1, 0.8) if inside else (-0.3, 1.3)
        xy = f.lo + RNG.uniform(lo, hi, (int(RNG.integers(0, 300)), 2)) * span
        val, grad = _plain_sample(f, xy)
        v2, g2 = f.sample(xy)
        v3, g3 = f.sample(xy, cols=3)
        v0, _ = f.sample_xy(np.ascontiguousarray(xy.T), cols=0)
        assert _same(val, v2) and _same(grad, g2) and _same(val, v3) and _same(grad, g3[:, :2]) and _same(val, v0)
        assert not g3[:, 2].any()


def test_unturned_warp_is_the_turn_by_zero():
    occ = RNG.random((40, 50)).astype(np.float32)
    f = Field(occ, np.array([-1.0, -2.0]), 0.05)
    xy = RNG.uniform([-0.9, -1.9], [0.9, 0.4], (200, 2))
    c = np.array([0.13, -0.77])
    for xi in (np.zeros(3), np.array([0.031, -0.012, 0.0])):
        J, val = scan._warp(xy, c, xi, f, turn=True)
        J2, val2 = scan._warp(xy, c, xi, f, turn=False, at=scan._unturned(xy, c))
        assert _same(val, val2) and _same(J[:, :2], J2[:, :2]) and J2.shape == J.shape
    assert _same(scan._values(xy, c, f, False, scan._unturned(xy, c)), scan._warp(xy, c, np.zeros(3), f)[1])


def test_grid_counts_each_cell_once_a_frame_and_pools_blocks():
    cfg = ScanConfig()
    g = StructureGrid(cfg.cell_m, tile_cells=8)  # small tiles: windows cross many
    hits, first = {}, {}
    for t in range(6):
        xy = RNG.uniform(-1.0, 1.0, (300, 2)) + 0.2 * t
        g.add(xy, cfg.max_hits, float(t))
        for cell in {tuple(c) for c in g.cells(xy).tolist()}:
            hits[cell] = min(hits.get(cell, 0) + 1, cfg.max_hits)
            first.setdefault(cell, float(t))
    origin, dense_hits, dense_first = g.dense()
    got = {tuple((np.array(ij) + origin).tolist()): int(h) for ij, h in np.ndenumerate(dense_hits) if h}
    assert got == hits and len(g) == len(hits)
    assert {tuple((np.array(ij) + origin).tolist()): float(s) for ij, s in np.ndenumerate(dense_first)
            if np.isfinite(s)} == first
    for before in (2.0, 3.5, np.inf):  # a dated window: the dense counts of the cells first hit by then
        c0, c1 = origin + 3, origin + g.shape - 2
        want = np.where(dense_first <= before, dense_hits, 0)[3:-2, 3:-2]
        assert _same(g.window(c0, c1, before), want)
    lo, hi = np.array([-1.2, -1.1]), np.array([2.0, 1.9])
    occ, corner = g.occupancy(lo, hi, cfg, before_s=3.0)
    n0, n1 = (occ.shape[0] // 2) * 2, (occ.shape[1] // 2) * 2
    pooled = ndimage.gaussian_filter(occ[:n0, :n1].reshape(n0 // 2, 2, n1 // 2, 2).max(axis=(1, 3)),
                                     cfg.blur_cells, mode="constant")
    assert _same(g.field(lo, hi, 1, cfg, before_s=3.0).occ, pooled / float(pooled.max()))


def test_structure_points_reused_only_under_the_same_pose():
    cfg = ScanConfig()
    m = ScanMatcher(cfg)
    p_cam = RNG.uniform(-2.0, 2.0, (500, 3))
    T, up = np.eye(4), np.array([0.0, -1.0, 0.0])
    first = m.structure(p_cam, T, up, cfg)
    assert m.structure(p_cam, T.copy(), up, cfg) is first
    T2 = T.copy()
    T2[0, 3] = 0.1
    moved = m.structure(p_cam, T2, up, cfg)
    assert moved is not first and _same(moved, scan.structure_xy(p_cam, T2, up, cfg))


def test_all_valid_share_is_the_smoothed_valid_mask():
    whole, den = _all_valid_share((9, 13))
    share = ndimage.uniform_filter(np.ones((9, 13), dtype=bool).astype(np.float64), 3, mode="nearest")
    assert _same(whole, share > 0.99) and _same(den, np.maximum(share, 1e-9))
    d = RNG.uniform(0.5, 4.0, (9, 13))
    assert _same(ndimage.uniform_filter(d, 3, mode="nearest"),
                 ndimage.uniform_filter(np.where(np.ones(d.shape, bool), d, 0.0), 3, mode="nearest"))


def _plain_depth_verdict(d: np.ndarray) -> tuple[bool, bool]:
    """(refused: negative or infinite values, has a valid pixel) by the plain per-pixel checks."""
    return bool(np.any(np.isinf(d)) or np.any(d < 0)), bool(np.any(np.isfinite(d) & (d > 0)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_depth_checks_decide_as_the_per_pixel_checks(dtype):
    from directme.errors import InvalidInputError
    from directme.geometry import Intrinsics, Pose
    from directme.memory.ingest import validate
    from directme.types import Frame, FramePerception

    K = Intrinsics.from_fov(8, 6, 60.0)
    for fill in (None, np.nan, 0.0, -0.0, -1.0, np.inf, -np.inf):
        d = RNG.uniform(0.5, 4.0, (6, 8)).astype(dtype)
        if fill is not None:
            d[RNG.random(d.shape) < 0.3] = fill
        for depth in (d, np.full_like(d, np.nan), np.where(np.isnan(d), 0.0, d).astype(dtype)):
            refused, has_valid = _plain_depth_verdict(depth)
            fp = FramePerception(Frame(0.0, np.zeros((6, 8, 3), np.uint8), depth, Pose.identity(), K), ())
            try:
                validate(fp, -np.inf)
                verdict = (False, True)
            except InvalidInputError as e:
                verdict = (True, None) if "negative or infinite" in str(e) else (False, False)
            assert verdict[0] == refused and (refused or verdict[1] == has_valid)


def test_two_by_two_solve_is_lapacks():
    for k in range(3000):
        J = RNG.normal(size=(int(RNG.integers(3, 50)), 2)) * RNG.uniform(0.01, 100.0)
        H = J.T @ J if k % 2 else RNG.normal(size=(2, 2)) * 10.0 ** RNG.integers(-6, 6, size=(2, 2))
        b, d = RNG.normal(size=2), float(RNG.uniform(0.0, 1.0))
        try:
            want = np.linalg.solve(H + d * np.eye(2), b)
        except np.linalg.LinAlgError:
            continue
        assert _same(np.array(scan._solve2(H.tolist(), b.tolist(), d)), want)


def test_pose_checks_decide_as_allclose_and_det():
    from directme.errors import InvalidInputError
    from directme.geometry import Pose

    for k in range(400):
        m = np.eye(4)
        m[:3, :3] = np.linalg.qr(RNG.normal(size=(3, 3)))[0] + RNG.normal(size=(3, 3)) * 10.0 ** -RNG.uniform(2, 6)
        m[3] += RNG.normal(size=4) * 10.0 ** -RNG.uniform(4, 8)
        r = m[:3, :3]
        ok = np.allclose(m[3], [0.0, 0.0, 0.0, 1.0], atol=1e-6) and np.allclose(r.T @ r, np.eye(3), atol=1e-3) \
            and np.linalg.det(r) >= 0
        try:
            Pose(m)
            got = True
        except InvalidInputError:
            got = False
        assert got == ok


def test_weakest_constraint_decides_as_eigvalsh():
    for k in range(2000):
        J = RNG.normal(size=(int(RNG.integers(2, 40)), 2)) * RNG.uniform(0.01, 10.0)
        H = J.T @ J / len(J)
        rel = RNG.uniform(-1e-12, 1e-12) if k % 3 == 0 else RNG.uniform(-0.5, 0.5)  # at the bound, or clear of it
        thr = float(np.linalg.eigvalsh(H)[0]) * (1.0 + rel)
        assert (scan._weakest(H, thr) < thr) == (float(np.linalg.eigvalsh(H)[0]) < thr)
        if scan._weakest(H, thr) < thr:
            assert scan._weakest(H, thr) == float(np.linalg.eigvalsh(H)[0])  # the value reported is eigvalsh's


def test_shortcut_helpers_are_numpys_own():
    from directme.geometry import ground_basis, mask_box, rotation_about_axis, row_norms, vector_norm
    from directme.memory.map import sorted_unique
    from directme.memory.pose.vertical import _box3

    for _ in range(200):
        x = RNG.normal(size=(int(RNG.integers(0, 30)), 3)) * 10.0 ** RNG.uniform(-3, 3)
        assert _same(row_norms(x), np.linalg.norm(x, axis=1))
        if len(x):
            assert _same(vector_norm(x[0]), np.linalg.norm(x[0]))
        keys = RNG.integers(0, 50, int(RNG.integers(0, 60)))
        assert _same(sorted_unique(keys), np.unique(keys))
        a = RNG.uniform(0.0, 5.0, tuple(RNG.integers(1, 20, 2)))
        assert _same(_box3(a), ndimage.uniform_filter(a, 3, mode="nearest"))
    up = np.array([0.1, -0.98, 0.05])
    B = ground_basis(up)
    assert ground_basis(up.copy()) is B and not B.flags.writeable
    assert np.allclose(np.cross(B[0], B[1]), up / np.linalg.norm(up))
    k = up / np.linalg.norm(up)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    assert _same(rotation_about_axis(up, 0.0), np.eye(3) + np.sin(0.0) * kx + (1 - np.cos(0.0)) * (kx @ kx))
    for k in range(500):  # rows of eight-pixel words, and the plain path for other widths and layouts
        h, w = (int(v) for v in RNG.integers(0, 30, 2))
        m = RNG.random((h, w * (8 if k % 2 else 1))) < RNG.choice([0.0, 0.002, 0.05, 0.5])
        m = m if k % 5 else np.asfortranarray(m)
        rows, cols = np.flatnonzero(np.any(m, axis=1)), np.flatnonzero(np.any(m, axis=0))
        want = None if not len(rows) else (int(cols[0]), int(rows[0]), int(cols[-1] + 1), int(rows[-1] + 1))
        assert mask_box(m) == want


def test_columns_is_stack():
    from directme.geometry import columns

    for n in (0, 1, 17):
        cols = [RNG.normal(size=n), RNG.normal(size=n).astype(np.float32), RNG.normal(size=n)]
        assert _same(columns(*cols), np.stack(cols, axis=1))


def test_even_subset_is_linspace():
    for n in list(range(0, 60)) + [401, 997, 2048]:
        for m in (0, 1, 2, 3, 50, 400):
            assert _same(scan._even_subset(n, m), np.linspace(0, n - 1, m).astype(np.int64))


def test_colour_histogram_packs_channels_as_before():
    from directme.memory.appearance import _cell_table, colour_histogram

    for n in (1, 7, 400):
        pix = RNG.integers(0, 256, (n, 3)).astype(np.uint8)
        p = pix.astype(np.int32) >> 3
        h = np.bincount(_cell_table(4)[(p[:, 0] << 10) | (p[:, 1] << 5) | p[:, 2]], minlength=28).astype(np.float32)
        assert _same(colour_histogram(pix, 4), h / h.sum())
        assert _same(colour_histogram(pix.astype(np.int64), 4), h / h.sum())


def test_every_second_pixel_is_the_strided_count():
    from directme.memory.keyframes import _every_second_pixel

    for k in range(300):
        h, w = (int(v) for v in RNG.integers(0, 25, 2))
        m = RNG.random((h, w)) < RNG.choice([0.0, 0.05, 0.5, 1.0])
        m = m if k % 4 else np.asfortranarray(m)
        assert _every_second_pixel(m) == np.count_nonzero(m[::2, ::2])


def test_field_sample_from_a_known_box_is_the_same():
    """``sample_xy`` told the points' box decides inside/outside as from the points themselves, at every shift,
    also with the box's corners right on a cell's edge."""
    occ = RNG.random((30, 40)).astype(np.float32)
    f = Field(occ, np.array([-0.7, 0.3]), 0.05)
    at = np.ascontiguousarray(RNG.uniform([-0.6, 0.4], [0.6, 2.2], (150, 2)).T)
    at[:, 0] = (-0.7 + 0.025, 0.3 + 0.025)  # a point right at the first cell's centre
    box = (at.min(axis=1), at.max(axis=1))
    for s in (np.zeros(2), np.array([0.031, -0.012]), np.array([-0.2, 0.5]), np.array([0.9, -0.4]),
              np.array([-1e-17, 0.0])):
        q = at + s[:, None]
        fl = np.floor((q - f.lo[:, None]) / f.cell - 0.5)
        every = bool((fl >= 0).all() and (fl[0] < 29).all() and (fl[1] < 39).all())
        assert f._inside((box[0] + s, box[1] + s)) == every
        for cols in (0, 3):
            v, g = f.sample_xy(q, cols)
            v2, g2 = f.sample_xy(q, cols, box=(box[0] + s, box[1] + s))
            assert _same(v, v2) and _same(g, g2)


def test_scene_depth_of_float32_points_is_the_widened_projection():
    """``presence.scene_depth_at`` subtracts the camera from float32 points without widening them first: the same
    doubles as ``astype(float64)`` then the subtraction."""
    from directme.geometry import Intrinsics, Pose
    from directme.memory.presence import scene_depth_at
    from directme.types import Frame

    T = np.eye(4)
    T[:3, :3] = [[np.cos(0.4), 0, np.sin(0.4)], [0, 1, 0], [-np.sin(0.4), 0, np.cos(0.4)]]
    T[:3, 3] = (0.3, -0.2, 0.1)
    f = Frame(0.0, np.zeros((48, 64, 3), np.uint8), RNG.uniform(0.1, 5, (48, 64)).astype(np.float32), Pose(T),
              Intrinsics(60.0, 61.5, 31.7, 23.2, 64, 48))
    pts = RNG.normal(0, 2, (500, 3)).astype(np.float32)
    pts[0] = T[:3, 3]  # at the camera: never projected
    got, want = scene_depth_at(pts, f, 2, 0.2), scene_depth_at(pts.astype(np.float64), f, 2, 0.2)
    assert len(got[0]) > 10 and 0 not in got[0]
    assert all(_same(a, b) for a, b in zip(got, want))


def test_tiles_hit_are_uniques_order_and_inverse():
    from directme.memory.pose.scan_grid import _tiles_hit

    for lo, hi, n in [((-3, -2), (2, 4), 500), ((5, -7), (5, -7), 40), ((-400, 0), (400, 300), 300)]:
        t = RNG.integers(lo, np.array(hi) + 1, (n, 2))
        keys, inverse = _tiles_hit(t, t.min(axis=0), t.max(axis=0))
        _, first, inv = np.unique(t[:, 0] * (1 << 32) + t[:, 1], return_index=True, return_inverse=True)
        assert keys == [tuple(k) for k in t[first].tolist()] and _same(inverse, inv.reshape(-1))


@pytest.mark.parametrize("max_hits", [1, 3, 255])
def test_hit_counts_stop_at_max_hits(max_hits):
    g = StructureGrid(0.05, tile_cells=8)
    xy = RNG.uniform(-0.5, 0.5, (200, 2))
    for t in range(5):
        g.add(xy, max_hits, float(t))
    g.add(np.array([[3.0, 3.0]]), max_hits, 5.0)
    _, hits, _ = g.dense()
    assert sorted(set(hits[hits > 0].tolist())) == sorted({min(5, max_hits), 1})

"""CPU ray caster for axis-aligned boxes (numpy, vectorised slab test).

Floor (z = 0) and ceiling are analytic planes; walls and objects are boxes. Each box is tested
only inside its projected screen rectangle (near-plane clipped) and skipped when the z-buffer
there is already nearer than the box, so far rooms cost little. Output: RGB (flat colour per
object, Lambert shading, wall/floor texture, fixed-pattern sensor noise), z-depth in metres
(distance along the optical axis) and instance ids (object id, 0 = walls/floor/ceiling)."""
from __future__ import annotations

import numpy as np

from ..geometry import Intrinsics, Pose
from .episode import Layout, RenderedFrame
from .layout import room_grid

NEAR_M = 0.05
_FLOOR, _CEIL = -1_000_000, -1_000_001
_CORNERS = np.array([[i & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)])
_EDGES = np.array([(a, b) for a in range(8) for b in range(8) if a < b and bin(a ^ b).count("1") == 1])
_LIGHT = np.array([0.35, 0.55, 0.76])
# shade per normal code: 0 +x, 1 -x, 2 +y, 3 -y, 4 +z, 5 -z
_SHADE = (0.55 + 0.45 * np.clip(np.array([_LIGHT[0], -_LIGHT[0], _LIGHT[1], -_LIGHT[1], _LIGHT[2], -_LIGHT[2]]),
                                0, 1)).astype(np.float32)
_CEILING_RGB = (225, 225, 220)


class BoxRenderer:
    """Renders one apartment (its walls are fixed) plus the object boxes of each frame."""

    def __init__(self, layout: Layout, intrinsics: Intrinsics, seed: int = 0):
        self.layout, self.K = layout, intrinsics
        h, w = intrinsics.shape_hw
        us, vs = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
        self.xs = (us - intrinsics.cx) / intrinsics.fx
        self.ys = (vs - intrinsics.cy) / intrinsics.fy
        self.ray_len = np.sqrt(self.xs ** 2 + self.ys ** 2 + 1).astype(np.float32)
        self.walls_lo = layout.walls_w[:, 0].astype(np.float64)
        self.walls_hi = layout.walls_w[:, 1].astype(np.float64)
        self.grid, self.cell, self.grid_origin = room_grid(layout)
        self.grid[self.grid < 0] = len(layout.rooms)  # outside every room: the last colour entry
        self.grid_flat = self.grid.ravel()
        rng = np.random.default_rng(seed + 7919)
        n_rooms = len(layout.rooms)
        self.wall_rgb = rng.integers(150, 240, size=(n_rooms + 1, 3)).astype(np.float32)
        self.floor_rgb = rng.integers(70, 170, size=(n_rooms + 1, 3)).astype(np.float32)
        self.wall_rgb[-1] = self.floor_rgb[-1] = 128  # index -1: outside every room
        self.noise = rng.normal(0, 3.0, size=(h + 31, w + 31, 3)).astype(np.float32)
        self.texture = (0.93 + 0.07 * rng.random((64, 64))).astype(np.float32)  # walls: plaster-like grain
        self.checker = np.array([[1.0, 0.92], [0.92, 1.0]], np.float32)  # floor tiles of 0.5 m

    # ------------------------------------------------------------------ geometry
    def _screen_rects(self, R: np.ndarray, o: np.ndarray, lo: np.ndarray, hi: np.ndarray):
        """Per box: pixel rectangle [u0, u1) x [v0, v1) of its near-clipped projection and min depth."""
        corners = lo[:, None, :] + _CORNERS[None] * (hi - lo)[:, None, :]
        cam = (corners - o) @ R  # (M, 8, 3) camera coordinates
        a, b = cam[:, _EDGES[:, 0]], cam[:, _EDGES[:, 1]]
        za, zb = a[..., 2], b[..., 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            s = (NEAR_M - za) / (zb - za)
        cross = ((za - NEAR_M) * (zb - NEAR_M)) < 0
        pts = np.concatenate([cam, a + np.clip(s, 0, 1)[..., None] * (b - a)], axis=1)
        valid = np.concatenate([cam[..., 2] > NEAR_M, cross], axis=1)
        z = np.where(valid, np.maximum(pts[..., 2], NEAR_M), 1.0)
        u = self.K.fx * pts[..., 0] / z + self.K.cx
        v = self.K.fy * pts[..., 1] / z + self.K.cy
        big = 1e9
        u0 = np.floor(np.where(valid, u, big).min(1)).clip(0, self.K.width)
        u1 = np.ceil(np.where(valid, u, -big).max(1) + 1).clip(0, self.K.width)
        v0 = np.floor(np.where(valid, v, big).min(1)).clip(0, self.K.height)
        v1 = np.ceil(np.where(valid, v, -big).max(1) + 1).clip(0, self.K.height)
        zmin = np.where(valid, pts[..., 2], big).min(1)
        ok = valid.any(1) & (u1 > u0) & (v1 > v0)
        return u0.astype(int), u1.astype(int), v0.astype(int), v1.astype(int), zmin, ok

    def _trace(self, T_world_cam: Pose, lo: np.ndarray, hi: np.ndarray, sid: np.ndarray, normals: bool):
        R = T_world_cam.R.astype(np.float32)
        o = T_world_cam.t.astype(np.float32)
        lo, hi = lo.astype(np.float32) - o, hi.astype(np.float32) - o
        d = [R[i, 0] * self.xs + R[i, 1] * self.ys + R[i, 2] for i in range(3)]
        for di in d:
            di[np.abs(di) < 1e-7] = 1e-7
        inv = [np.float32(1.0) / di for di in d]
        down = d[2] < 0
        zbuf = np.where(down, -o[2] * inv[2], (np.float32(self.layout.ceiling_m) - o[2]) * inv[2])
        sbuf = np.where(down, _FLOOR, _CEIL).astype(np.int32)
        # normal code of the face a ray enters, per axis: 0/1 = +x/-x, 2/3 = +y/-y, 4/5 = +z/-z
        face = [(d[ax] > 0).astype(np.int8) + np.int8(2 * ax) for ax in range(3)] if normals else None
        nbuf = face[2].copy() if normals else None
        u0, u1, v0, v1, zmin, ok = self._screen_rects(T_world_cam.R, T_world_cam.t, lo + o, hi + o)
        for i in np.argsort(zmin):
            if not ok[i]:
                continue
            win = (slice(v0[i], v1[i]), slice(u0[i], u1[i]))
            zreg = zbuf[win]
            if zmin[i] >= zreg.max():
                continue
            near = []
            tn = tf = None
            for ax in range(3):
                iv = inv[ax][win]
                t1 = lo[i, ax] * iv
                t2 = hi[i, ax] * iv
                n = np.minimum(t1, t2)
                np.maximum(t1, t2, out=t2)
                near.append(n)
                tn = n.copy() if tn is None else np.maximum(tn, n, out=tn)
                tf = t2 if tf is None else np.minimum(tf, t2, out=tf)
            hit = tn <= tf
            hit &= tn > 0
            hit &= tn < zreg
            np.copyto(zreg, tn, where=hit)
            np.copyto(sbuf[win], sid[i], where=hit)
            if normals:
                code = np.where(tn == near[0], face[0][win], np.where(tn == near[1], face[1][win], face[2][win]))
                np.copyto(nbuf[win], code, where=hit)
        return zbuf, sbuf, nbuf, d

    # ------------------------------------------------------------------ public
    def render(self, T_world_cam: Pose, obj_lo: np.ndarray, obj_hi: np.ndarray, obj_ids: np.ndarray,
               obj_rgb: np.ndarray, frame_index: int = 0, with_rgb: bool = True) -> RenderedFrame:
        """Render walls + the given object boxes ((M, 3) corners, ids >= 1, RGB 0-255)."""
        n_walls = len(self.walls_lo)
        lo = np.concatenate([self.walls_lo, np.asarray(obj_lo, dtype=np.float64).reshape(-1, 3)])
        hi = np.concatenate([self.walls_hi, np.asarray(obj_hi, dtype=np.float64).reshape(-1, 3)])
        sid = np.concatenate([-(np.arange(n_walls) + 1), np.asarray(obj_ids, dtype=np.int64).reshape(-1)])
        zbuf, sbuf, nbuf, d = self._trace(T_world_cam, lo, hi, sid, normals=with_rgb)
        depth = np.where(np.isfinite(zbuf), zbuf, 0).astype(np.float32)
        inst = np.maximum(sbuf, 0)
        if not with_rgb:
            return RenderedFrame(np.zeros((1, 1, 3), np.uint8), depth, inst)
        return RenderedFrame(self._shade(T_world_cam, depth, sbuf, nbuf, d, obj_ids, obj_rgb, frame_index), depth, inst)

    def _shade(self, T_world_cam, depth, sbuf, nbuf, d, obj_ids, obj_rgb, frame_index) -> np.ndarray:
        o = T_world_cam.t.astype(np.float32)
        back = depth - np.float32(0.08) * self.ray_len  # step back towards the camera: the room in front of a wall
        px, py, pz = (o[i] + back * d[i] for i in range(3))
        gh, gw = self.grid.shape
        scale = np.float32(1.0 / self.cell)
        gx = ((px - np.float32(self.grid_origin)) * scale).astype(np.int32)
        gy = ((py - np.float32(self.grid_origin)) * scale).astype(np.int32)
        np.clip(gx, 0, gw - 1, out=gx)
        np.clip(gy, 0, gh - 1, out=gy)
        gy *= gw
        gy += gx
        room = self.grid_flat.take(gy)
        n_obj = int(np.max(obj_ids, initial=0)) + 1
        n_rooms = len(self.wall_rgb)
        palette = np.empty((n_obj + 2 * n_rooms + 1, 3), np.float32)
        palette[:n_obj] = 128
        if len(obj_ids):
            palette[np.asarray(obj_ids, dtype=np.int64)] = np.asarray(obj_rgb, dtype=np.float32).reshape(-1, 3)
        palette[n_obj:n_obj + n_rooms] = self.wall_rgb
        palette[n_obj + n_rooms:n_obj + 2 * n_rooms] = self.floor_rgb
        palette[-1] = _CEILING_RGB
        is_floor = sbuf == _FLOOR
        idx = np.where(sbuf > 0, sbuf, np.where(is_floor, n_obj + n_rooms + room,
                                                np.where(sbuf == _CEIL, len(palette) - 1, n_obj + room)))
        n_tex = len(self.texture)
        tu = ((px + py) * np.float32(16)).astype(np.int32) % n_tex
        tv = (pz * np.float32(16)).astype(np.int32) % n_tex
        tv *= n_tex
        tv += tu
        tex = self.texture.ravel().take(tv)
        tile = ((px * np.float32(2)).astype(np.int32) + (py * np.float32(2)).astype(np.int32)) & 1
        np.copyto(tex, np.float32(1) - np.float32(0.08) * tile, where=is_floor)
        np.copyto(tex, np.float32(1), where=sbuf > 0)
        light = _SHADE.take(nbuf) * tex / (1 + np.float32(0.04) * depth)
        r, c = frame_index * 7 % 31, frame_index * 13 % 31
        h, w = depth.shape
        rgb = np.take(palette, idx, axis=0)
        rgb *= light[..., None]
        rgb += self.noise[r:r + h, c:c + w]
        np.clip(rgb, 0, 255, out=rgb)
        return rgb.astype(np.uint8)

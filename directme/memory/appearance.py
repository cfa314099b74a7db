"""An object's colours: a coarse hue-saturation histogram of its mask pixels, kept over its sightings, and whether a
view that reads its place as free space (presence.views_without) still shows those colours there.

A removal leaves the colours of what was behind the object (the floor, the wall, the table top); an
object still in place, its remembered points off its surface along the line of sight (pose drift, the depth
scale of the views that made them), still shows its own colours at its place. The colours at the place are
compared with those of a ring around it, so an object the colour of its surroundings is not taken for
present by its colour alone."""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from ..geometry import mask_box
from .config import GoneConfig
from .objects import ObjectRecord


_PACK = np.array([1 << 10, 1 << 5, 1], dtype=np.int32)  # 5-bit r, g, b -> the colour's index in _cell_table


@lru_cache(maxsize=4)
def _cell_table(levels: int) -> np.ndarray:
    """Histogram cell of every colour at 5 bits a channel (32,768 entries, built once per ``levels``)."""
    q = (np.arange(32, dtype=np.float32) * 8 + 4) / 255.0
    r, g, b = (a.ravel() for a in np.meshgrid(q, q, q, indexing="ij"))
    hi, lo = np.maximum(np.maximum(r, g), b), np.minimum(np.minimum(r, g), b)
    chroma = hi - lo
    sat = np.where(hi > 0, chroma / np.maximum(hi, 1e-6), 0.0)
    c = np.maximum(chroma, 1e-6)
    hue = np.where(hi == r, ((g - b) / c) % 6.0, np.where(hi == g, (b - r) / c + 2.0, (r - g) / c + 4.0)) / 6.0
    n_hue = 3 * levels
    grey = (sat < 0.2) | (hi < 0.15)
    return np.where(grey, np.minimum((hi * levels).astype(np.int64), levels - 1),
                    levels + np.minimum((hue * n_hue).astype(np.int64), n_hue - 1) * 2 + (sat >= 0.6)).astype(np.int32)


def colour_histogram(pixels_rgb: np.ndarray, levels: int) -> Optional[np.ndarray]:
    """Normalised histogram of (N, 3) uint8 pixels over hue and saturation, which shading and the angle of view
    change little: ``levels`` x 3 hue cells for two saturation bands, and ``levels`` brightness cells for the
    greys (saturation below 0.2, or dark); None for no pixels."""
    if not len(pixels_rgb):
        return None
    if pixels_rgb.dtype == np.uint8:  # the 5-bit channels packed by one product (the same index as below)
        idx = (pixels_rgb >> 3) @ _PACK
    else:
        p = pixels_rgb.astype(np.int32) >> 3
        idx = (p[:, 0] << 10) | (p[:, 1] << 5) | p[:, 2]
    h = np.bincount(_cell_table(levels)[idx], minlength=7 * levels).astype(np.float32)
    return h / np.add.reduce(h)


def takes_colour(n_sightings: int, cfg: GoneConfig) -> bool:
    """Whether an object's ``n_sightings``-th sighting updates its colours: each of the first
    ``colour_min_sightings`` (the colours still_shows needs), then every ``colour_every``-th (an object's colours
    change little from one sighting to the next)."""
    return n_sightings <= cfg.colour_min_sightings or n_sightings % cfg.colour_every == 0


def update_colour(rec: ObjectRecord, rgb: Optional[np.ndarray], mask: np.ndarray, cfg: GoneConfig) -> None:
    """Fold this sighting's mask pixels (at most ``colour_max_pixels``, evenly spread) into the object's colours."""
    if rgb is None or rgb.ndim != 3 or rgb.shape[:2] != mask.shape:
        return
    box = mask_box(mask)
    if box is None:
        return
    c0, r0, c1, r1 = box
    k = _step((r1 - r0) * (c1 - c0), cfg.colour_max_pixels)  # an even grid over its box
    h = colour_histogram(rgb[r0:r1:k, c0:c1:k][mask[r0:r1:k, c0:c1:k]], cfg.colour_levels)
    if h is None:
        return
    old = rec.colour
    rec.colour = h if old is None or len(old) != len(h) else (1.0 - cfg.colour_update) * old + cfg.colour_update * h


def _step(n_pixels: int, max_pixels: int) -> int:
    """The stride of an even grid that keeps about ``max_pixels`` of ``n_pixels``."""
    return max(1, int(np.sqrt(n_pixels / max_pixels)))


def still_shows(rec: ObjectRecord, rgb: Optional[np.ndarray], u: np.ndarray, v: np.ndarray, cfg: GoneConfig) -> bool:
    """Whether the image still shows the colours of an object seen at least ``colour_min_sightings`` times at its
    place - the central part of the box of its points' pixels ``(u, v)`` - (histogram intersection at least
    ``colour_min_similarity``), clearly more than in a ring around that box (by ``colour_margin``)."""
    if rec.colour is None or rgb is None or rgb.ndim != 3 or not len(u) or len(rec.obs_t) < cfg.colour_min_sightings:
        return False  # a single sighting's colours may be a false detection's: the background itself
    h, w = rgb.shape[:2]
    u0, u1, v0, v1 = int(u.min()), int(u.max()), int(v.min()), int(v.max())
    du, dv = int(cfg.colour_core_shrink * (u1 - u0)), int(cfg.colour_core_shrink * (v1 - v0))
    core = rgb[v0 + dv:v1 - dv + 1, u0 + du:u1 - du + 1]
    k = _step(core.shape[0] * core.shape[1], cfg.colour_max_pixels)
    core = core[::k, ::k].reshape(-1, 3)
    pad = max(cfg.colour_ring_min_px, int(cfg.colour_ring * max(u1 - u0, v1 - v0)))
    a0, a1, b0, b1 = max(u0 - pad, 0), min(u1 + pad, w - 1), max(v0 - pad, 0), min(v1 + pad, h - 1)
    k = _step((b1 - b0 + 1) * (a1 - a0 + 1), cfg.colour_max_pixels)
    vv, uu = np.mgrid[b0:b1 + 1:k, a0:a1 + 1:k]
    out = (uu < u0) | (uu > u1) | (vv < v0) | (vv > v1)
    ring = rgb[vv[out], uu[out]]
    hc, hr = colour_histogram(core, cfg.colour_levels), colour_histogram(ring, cfg.colour_levels)
    if hc is None or hr is None or len(hc) != len(rec.colour):
        return False
    s_core = float(np.minimum(hc, rec.colour).sum())
    s_ring = float(np.minimum(hr, rec.colour).sum())
    return s_core >= cfg.colour_min_similarity and s_core - s_ring >= cfg.colour_margin

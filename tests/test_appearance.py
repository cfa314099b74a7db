"""An object's colours (memory/appearance.py): a view that reads its place as free space but still shows its
colours there, clearly more than around it, is a detector miss, not a removal."""
from __future__ import annotations

import numpy as np
import pytest

from directme.errors import InvalidInputError
from directme.memory import SpatialMemory, ingest
from directme.memory.appearance import (
    colour_histogram,
    still_shows,
    takes_colour,
    update_colour,
)
from directme.memory.config import GoneConfig
from directme.memory.objects import ObjectRecord
from directme.sim import OraclePerception, generate_episode

CFG = GoneConfig()
RED, DARK_RED, GREY, BLUE = (200, 30, 30), (110, 15, 15), (128, 128, 128), (30, 40, 200)


def _image(background, square=None, colour=RED) -> np.ndarray:
    img = np.empty((60, 80, 3), np.uint8)
    img[:] = background
    if square is not None:
        r0, r1, c0, c1 = square
        img[r0:r1, c0:c1] = colour
    return img


def _seen_red(times: int = 3) -> ObjectRecord:
    rec = ObjectRecord(0)
    mask = np.zeros((60, 80), bool)
    mask[20:40, 30:50] = True
    for k in range(times):
        rec.add_observation(float(k), k, 0, 0.9)
        update_colour(rec, _image(GREY, (20, 40, 30, 50)), mask, CFG)
    return rec


def _place() -> tuple[np.ndarray, np.ndarray]:
    vv, uu = np.mgrid[21:39:3, 31:49:3]  # the remembered points' pixels: inside the square
    return uu.ravel(), vv.ravel()


def test_histogram_is_normalised_and_shading_changes_it_little():
    a = colour_histogram(np.array([RED] * 50, np.uint8), CFG.colour_levels)
    b = colour_histogram(np.array([DARK_RED] * 50, np.uint8), CFG.colour_levels)
    c = colour_histogram(np.array([BLUE] * 50, np.uint8), CFG.colour_levels)
    assert np.isclose(a.sum(), 1.0) and colour_histogram(np.zeros((0, 3), np.uint8), 4) is None
    assert np.minimum(a, b).sum() == pytest.approx(1.0)  # the same red in shade
    assert np.minimum(a, c).sum() == 0.0


def test_still_there_removed_and_camouflaged():
    rec, (u, v) = _seen_red(), _place()
    assert still_shows(rec, _image(GREY, (20, 40, 30, 50), DARK_RED), u, v, CFG)  # there, in shade
    assert not still_shows(rec, _image(GREY), u, v, CFG)  # removed: the grey wall behind it
    assert not still_shows(rec, _image(RED), u, v, CFG)  # red on red: its colours tell nothing
    assert not still_shows(rec, None, u, v, CFG)  # no image


def test_one_sighting_is_not_enough():
    rec, (u, v) = _seen_red(times=1), _place()
    assert not still_shows(rec, _image(GREY, (20, 40, 30, 50)), u, v, CFG)


def test_colours_survive_save_and_restore():
    rec = _seen_red()
    cols = rec.columns()
    back = ObjectRecord(0)
    back.restore_columns(cols)
    assert np.allclose(back.colour, rec.colour)
    del cols["colour"]  # a save from before colours
    old = ObjectRecord(0)
    old.restore_columns(cols)
    assert old.colour is None


@pytest.mark.parametrize("bad", [{"colour_levels": 1}, {"colour_core_shrink": 0.5}, {"colour_margin": 1.5},
                                 {"colour_min_sightings": 0}, {"colour_max_pixels": 0}, {"colour_every": 0}])
def test_config_checks_the_colour_fields(bad):
    with pytest.raises(InvalidInputError):
        GoneConfig(**bad)


def test_colours_take_the_first_sightings_then_every_few():
    cfg = GoneConfig(colour_min_sightings=2, colour_every=3)
    assert [n for n in range(1, 13) if takes_colour(n, cfg)] == [1, 2, 3, 6, 9, 12]
    assert all(takes_colour(n, GoneConfig(colour_every=1)) for n in range(1, 20))


def test_the_update_folds_colours_only_from_the_sightings_that_take_them(monkeypatch):
    taken = []
    real = ingest.update_colour

    def spy(rec, rgb, mask, cfg):
        taken.append(len(rec.obs_t))
        real(rec, rgb, mask, cfg)

    monkeypatch.setattr(ingest, "update_colour", spy)
    ep = generate_episode(seed=0, minutes=0.5)
    oracle = OraclePerception(ep, noise="none", seed=0)
    mem = SpatialMemory()
    mem.update_many(oracle.perceive(f) for f in ep.frames())
    assert taken and all(takes_colour(n, mem.cfg.gone) for n in taken)
    assert max(len(r.obs_t) for r in mem.objects.records) > CFG.colour_every + CFG.colour_min_sightings
    assert len(taken) < sum(len(r.obs_t) for r in mem.objects.records)  # sightings were left out

"""The memory's components and boundaries: sectioned config (old flat keys), what the snapshot says about
views and observations, per-component persistence, and the format-1 save layout."""
import json
import re
import warnings

import numpy as np
import pytest

from directme.errors import InvalidInputError
from directme.geometry import Intrinsics
from directme.memory import MemoryConfig, SpatialMemory
from directme.memory.config import AssociationConfig
from directme.memory.testing import Box, look_at, orbit, perceive

SCENE = [Box(1, "cup", (0.0, 0.0, 0.05), (0.1, 0.1, 0.1)), Box(2, "chair", (0.8, 0.6, 0.4), (0.5, 0.5, 0.8))]
Z_UP = MemoryConfig(up_world=(0.0, 0.0, 1.0))


def test_flat_keys_load_with_a_deprecation_naming_the_new_key():
    with pytest.warns(DeprecationWarning, match=r"relocalize -> relocalisation\.enabled"):
        cfg = MemoryConfig.from_dict({"relocalize": False, "voxel_m": 0.1, "gone_margin_px": 5})
    assert (cfg.relocalisation.enabled, cfg.map.voxel_m, cfg.gone.margin_px) == (False, 0.1, 5)


def test_retired_gone_fields_of_older_saves_load_with_a_warning():
    """The frame counter and view cone of "gone" became the presence belief: older configs still load."""
    with pytest.warns(DeprecationWarning, match=r"gone\.frames \(retired"):
        cfg = MemoryConfig.from_dict({"gone": {"frames": 3, "view_range_m": [0.8, 4.5], "min_px": 5.0}})
    assert cfg.gone.min_px == 5.0
    with pytest.warns(DeprecationWarning, match=r"gone_frames \(retired"):
        MemoryConfig.from_dict({"gone_frames": 3})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the nested form warns about nothing
        again = MemoryConfig.from_dict(cfg.to_dict())
    assert again == cfg


def test_config_errors_name_the_section_and_field():
    with pytest.raises(InvalidInputError, match=r"unknown MemoryConfig.association fields \['radius'\]"):
        MemoryConfig.from_dict({"association": {"radius": 1.0}})
    with pytest.raises(InvalidInputError, match=r"memory\.association\.recent_s must be > 0"):
        MemoryConfig().replace(association__recent_s=0)
    with pytest.raises(InvalidInputError, match="must be a mapping"):
        MemoryConfig.from_dict({"gone": 3})
    with pytest.raises(InvalidInputError, match="must be a AssociationConfig"):
        MemoryConfig(association={"recent_s": 1.0})


def test_a_former_module_constant_is_a_setting_that_acts():
    """association.recent_s (was a module constant): a node unseen for longer gets the drift allowance."""
    boxes = [Box(1, "cup", (0.0, 0.0, 0.05), (0.1, 0.1, 0.1))]
    K = Intrinsics.from_fov(160, 120, 70.0)
    pose = look_at((1.2, 0.0, 0.8), (0.0, 0.0, 0.05))
    shifted = [Box(1, "cup", (0.45, 0.0, 0.05), (0.1, 0.1, 0.1))]  # 0.45 m away: only a loose match joins it
    counts = {}
    for recent_s in (5.0, 30.0):
        cfg = MemoryConfig().replace(up_world=(0.0, 0.0, 1.0), association__recent_s=recent_s,
                                     relocalisation__enabled=False, heading__enabled=False)
        mem = SpatialMemory(cfg)
        for k in range(3):
            mem.update(perceive(boxes, pose, K, float(k), k))
        mem.update(perceive(shifted, pose, K, 20.0, 3, track_ids={1: 7}))  # a new track id 20 s later
        counts[recent_s] = len(mem.as_of(20.0).objects)
    assert counts == {5.0: 1, 30.0: 2}, counts
    assert AssociationConfig().recent_s == 10.0


def test_snapshot_carries_observation_times_and_the_presence_belief():
    mem = SpatialMemory(Z_UP)
    frames = list(orbit(SCENE, 6, size=(160, 120), radius=2.0))
    mem.update_many(frames)
    seen = mem.as_of(frames[-1].t_s)
    (cup,) = [o for o in seen.objects.values() if o.label == "cup"]
    assert cup.obs_times_s.tolist() == [f.t_s for f in frames]
    assert cup.present and cup.presence_p > 0.95  # seen in every view
    narrow = SpatialMemory(Z_UP)  # a camera whose image is too narrow to have shown it off-centre
    narrow.update_many(frames)
    K = Intrinsics.from_fov(160, 120, 70.0)
    K_narrow = Intrinsics(fx=400.0, fy=400.0, cx=80.0, cy=60.0, width=160, height=120)
    cup_gone = [SCENE[1]]  # the chair alone: the cup has left
    off = look_at((1.5, 0.0, 1.0), (0.0, -0.5, 0.05))
    for k in range(3):
        narrow.update(perceive(cup_gone, off, K_narrow, 10.0 + k, 6 + k))
    assert narrow.as_of(12.0).objects[cup.node_id].presence_p == cup.presence_p  # out of view: no evidence
    pose = look_at((1.5, 0.0, 1.0), (0.0, 0.0, 0.05))  # the cup's place, straight ahead at ~1.8 m
    for k in range(2):
        mem.update(perceive(cup_gone, pose, K, 10.0 + k, 6 + k))
    after = mem.as_of(10.0).objects[cup.node_id]
    assert not after.present and after.presence_p < 0.5 and after.gone_since_s == 10.0  # its place seen empty
    assert mem.as_of(9.9).objects[cup.node_id].presence_p == cup.presence_p  # causal: only views up to t


def _as_flat_save(directory, fmt: str, config) -> None:
    """Rewrite a format-4 save in the layout of formats 1-3: one flat metadata dict, arrays and images under their
    plain names (format 1: no manifest, no intrinsics in the ego log)."""
    meta = json.loads((directory / "memory.json").read_text())
    c = meta["components"]
    flat = {"format": fmt, "config": config, **c["objects"], **c["ego"], "place_tags": c["places"]["tags"],
            "T_mem_input": c["pose"]["T_mem_input"], "recent_corrections": c["pose"]["recent"],
            "heading": {k: v for k, v in c["heading"].items() if k != "corrections"},
            "heading_corrections": c["heading"]["corrections"], "vertical": c["vertical"], "scan": c["scan"],
            "reloc_pairs": c["relocalisation"]["pairs"], "reloc_used": c["relocalisation"]["used"],
            "reloc_aligned": c["relocalisation"]["aligned"], "relocalisations": c["relocalisation"]["corrections"]}
    (directory / "manifest.json").unlink()
    (directory / "memory.json").write_text(json.dumps(flat))
    for name, prefix in (("arrays.npz", r"^[a-z]+/"), ("images.npz", r"^objects/image/")):
        with np.load(directory / name) as z:
            arrays = {re.sub(prefix, "", k): z[k] for k in z.files}
        arrays.pop("ego_K", None)
        np.savez(directory / name, **arrays)


def test_components_persist_themselves_and_format_1_still_loads(tmp_path):
    mem = SpatialMemory(Z_UP)
    mem.update_many(orbit(SCENE, 8, size=(160, 120), radius=2.0))
    mem.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "memory.json").read_text())
    assert meta["format"] == "directme-memory/4" and "association" in meta["config"]
    assert sorted(meta["components"]) == sorted(mem.parts())  # each component's state under its own key
    loaded = SpatialMemory.load(tmp_path / "m")
    assert np.array_equal(loaded.ego.K.view(), mem.ego.K.view())
    assert loaded.objects.labels == mem.objects.labels and loaded.pose.to_state() == mem.pose.to_state()
    # a format-1 save: flat config keys, flat metadata, no intrinsics in the ego log, no manifest
    _as_flat_save(tmp_path / "m", "directme-memory/1", {"up_world": [0.0, 0.0, 1.0], "relocalize": True,
                                                        "voxel_m": 0.05})
    old = SpatialMemory.load(tmp_path / "m")
    assert old.cfg == Z_UP
    a, b = old.as_of(7.0), mem.as_of(7.0)
    assert sorted(a.objects) == sorted(b.objects)
    assert all(np.allclose(a.objects[n].position_w, b.objects[n].position_w) for n in a.objects)
    assert old.pose.heading.to_state() == mem.pose.heading.to_state()


def test_every_component_follows_the_protocol_and_round_trips_its_state():
    """What adding a component takes: the protocol (update, to_state, from_state, key, the MemoryConfig sections
    it reads, its own first), a place in ``SpatialMemory.parts`` and in persist.COMPONENTS, and a state that
    comes back bit for bit; every section of MemoryConfig is read by a component."""
    from directme.memory.component import MemoryComponent
    from directme.memory.config import _SECTIONS
    from directme.memory.persist import COMPONENTS
    from test_save_roundtrip import differences

    mem = SpatialMemory()  # the vertical estimated: every pose stage has state
    mem.update_many(orbit(SCENE, 12, size=(160, 120), radius=2.0))
    parts = mem.parts()
    assert list(parts) == list(COMPONENTS)  # saved and loaded in this order
    loaded: dict = {}
    for key, part in parts.items():
        assert isinstance(part, MemoryComponent) and part.key == key, key
        assert set(part.sections) <= set(_SECTIONS), (key, part.sections)
        state = part.to_state()
        back = type(part).from_state(mem.cfg, state, loaded)
        assert differences(state, back.to_state()) == [], key
        loaded[key] = back
    assert [type(c).key for c in mem.components] == ["pose", "ego", "places", "outline", "objects"]
    read = {name for part in parts.values() for name in part.sections}
    assert read == set(_SECTIONS), set(_SECTIONS) - read  # every section is some component's


def test_every_config_field_is_documented_in_memory_md():
    from dataclasses import fields
    from pathlib import Path

    from directme.memory.config import _SECTIONS

    doc = (Path(__file__).resolve().parents[1] / "docs" / "memory.md").read_text(encoding="utf-8")
    missing = [f"{name}.{f.name}" for name, cls in _SECTIONS.items() for f in fields(cls)
               if f"| `{f.name}` | `{f.default}` |" not in doc]
    assert not missing, f"docs/memory.md Configuration tables lack (or have a stale default for): {missing}"

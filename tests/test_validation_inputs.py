"""Validation at the door of the Agent: a frame, an instance, a FramePerception or a question is either
accepted and answered correctly, or refused with a clear DirectmeError that names the field, and a refused
input changes nothing (the memory's snapshot, its latest time and the agent's input clock included).

Hypothesis properties (derandomised, few examples) plus the hostile-user probe's findings 3 and 4."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from directme import Agent
from directme.errors import DirectmeError, InvalidInputError
from directme.geometry import Intrinsics, Pose
from directme.memory.testing import Box, look_at, perceive, snapshot_facts
from directme.types import Answer, Frame, FramePerception, InstanceObservation

FAST = settings(max_examples=25, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
BOXES = [Box(1, "chair", (2.5, 0.0, 0.45), (0.6, 0.6, 0.9)), Box(2, "couch", (0.0, 2.5, 0.4), (0.9, 0.9, 0.8))]
K = Intrinsics.from_fov(64, 48, 80.0)
CONFIG = {"query": {"embedder": "string"}}


def _fp(k: int, t: float | None = None, tag: str = "living room") -> FramePerception:
    a = np.deg2rad(10.0 * k)
    return perceive(BOXES, look_at((0, 0, 1.5), (np.cos(a), np.sin(a), 1.1)), K, 1.0 + k if t is None else t, k, tag)


def _frame(fp: FramePerception, **meta) -> Frame:
    """The frame as the "given" perception takes it: instances and scene tag in ``meta``."""
    f = fp.frame
    return Frame(f.t_s, f.rgb, f.depth_m, f.T_world_cam, f.intrinsics, f.index, "boxes",
                 {"instances": fp.instances, "scene_tag": fp.scene_tag, **meta})


FPS = [_fp(k) for k in range(8)]


def _state(agent: Agent):
    mem = agent.memory
    facts = snapshot_facts(mem.as_of(mem.latest_t_s)) if mem.latest_t_s is not None else None
    return facts, agent._first_t, agent._last_t, agent._last_input_t, mem.latest_t_s, len(mem.ego)


def _equal(a, b) -> bool:
    try:
        np.testing.assert_equal(a, b)
        return True
    except AssertionError:
        return False


@pytest.fixture(scope="module")
def fed() -> Agent:
    agent = Agent(CONFIG)
    for fp in FPS[:4]:
        agent.observe_perception(fp)
    return agent


# ------------------------------------------------------------------ hostile values

def _hostile():
    return st.one_of(st.none(), st.booleans(), st.integers(), st.integers(10 ** 18, 10 ** 400),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                     st.sampled_from(["", "  ", "9" * 400, "false"]), st.lists(st.integers(0, 3), max_size=2))


def _real(v) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


FIELDS = {  # field -> (how to build the input with value v, is v valid?)
    "label": (lambda fp, v: dataclasses.replace(fp, instances=(InstanceObservation(1, v, 0.9, fp.instances[0].mask),)),
              lambda v: isinstance(v, str) and bool(v.strip()) and len(v) <= 10_000),
    "track_id": (lambda fp, v: dataclasses.replace(fp, instances=(InstanceObservation(v, "chair", 0.9,
                                                                                      fp.instances[0].mask),)),
                 lambda v: isinstance(v, int) and not isinstance(v, bool) and -2 ** 63 <= v < 2 ** 63),
    "score": (lambda fp, v: dataclasses.replace(fp, instances=(InstanceObservation(1, "chair", v,
                                                                                   fp.instances[0].mask),)),
              lambda v: _real(v) and 0 <= v <= 1),
    "scene_tag": (lambda fp, v: dataclasses.replace(fp, scene_tag=v),
                  lambda v: v is None or (isinstance(v, str) and bool(v.strip()) and len(v) <= 10_000)),
    "scene_tag_score": (lambda fp, v: dataclasses.replace(fp, scene_tag_score=v), lambda v: _real(v) and 0 <= v <= 1),
    "t_s": (lambda fp, v: dataclasses.replace(fp, frame=dataclasses.replace(fp.frame, t_s=v)),
            lambda v: _real(v) and 4.0 <= v <= 1e7),
    "index": (lambda fp, v: dataclasses.replace(fp, frame=dataclasses.replace(fp.frame, index=v)),
              lambda v: isinstance(v, int) and not isinstance(v, bool) and -2 ** 31 <= v < 2 ** 31),
}


@FAST
@given(field=st.sampled_from(sorted(FIELDS)), value=_hostile(), k=st.integers(4, 7))
def test_observe_perception_clear_error_or_accepted_and_memory_unchanged_on_error(field, value, k):
    agent = Agent(CONFIG)
    for fp in FPS[:4]:
        agent.observe_perception(fp)
    before = _state(agent)
    build, valid = FIELDS[field]
    try:
        agent.observe_perception(build(FPS[k], value))
    except DirectmeError as exc:
        assert not valid(value), f"{field}={value!r} is valid but was refused: {exc}"
        assert field.split("_")[0] in str(exc).lower() or "t_s" in str(exc), str(exc)
        assert _equal(_state(agent), before), "a refused input changed the memory or the clock"
    else:
        assert valid(value), f"{field}={value!r} was accepted"
        assert agent.latest_t >= before[2]


@FAST
@given(kind=st.sampled_from(["mm", "nan", "inf", "far_pose", "fx_tiny", "instances_int", "meta_label_none", "ok"]),
       k=st.integers(4, 7))
def test_observe_frames_refused_with_the_field_named_and_nothing_recorded(kind, k):
    agent = Agent(CONFIG)
    for fp in FPS[:4]:
        agent.observe_perception(fp)
    before = _state(agent)
    fp = FPS[k]
    f = fp.frame
    far = f.T_world_cam.matrix.copy()
    far[:3, 3] = 1e9
    builders = {
        "mm": lambda: _frame(dataclasses.replace(fp, frame=dataclasses.replace(f, depth_m=f.depth_m * 1000))),
        "nan": lambda: _frame(dataclasses.replace(fp, frame=dataclasses.replace(f, depth_m=f.depth_m * np.nan))),
        "inf": lambda: _frame(dataclasses.replace(fp, frame=dataclasses.replace(f, depth_m=f.depth_m + np.inf))),
        "far_pose": lambda: Frame(f.t_s, f.rgb, f.depth_m, Pose(far), f.intrinsics),
        "fx_tiny": lambda: Frame(f.t_s, f.rgb, f.depth_m, f.T_world_cam, Intrinsics(1e-9, 1e-9, 32, 24, 64, 48)),
        "instances_int": lambda: _frame(fp, instances=3),
        "meta_label_none": lambda: _frame(fp, instances=[InstanceObservation(1, None, 0.9, fp.instances[0].mask)]),
        "ok": lambda: _frame(fp)}
    needle = {"mm": "millimetres", "nan": "no valid pixel", "inf": "infinite", "far_pose": "T_world_cam",
              "fx_tiny": "fx", "instances_int": "instances", "meta_label_none": "label"}
    try:
        n = agent.observe(builders[kind]())
    except DirectmeError as exc:
        assert kind != "ok", str(exc)
        assert needle[kind] in str(exc)
        assert _equal(_state(agent), before)
    else:
        assert kind == "ok" and n == 1 and agent.latest_t == f.t_s


def _options():
    item = st.one_of(st.sampled_from(["front", "behind", "left", "1", "9" * 400, "", "²"]), st.text(max_size=5))
    return st.one_of(st.none(), st.lists(item, max_size=4), st.lists(item, min_size=11, max_size=11),
                     st.text(max_size=4), st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=2),
                     st.lists(st.one_of(item, _hostile()), max_size=3), _hostile())


@FAST
@given(question=st.one_of(st.sampled_from(["Where is the chair?", "How many chairs are there?",
                                           "Where was the cup 99999999999999999999999 hours ago?"]), _hostile()),
       t=st.one_of(st.none(), st.floats(0, 4), _hostile()), options=_options())
def test_ask_clear_error_or_answer_and_memory_unchanged(fed, question, t, options):
    before = _state(fed)
    valid_q = isinstance(question, str) and bool(question.strip()) and len(question) <= 10_000
    valid_t = t is None or (_real(t) and 0 <= t <= fed.latest_t)
    valid_o = options is None or (isinstance(options, (list, tuple)) and len(options) <= 10 and
                                  all(isinstance(o, str) and len(o) <= 10_000 for o in options))
    try:
        a = fed.ask(question, t=t, options=options)
    except DirectmeError as exc:
        assert not (valid_q and valid_t and valid_o), f"valid question refused: {exc}"
        assert any(w in str(exc) for w in ("question", "option", "time", "t=")), str(exc)
    else:
        assert valid_q and valid_t and valid_o, "an invalid question was answered"
        assert isinstance(a, Answer) and 0.0 <= a.confidence <= 1.0
        if options:
            assert a.letter is None or a.letter in "ABCDEFGHIJ"[:len(options)]
            assert a.option_scores is None or math.isclose(sum(a.option_scores.values()), 1.0)
    assert _equal(_state(fed), before), "ask changed the memory"


# ------------------------------------------------------------------ the probe's findings


def test_probe_finding_3_a_rejected_frame_does_not_move_the_clock(tmp_path):
    """A frame refused at t=1000 leaves the input clock at 4 s: later valid frames are accepted (also after
    save/load) and a question at t=500 is about the future, not answered at confidence 1 from a 4 s memory."""
    agent = Agent(CONFIG)
    for fp in FPS[:4]:
        agent.observe(_frame(fp))
    before = _state(agent)
    bad = _frame(FPS[4], instances=[1, 2])  # not InstanceObservations: refused by the given perception
    bad = dataclasses.replace(bad, t_s=1000.0)
    with pytest.raises(InvalidInputError, match="instances"):
        agent.observe(bad)
    assert _equal(_state(agent), before) and agent._last_input_t == 4.0
    with pytest.raises(InvalidInputError, match="future"):
        agent.ask("Where is the chair?", t=500.0)
    assert agent.observe(_frame(FPS[4])) == 1 and agent.latest_t == 5.0
    agent.save(tmp_path / "saved")
    again = Agent.load(tmp_path / "saved")
    assert again.observe(_frame(FPS[5])) == 1 and again.latest_t == 6.0
    with pytest.raises(InvalidInputError, match="future"):
        again.ask("Where is the chair?", t=500.0)


def test_probe_finding_4_wrong_typed_fields_never_reach_memory(tmp_path):
    """A label of None or an int, a track id "abc", a non-string scene tag are refused where they are made,
    naming the field; the memory keeps answering and saving."""
    mask = FPS[4].instances[0].mask
    for label in (None, 5, 2.5, "", "   ", b"cup"):
        with pytest.raises(InvalidInputError, match="label"):
            InstanceObservation(1, label, 0.9, mask)
    for track in ("abc", 1.5, True, None, 2 ** 70):
        with pytest.raises(InvalidInputError, match="track_id"):
            InstanceObservation(track, "cup", 0.9, mask)
    with pytest.raises(InvalidInputError, match="score"):
        InstanceObservation(1, "cup", "0.9", mask)
    agent = Agent(CONFIG)
    for fp in FPS[:4]:
        agent.observe(_frame(fp))
    before = _state(agent)
    for tag in (5, ["kitchen"], ""):
        f = _frame(FPS[4])
        f = dataclasses.replace(f, meta={**f.meta, "scene_tag": tag})
        with pytest.raises(InvalidInputError, match="scene_tag"):
            agent.observe(f)
        with pytest.raises(InvalidInputError, match="scene_tag"):
            agent.observe_perception(dataclasses.replace(FPS[4], scene_tag=tag))
    assert _equal(_state(agent), before)
    assert agent.ask("Where is the chair?", options=["front", "behind"]).letter in ("A", "B")
    agent.save(tmp_path / "saved")
    assert Agent.load(tmp_path / "saved").ask("Where is the chair?").text


def test_options_are_never_split_or_keyed_and_numbers_never_overflow(fed):
    with pytest.raises(InvalidInputError, match="single str"):
        fed.ask("Where is the chair?", options="abc")
    with pytest.raises(InvalidInputError, match="dict"):
        fed.ask("Where is the chair?", options={"front": 1, "behind": 2})
    with pytest.raises(InvalidInputError, match=r"options\[1\]"):
        fed.ask("Where is the chair?", options=["front", 2])
    with pytest.raises(InvalidInputError, match="question time"):
        fed.ask("Where is the chair?", t="abc")
    a = fed.ask("How many chairs are there?", options=["9" * 400, "1"])
    assert a.letter in ("A", "B") and math.isclose(sum(a.option_scores.values()), 1.0)


def test_depth_units_intrinsics_and_pose_magnitudes():
    f = FPS[4].frame
    mem_fp = dataclasses.replace(FPS[4], frame=dataclasses.replace(f, depth_m=f.depth_m * 1000.0))
    agent = Agent(CONFIG)
    with pytest.raises(InvalidInputError, match="millimetres"):
        agent.observe_perception(mem_fp)
    assert agent.latest_t is None and agent._last_input_t is None
    with pytest.raises(InvalidInputError, match="fx=1e-09"):
        Intrinsics(1e-9, 1e-9, 32, 24, 64, 48)
    with pytest.raises(InvalidInputError, match="cx"):
        Intrinsics(50, 50, 1e6, 24, 64, 48)
    far = f.T_world_cam.matrix.copy()
    far[:3, 3] = 1e9
    with pytest.raises(InvalidInputError, match="metres in a local frame"):
        Frame(1.0, f.rgb, f.depth_m, far, f.intrinsics)
    with pytest.raises(InvalidInputError, match="beyond"):
        Frame(1e308, f.rgb)
    with pytest.raises(InvalidInputError, match="index"):
        Frame(1.0, f.rgb, index=2 ** 40)


# ------------------------------------------------------------------ well-formed but awkward geometry

_RECT = st.tuples(st.integers(0, 47), st.integers(0, 47), st.integers(0, 63), st.integers(0, 63))


@FAST
@given(stride=st.sampled_from([1, 2, 4]), holes=st.lists(st.tuples(_RECT, st.sampled_from([np.nan, 0.0, 50.0])),
                                                         max_size=3),
       masks=st.lists(_RECT, min_size=1, max_size=3))
def test_valid_frames_with_holes_in_depth_and_odd_masks_are_taken_at_any_pixel_stride(stride, holes, masks):
    """Depth with missing (NaN, 0) or out-of-range patches and masks of any size and place - over no valid depth,
    a single pixel, the image border - are valid input: every frame is taken, none raises."""
    agent = Agent({**CONFIG, "memory": {"map": {"pixel_stride": stride}}})
    for k, fp in enumerate(FPS[:3]):
        depth = fp.frame.depth_m.copy()
        for (r0, r1, c0, c1), value in holes:
            depth[min(r0, r1):max(r0, r1) + 1, min(c0, c1):max(c0, c1) + 1] = value
        insts = []
        for j, (r0, r1, c0, c1) in enumerate(masks):
            m = np.zeros(depth.shape, bool)
            m[min(r0, r1):max(r0, r1) + 1, min(c0, c1):max(c0, c1) + 1] = True
            insts.append(InstanceObservation(10 + j, ("chair", "couch", "lamp")[j % 3], 0.8, m))
        frame = dataclasses.replace(fp.frame, depth_m=depth)
        assert agent.observe_perception(FramePerception(frame, tuple(insts), fp.scene_tag)) == 1
    assert agent.memory.latest_t_s == FPS[2].t_s


@FAST
@given(w=st.integers(2, 90), h=st.integers(2, 70), fov=st.floats(20, 170), stride=st.sampled_from([1, 3, 8]),
       yaw=st.floats(-180, 180), n=st.integers(1, 4), twin=st.booleans(), same_t=st.booleans())
def test_any_image_size_field_of_view_and_stride_is_taken_and_answered(w, h, fov, stride, yaw, n, twin, same_t):
    """Frames from 2x2 to 90x70 pixels, fields of view of 20-170 degrees, every pixel stride, repeated
    timestamps and a second track on one mask: every frame is taken and every question answered."""
    K_ = Intrinsics.from_fov(w, h, fov)
    agent = Agent({**CONFIG, "memory": {"map": {"pixel_stride": stride}}})
    for k in range(n):
        a = np.deg2rad(yaw + 15.0 * k)
        fp = perceive(BOXES, look_at((0, 0, 1.5), (np.cos(a), np.sin(a), 1.1)), K_, 1.0 + (0 if same_t else k), k,
                      "living room")
        if twin and fp.instances:
            fp = dataclasses.replace(fp, instances=fp.instances + (dataclasses.replace(fp.instances[0], track_id=99),))
        assert agent.observe_perception(fp) == 1
    for q in ("How many chairs are there?", "Where is the couch?", "Is the chair on my left?"):
        assert isinstance(agent.ask(q), Answer)

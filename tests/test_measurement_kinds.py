"""The measurement kinds (query/kinds, answerers/measure.py, sim/question_gen_spatial.py): parsing in the
benchmark's templates, each kind's own prototypes, the simulator's ground truth and the MRA score."""
from __future__ import annotations

import math

import numpy as np
import pytest

from directme.answerers.measure import min_area_rectangle_m2
from directme.bench.metrics import mean_relative_accuracy
from directme.query.intent import HERE, Primitive, parse_question
from directme.query.kinds import REGISTRY, Roles
from directme.sim import generate_episode
from directme.sim import questions as Q
from directme.sim.catalog import CATALOG
from directme.sim.question_gen_spatial import box_distance_m, turn_of

FMT = {"obj": "backpack", "objs": "backpacks", "a": "bed", "b": "coffee table", "cats": "toilet, sink, bed, lamp",
       "start": "bed", "facing": "desk", "end": "lamp",
       "route": "1. Go forward until the desk. 2. [please fill in] 3. Go forward until the lamp."}
KINDS = tuple(spec for spec in REGISTRY.values() if spec.roles == Roles.OWN)  # the measurement kinds
EXPECTED = {"object_size": (Primitive("object_size"), ["backpack"]), "room_size": (Primitive("room_size"), []),
            "room_size_of": (Primitive("room_size"), ["backpack"]),
            "appearance_order": (Primitive("appearance_order"), ["toilet", "sink", "bed", "lamp"]),
            "route_plan": (Primitive("route_plan"), ["bed", "desk", "lamp"]),
            "abs_distance": (Primitive.DISTANCE, ["bed", "coffee table"]), "count_here": (Primitive.COUNT, ["backpack"])}


@pytest.mark.parametrize("kind", sorted(Q.SPATIAL_TEMPLATES))
def test_templates_and_dev_phrasings_parse(kind):
    for text in Q.SPATIAL_TEMPLATES[kind] + Q.SPATIAL_PHRASINGS["dev"][kind]:
        it = parse_question(text.format(**FMT), use_model=False)
        prim, keys = EXPECTED[kind]
        assert it.primitive == prim and it.answerable(), text
        assert sorted(t.key for t in it.targets) == sorted(keys), text
        assert it.closest_points == (kind == "abs_distance")
        assert (it.places == (HERE,)) == (kind == "count_here")


def test_a_capacity_question_is_no_count_in_this_room():
    assert parse_question("How many people can sit on chairs in this room?", use_model=False).how != "rule:count_here"


def test_a_frame_word_inside_an_object_name_stays():
    it = parse_question("How long is the longest side of the side table, in centimeters?", use_model=False)
    assert [t.key for t in it.targets] == ["side table"]


def test_sequence_options_are_read():
    it = parse_question("What will be the first-time appearance order of the following categories in the video: "
                        "bed, sink, lamp?", ("sink, bed, lamp", "lamp, sink, bed"), use_model=False)
    assert it.sequences == (("sink", "bed", "lamp"), ("lamp", "sink", "bed"))
    text = Q.SPATIAL_TEMPLATES["route_plan"][0].format(**FMT)
    it = parse_question(text, ("Turn Left", "Turn Back", "Turn Right"), use_model=False)
    assert it.sequences == (("left",), ("back",), ("right",))


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_each_kind_reads_its_own_prototypes(kind):
    assert kind.primitives and kind.read is not None
    for text in kind.prototypes:
        it = parse_question(text, use_model=False)
        assert it.primitive == kind.primitives[0] and it.how in {f"rule:{r.name}" for r in kind.cues}, text
        assert it.answerable() and it.votes is not None and it.votes.kind == kind.name, text


def test_the_measurement_kinds_live_in_the_one_registry():
    from directme.query.kinds import cue_rules, kind_of_primitive
    from directme.query.parsed import Primitive as P

    assert {k.name for k in KINDS} == {"object_size", "room_size", "appearance_order", "route_plan", "abs_distance",
                                       "count_here"}
    order = [k for k, _ in cue_rules()]
    assert order[:len(KINDS) + 1] == ["route_plan", "appearance_order", "appearance_order_which"][:2] + [
        "appearance_order", "object_size", "room_size", "abs_distance", "count_here"]  # before every older rule
    assert kind_of_primitive(P.COUNT) == "count" and kind_of_primitive(P.DISTANCE) == "distance"
    assert kind_of_primitive(P("room_size")) == "room_size"
    assert {k.name for k in KINDS if k.refines} == {"abs_distance", "count_here"}


def test_existing_template_questions_keep_their_kinds():
    for kind, sentences in Q.TEMPLATES.items():
        for text in sentences:
            fmt = {"obj": "cup", "objs": "cups", "ref": "sofa", "a": "bed", "b": "lamp", "room": "kitchen",
                   "ago": "2 minutes", "ago_cap": "2 minutes"}
            assert not parse_question(text.format(**fmt), use_model=False).how.startswith(
                tuple(f"rule:{r.name}" for k in KINDS for r in k.cues)), text


def test_mean_relative_accuracy():
    assert mean_relative_accuracy(2.0, 2.0) == 1.0
    assert mean_relative_accuracy(2.6, 2.0) == pytest.approx(0.5)  # 30 % off: thresholds 0.50-0.70
    assert mean_relative_accuracy(5.0, 2.0) == 0.0 and mean_relative_accuracy(None, 2.0) == 0.0


def test_geometry_helpers():
    assert box_distance_m(np.zeros(3), np.ones(3), np.array([3.0, 0, 0]), np.ones(3)) == pytest.approx(2.0)
    assert box_distance_m(np.zeros(3), np.ones(3), np.array([0.5, 0, 0]), np.ones(3)) == 0.0
    assert turn_of(np.array([0.0, 0]), np.array([1.0, 0]), np.array([1.0, 1]))[0] == "turn left"
    assert turn_of(np.array([0.0, 0]), np.array([1.0, 0]), np.array([1.0, -1]))[0] == "turn right"
    assert turn_of(np.array([0.0, 0]), np.array([1.0, 0]), np.array([0.0, 0.1]))[0] == "turn back"
    a = math.radians(30)
    rect = np.array([[0, 0], [4, 0], [4, 2], [0, 2]], float) @ np.array([[math.cos(a), math.sin(a)],
                                                                       [-math.sin(a), math.cos(a)]])
    assert min_area_rectangle_m2(rect) == pytest.approx(8.0, rel=1e-3)


def test_simulator_asks_them_with_ground_truth():
    ep = generate_episode(seed=3, minutes=2, width=96, height=72, spatial_questions=True)
    spatial = [q for q in ep.questions if q.category == "Measurement"]
    assert {q.meta["kind"] for q in spatial} >= {"object_size", "abs_distance", "count_here", "appearance_order"}
    by_id = {o.object_id: o for o in ep.objects}
    for q in spatial:
        if q.qtype == "NUMBER":
            assert q.options == () and q.meta["answer_value"] > 0 and q.meta["unit"] == Q.SPATIAL_UNIT[q.meta["kind"]]
        else:
            assert len(set(q.options)) == len(q.options) >= 2 and q.answer in q.letters
        if q.meta["kind"] == "object_size":  # the instance's own box, not its class size
            assert q.meta["answer_value"] == pytest.approx(100 * max(by_id[q.meta["object_ids"][0]].size_m))
    ratios = [max(o.size_m) / max(CATALOG[o.label].size_m) for o in ep.objects]
    assert min(ratios) >= 0.75 - 1e-6 and max(ratios) <= 1.25 + 1e-6 and np.std(ratios) > 0.05


def test_without_the_option_an_episode_is_unchanged():
    a = generate_episode(seed=5, minutes=1, width=64, height=48)
    b = generate_episode(seed=5, minutes=1, width=64, height=48, spatial_questions=False, size_jitter=0.0)
    assert [o.size_m for o in a.objects] == [o.size_m for o in b.objects]
    assert [(q.text, q.options, q.answer) for q in a.questions] == [(q.text, q.options, q.answer) for q in b.questions]
    assert all(o.size_m == CATALOG[o.label].size_m or o.size_m == (CATALOG[o.label].size_m[1], CATALOG[
        o.label].size_m[0], CATALOG[o.label].size_m[2]) for o in a.objects)


def test_every_phrasing_set_asks_the_same_questions():
    sets = [generate_episode(seed=4, minutes=1.5, width=64, height=48, spatial_questions=True, phrasings=p)
            for p in Q.PHRASING_SETS]
    asked = [[(q.qid, q.t_s, q.options, q.answer) for q in ep.questions if q.category == "Measurement"] for ep in sets]
    assert asked[0] and asked[0] == asked[1] == asked[2]


def test_appearance_order_answers_from_first_sightings_and_reads_which_end():
    from dataclasses import replace

    from snapshot_builders import obj, snapshot, walk

    from directme.answerers.geometric import GeometricAnswerer
    from directme.query.context import build_context
    from directme.query.parsed import SequenceEnd
    from directme.query.vocab import Vocabulary

    objs = [obj("sofa", "Couch", (3, 0), t0=2, t1=20), obj("tv", "Monitor/TV", (3, 3), t0=8, t1=20),
            obj("lamp", "Lamp", (0, 3), t0=14, t1=20)]
    snap = snapshot(20.0, objs, walk([(0, 0, 0, 0, "kitchen"), (20, 1, 0, 0, "kitchen")]))
    q = "What will be the first-time appearance order of the following categories in the video: lamp, sofa, tv?"
    a = GeometricAnswerer().answer(build_context(q, ["lamp, sofa, tv", "sofa, tv, lamp"], snap, Vocabulary(), None))
    assert a.letter == "B" and a.confidence > 0.5
    ctx = build_context("Which did I see first, the lamp or the sofa?", [], snap, Vocabulary(), None)
    assert ctx.intent.sequence_end == SequenceEnd.FIRST
    first = GeometricAnswerer().answer(ctx)
    last = GeometricAnswerer().answer(replace(ctx, intent=replace(ctx.intent, sequence_end=SequenceEnd.LAST)))
    assert "seen first" in first.text and "lamp" not in first.text.split(".")[0]
    assert last.text.startswith("The lamp was seen last")


def test_which_is_closest_to_a_named_object_measures_closest_points_of_the_closest_instances():
    """VSI-Bench's relative distance: "measuring from the closest point of each object ... closest to the bed";
    with several instances of a class, the closest one counts. Centres would pick the chair here."""
    from dataclasses import replace

    from snapshot_builders import obj, snapshot, walk

    from directme.answerers.geometric import GeometricAnswerer
    from directme.query.context import build_context
    from directme.query.vocab import Vocabulary

    def box(node, extent):
        return replace(node, extent_m=np.array(extent, dtype=float))

    objs = [box(obj("bed", "Bed", (0, 0)), (1.6, 2.2, 0.5)), box(obj("chair", "Chair", (1.4, 0)), (0.4, 0.4, 0.9)),
            box(obj("lamp", "Lamp", (0, 1.5)), (0.2, 0.2, 0.5)), box(obj("lamp2", "Lamp", (6, 0)), (0.2, 0.2, 0.5))]
    snap = snapshot(10.0, objs, walk([(0, 3, 3, 0, "bedroom"), (10, 3, 3, 0, "bedroom")]))
    q = "Measuring from the closest point of each object, which of these objects (chair, lamp) is the closest to the bed?"
    ctx = build_context(q, ["chair", "lamp"], snap, Vocabulary(), None)
    assert ctx.intent.closest_points
    assert GeometricAnswerer().answer(ctx).letter == "B"
    centres = build_context("Which of these objects (chair, lamp) is the closest to the bed?", ["chair", "lamp"], snap,
                            Vocabulary(), None)
    assert not centres.intent.closest_points and GeometricAnswerer().answer(centres).letter == "A"


def test_first_view_back_dates_a_first_sighting_over_the_views_leading_up_to_it():
    """A detector reports an object late (missed frames, too little of it showing): its first appearance is the
    start of the run of views that had its box in the image; a view of its place before a gap does not count."""
    from dataclasses import replace

    from snapshot_builders import cam_pose, obj

    from directme.answerers.geometric_config import MeasureConfig
    from directme.answerers.measure import first_view_s
    from directme.memory.snapshot import EgoTrack

    headings = [0, 0, 180, 180, 180, 0, 0, 0, 0, 0, 0]  # facing the object, away from t=2 to 4, facing it again
    K = np.tile([160.0, 160.0, 160.0, 120.0, 320.0, 240.0], (len(headings), 1))
    ego = EgoTrack(np.arange(len(headings), dtype=float), np.stack([cam_pose(0, 0, h) for h in headings]), K=K)
    node = replace(obj("box", "Storage box", (3, 0), t0=8.0), extent_m=np.array([0.4, 0.4, 0.4]))
    cfg = MeasureConfig(first_view_gap_s=3.5, first_view_range_m=6.0)  # the default is off (0)
    assert first_view_s(ego, node, 8.0, cfg) == 5.0
    assert first_view_s(ego, node, 8.0, replace(cfg, first_view_gap_s=5.0)) == 0.0  # the gap bridged
    assert first_view_s(ego, node, 8.0, replace(cfg, first_view_range_m=2.0)) == 8.0  # too far to count
    assert first_view_s(ego, node, 8.0, replace(cfg, first_view_window_s=1.5)) == 7.0
    assert first_view_s(replace(ego, K=None), node, 8.0, cfg) == 8.0  # intrinsics unknown: the sighting itself
    assert first_view_s(ego, replace(node, position_w=np.array([0.0, 3.0, 0.8]),
                                     position_history=((8.0, np.array([0.0, 3.0, 0.8])),)), 8.0, cfg) == 8.0  # never in view


def test_a_category_first_appears_with_a_node_whose_votes_support_it():
    """A trash can the detector mostly called a barrel is a barrel node, yet it showed a trash can from its first
    sighting: with enough of its votes for the category it counts; a stray vote does not."""
    from dataclasses import replace

    from snapshot_builders import obj, snapshot, walk

    from directme.answerers.geometric_config import MeasureConfig
    from directme.answerers.measure import appearance_order
    from directme.query.context import build_context
    from directme.query.vocab import Vocabulary

    barrel = replace(obj("o1", "Barrel/bucket", (3, 0), t0=2, t1=30, n_obs=3),
                     label_votes={"Barrel/bucket": 1.0, "Trash bin Can": 0.5})
    objs = [barrel, obj("o2", "Trash bin Can", (0, 3), t0=40, t1=50), obj("o3", "Lamp", (3, 3), t0=20, t1=50)]
    snap = snapshot(60.0, objs, walk([(0, 0, 0, 0, "kitchen"), (60, 1, 0, 0, "kitchen")]))
    ctx = build_context("Sort these by when I first saw them: lamp, trash can.", ["lamp, trash can", "trash can, lamp"],
                        snap, Vocabulary(), None)
    assert ctx.intent.time_ref.kind.value == "now"  # the sightings it orders are no time to answer at
    assert appearance_order(ctx, MeasureConfig()).option_fit[1] == 1.0  # the trash can (2 s) before the lamp
    assert appearance_order(ctx, MeasureConfig(order_vote_share=0.5)).option_fit[0] == 1.0  # 1/3 is too little


def test_a_category_first_appears_at_its_first_sighting_not_at_an_object_merged_in_under_another_label():
    """A node's first-seen time is its earliest record's, merged ones included: a false detection (a lamp read at
    1 s) folded into the sofa later must not date the sofa; an earlier sighting of the sofa itself that was merged
    in (its label's first sighting) does, and so does the node's own first observation under a confused label."""
    from dataclasses import replace

    from snapshot_builders import obj

    from directme.answerers.measure import first_sighting_s

    sofa = replace(obj("o1", "Couch", (3, 0), t0=1.0, t1=30), obs_times_s=np.array([12.0, 13.0, 20.0]),
                   label_first_seen_s={"Lamp": 1.0, "Couch": 12.0})
    assert first_sighting_s(sofa, "couch") == 12.0
    assert first_sighting_s(replace(sofa, label_first_seen_s={"Lamp": 1.0, "Couch": 6.0}), "couch") == 6.0
    assert first_sighting_s(replace(sofa, label_first_seen_s={"Bed": 12.0, "Couch": 15.0}), "couch") == 12.0
    assert first_sighting_s(replace(sofa, label_first_seen_s={}, obs_times_s=np.zeros(0)), "couch") == 1.0

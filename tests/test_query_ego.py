"""Ego-frame rendering, retrieval and keyframe selection on hand-built MemorySnapshots."""
import numpy as np
import pytest
from snapshot_builders import obj, snapshot, walk

from directme.query.ego import object_place, place_sequence, relate, render_subgraph, settled_tags
from directme.query.embed import CachedEmbedder, StringEmbedder
from directme.query.intent import Target, parse_question
from directme.query.keyframes import select_keyframe_refs
from directme.query.retrieval import match_target
from directme.query.timeref import resolve_time

TRACK = walk([(0, 0, 0, 0, "kitchen"), (10, 5, 0, 90, "corridor"), (20, 5, 5, 180, "living room"),
              (30, 5, 5, 270, "living room")])


@pytest.mark.parametrize("xy, direction, clock", [
    ((3, 0), "front", 12), ((0, 3), "left", 9), ((0, -3), "right", 3), ((-3, 0), "behind", 6),
    ((2, 2), "front-left", 10), ((2, -2), "front-right", 2), ((-2, 2), "behind-left", 8), ((-2, -2), "behind-right", 4),
])
def test_direction_and_clock_in_ego_frame(xy, direction, clock):
    snap = snapshot(5, [obj("o", "Cup", xy)], TRACK)
    rel = relate(snap, snap.objects["o"])
    assert (rel.direction, rel.clock) == (direction, clock) or (rel.direction == direction and abs(rel.clock - clock) <= 1)
    assert rel.distance_m == pytest.approx(np.hypot(*xy))


def test_same_object_changes_side_when_the_wearer_turns():
    o = obj("o", "Couch", (5, 8))  # the wearer stands at (5, 5) from t=20, facing -x (t<30) then -y
    before = relate(snapshot(25, [o], TRACK), o)
    after = relate(snapshot(35, [o], TRACK), o)
    assert (before.direction, after.direction) == ("right", "behind")


def test_reachability_uses_configurable_radius():
    snap = snapshot(5, [obj("o", "Cup", (0.8, 0.3))], TRACK)
    assert relate(snap, snap.objects["o"], reach_m=1.0).reachable
    assert not relate(snap, snap.objects["o"], reach_m=0.5).reachable


def test_render_lists_relation_place_last_seen_and_moves():
    cup = obj("c", "Cup", (6, 6), t0=2, t1=24, history=[(2, (1, 1)), (24, (6, 6))], keyframes=(2, 24))
    text = render_subgraph(snapshot(30, [cup], TRACK), ["c"])
    assert "Cup [c]" in text and "o'clock" in text and "m," in text
    assert "living room" in text and "last seen 24 s" in text
    assert "moved: kitchen (2 s) -> living room (24 s)" in text
    assert "Your path: kitchen (0 s) -> corridor (10 s) -> living room (20 s)" in text


def test_empty_snapshot_renders_clearly():
    text = render_subgraph(snapshot(0, [], []), [])
    assert "memory is empty" in text


def test_place_sequence_and_event_times():
    snap = snapshot(35, [], TRACK)
    assert [tag for _, tag in place_sequence(snap)] == ["kitchen", "corridor", "living room"]
    assert resolve_time(parse_question("Where was I when I entered the corridor?").time_ref, snap).t_event == 10
    assert resolve_time(parse_question("Where was the cup 30 seconds ago?").time_ref, snap).t_eval == 5
    assert not resolve_time(parse_question("When I entered the garage, where was I?").time_ref, snap).ok


def test_matching_by_synonym_plural_and_colour():
    snap = snapshot(5, [obj("a", "Couch", (1, 1)), obj("b", "Cup", (2, 2), color="red"),
                        obj("c", "Cup", (3, 3), color="blue"), obj("d", "Trash bin Can", (1, 0))], TRACK)
    assert [m.node_id for m in match_target(parse_question("Where are the sofas?").targets[0], snap)] == ["a"]
    red = parse_question("Where is the red cup?").targets[0]
    assert [m.node_id for m in match_target(red, snap)] == ["b"]
    assert [m.node_id for m in match_target(parse_question("Where is the garbage can?").targets[0], snap)] == ["d"]
    assert match_target(Target("dining table", "dining table"), snapshot(5, [obj("e", "Coffee Table", (1, 1))], TRACK)) == []
    assert match_target(Target("giraffe", "giraffe"), snap) == []


def test_meaning_match_with_string_fallback_embedder():
    emb = CachedEmbedder("string")
    snap = snapshot(5, [obj("a", "Potted Plant", (1, 1))], TRACK)
    ms = match_target(Target("pottedplant", "pottedplant"), snap, emb)
    assert [m.node_id for m in ms] == ["a"] and ms[0].how == "embedding"
    vecs = StringEmbedder().encode(["cup", "cup", "sofa"])
    assert vecs[0] @ vecs[1] == pytest.approx(1.0) and vecs[0] @ vecs[2] < 0.5


def test_keyframes_are_causal_and_spread():
    cup = obj("c", "Cup", (1, 1), t0=0, t1=30, keyframes=(0, 1, 10, 20, 30))
    refs = select_keyframe_refs(snapshot(25, [cup], TRACK), ["c"], 25, k=3, min_gap_s=2)
    times = [r.t_s for _, r in refs]
    assert all(t <= 25 for t in times) and len(times) == 3 and times == sorted(times)
    assert all(b - a >= 2 for a, b in zip(times, times[1:]))


def _tagged(tags):
    return [(float(i), float(i), 0.0, 0.0, tag) for i, tag in enumerate(tags)]


@pytest.mark.parametrize("tags, settled", [
    (["a", "a", "b", "a", "a"], ["a"] * 5),  # one frame of another room between two runs: flicker
    (["a", "b", "b", "c", "a", "a", "d"], ["a", "b", "b", "b", "a", "a", "d"]),  # the current run stays, however short
    (["b", "a", "a"], ["b", "a", "a"]),  # so does the first
    ([None, "a", None, "b", "a", "a"], [None, "a", None, "a", "a", "a"]),  # untagged frames neither break nor join runs
])
def test_settled_tags_take_out_flicker_like_the_place_sequence(tags, settled):
    snap = snapshot(len(tags) - 1, [], _tagged(tags))
    assert list(settled_tags(snap)) == settled
    assert [tag for _, tag in place_sequence(snap, min_frames=2)] == [k for i, k in enumerate(settled) if k and k != next(
        (x for x in reversed(settled[:i]) if x), None)]


def test_an_object_put_down_in_a_frame_with_a_wrong_scene_tag_is_in_the_room_around_it():
    # walked from the kitchen into the living room; the tag of the frame where the box was seen closest is wrong
    tags = ["kitchen"] * 5 + ["living room"] * 3 + ["kitchen"] + ["living room"] * 4
    track = [(float(i), float(i), 0.0, 0.0, tag) for i, tag in enumerate(tags)]
    box = obj("b", "Storage box", (8.3, 0.0), t0=7)
    box = type(box)(**{**box.__dict__, "obs_times_s": np.array([7.0, 8.0, 10.0])})
    assert object_place(snapshot(12, [box], track), box) == "living room"


def test_a_placement_restarted_at_the_same_place_keeps_the_room_seen_from_inside():
    # seen close from inside the bathroom, then (a drift correction restarted its placement) only from the corridor
    track = [(float(i), 0.0, 0.0, 0.0, "bathroom") for i in range(5)] + \
            [(float(i), -4.0, 0.0, 0.0, "corridor") for i in range(5, 10)]
    box = obj("b", "Storage box", (1.0, 0.0), history=[(0, (1.0, 0.0)), (6, (1.1, 0.0))])
    box = type(box)(**{**box.__dict__, "obs_times_s": np.array([1.0, 2.0, 6.0, 7.0, 8.0])})
    snap = snapshot(9, [box], track)
    assert object_place(snap, box) == "bathroom"
    moved = type(box)(**{**box.__dict__, "position_history": ((0.0, np.array([1.0, 0.0, 0.8])),
                                                               (6.0, np.array([4.0, 0.0, 0.8]))),
                         "position_w": np.array([4.0, 0.0, 0.8])})
    assert object_place(snapshot(9, [moved], track), moved) == "corridor"  # moved away: its own sightings only


def test_an_object_put_back_near_its_old_place_but_across_a_wall_is_not_pooled_with_it():
    # first put down in the laundry room and seen close from there; then in the living room, 0.3 m away across the wall
    track = [(float(i), 3.0, 1.0, 0.0, "laundry room") for i in range(5)] + \
            [(float(i), 8.0, 0.0, 0.0, "corridor") for i in range(5, 10)] + \
            [(float(i), 3.5, -1.0, 0.0, "living room") for i in range(10, 14)]
    hist = [(0, (3.2, 0.2)), (5, (8.5, 0.0)), (10, (3.2, -0.1))]
    box = obj("u", "Umbrella", (3.2, -0.1), history=hist)
    box = type(box)(**{**box.__dict__, "obs_times_s": np.array([1.0, 2.0, 3.0, 6.0, 11.0, 12.0])})
    snap = snapshot(13, [box], track)
    assert object_place(snap, box, 0) == "laundry room"
    assert object_place(snap, box) == "living room"


def test_an_object_seen_from_two_rooms_is_in_the_one_walked_nearest_to_it():
    # a box just inside the office door: seen three times from the corridor and once from inside the office, all
    # from about 2.3 m; the wearer walked past it in the office at 0.6 m (while looking away), never nearer than
    # 1.1 m in the corridor
    track = [(float(i), 10.0 + 0.1 * i, 5.5, 0.0, "corridor") for i in range(4)] + \
            [(4.0, 11.5, 5.5, 90.0, "corridor"), (5.0, 12.0, 7.2, 90.0, "office"), (6.0, 12.3, 9.2, 270.0, "office")]
    box = obj("b", "Storage box", (12.3, 6.6))
    box = type(box)(**{**box.__dict__, "obs_times_s": np.array([0.0, 1.0, 2.0, 6.0])})
    snap = snapshot(6, [box], track)
    assert object_place(snap, box) == "office"
    seen_from_one = type(box)(**{**box.__dict__, "obs_times_s": np.array([0.0, 1.0, 2.0])})  # the corridor only
    assert object_place(snap, seen_from_one) == "corridor"


def test_a_walk_past_an_object_behind_a_wall_does_not_outweigh_seeing_it_from_its_room():
    # a chair 0.3 m inside the dining room's wall: the wearer walked along the corridor 1.2 m from it (the wall
    # between) and saw it once from afar through the door; inside the dining room he saw it from 2-2.5 m
    track = [(0.0, 2.7, 5.2, 0.0, "corridor"), (1.0, 8.2, 5.1, 0.0, "corridor"), (2.0, 6.0, 8.0, 0.0, "dining room"),
             (3.0, 6.5, 8.3, 0.0, "dining room")]
    chair = obj("c", "Chair", (8.2, 6.35))
    chair = type(chair)(**{**chair.__dict__, "obs_times_s": np.array([0.0, 2.0, 3.0])})
    assert object_place(snapshot(3, [chair], track), chair) == "dining room"


def test_the_room_rule_is_a_config_section_that_reaches_the_answerers():
    from directme.config import AgentConfig
    from directme.errors import InvalidInputError
    from directme.query.ego import RoomConfig

    cfg = AgentConfig.from_dict({"query": {"rooms": {"flicker_frames": 3, "walked_near_weight": 0.0}}})
    assert cfg.query.rooms == RoomConfig(flicker_frames=3, walked_near_weight=0.0)
    assert AgentConfig.from_dict(cfg.to_dict()).query.rooms == cfg.query.rooms
    for bad in ({"flicker_frames": 0}, {"same_place_m": -1.0}, {"walked_near_weight": float("nan")}):
        with pytest.raises(InvalidInputError, match="query.rooms"):
            AgentConfig.from_dict({"query": {"rooms": bad}})
    tags = ["kitchen", "kitchen", "corridor", "kitchen", "kitchen"]
    snap = snapshot(len(tags) - 1, [], _tagged(tags))
    assert list(settled_tags(snap)) == ["kitchen"] * 5  # one corridor frame is flicker
    assert list(settled_tags(snap, RoomConfig(flicker_frames=1))) == tags  # nothing is flicker
    from directme.query.timeref import place_runs

    assert [tag for _, _, tag in place_runs(snap)] == ["kitchen"]  # the wearer's path: the same rule
    assert [tag for _, _, tag in place_runs(snap, RoomConfig(flicker_frames=1))] == ["kitchen", "corridor", "kitchen"]

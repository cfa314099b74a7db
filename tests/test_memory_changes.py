"""Change events (memory/events.py) and answers right after a put-down, on hand-built box scenes."""
import math

import numpy as np

from directme import Agent
from directme.config import AgentConfig
from directme.geometry import Intrinsics
from directme.memory import MemoryConfig, SpatialMemory
from directme.memory.snapshot import EventKind
from directme.memory.testing import Box, look_at, perceive, snapshot_facts

K = Intrinsics.from_fov(160, 120, 70.0)
MUG = Box(1, "mug", (0.0, 0.0, 0.05), (0.12, 0.12, 0.12))
BOOK = Box(2, "book", (0.6, 0.3, 0.03), (0.2, 0.3, 0.06))
MOVED = Box(1, "mug", (0.5, -0.6, 0.05), (0.12, 0.12, 0.12))
EYE = look_at((2.5, 0.0, 1.5), (0.3, 0.0, 0.0))
BASKET = Box(4, "basket", (0.0, 0.0, 0.15), (0.3, 0.3, 0.3))


def _stream(mem):
    for k in range(5):
        mem.update(perceive([MUG, BOOK], EYE, K, float(k), k))
    for k in range(5, 12):  # the mug put down elsewhere at t=5, the book taken away
        mem.update(perceive([MOVED], EYE, K, float(k), k))


def test_moves_and_removals_are_events_with_intervals_known_causally():
    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
    _stream(mem)
    snap = mem.as_of(11.0)
    mug = next(o for o in snap.objects.values() if o.label == "mug")
    book = next(o for o in snap.objects.values() if o.label == "book")
    (moved,) = [e for e in snap.changes if e.kind == EventKind.MOVED]
    assert moved.node_id == mug.node_id and (moved.after_s, moved.before_s) == (4.0, 5.0)
    assert moved.known_s == 5.0  # one sighting at the new place by the same track confirms it (association.move_confirm)
    assert np.linalg.norm(np.asarray(moved.position_from_w) - MUG.centre_w) < 0.05
    assert np.linalg.norm(np.asarray(moved.position_to_w) - MOVED.centre_w) < 0.05
    (removed,) = [e for e in snap.changes if e.kind == EventKind.REMOVED]
    assert removed.node_id == book.node_id and removed.after_s == 4.0 and removed.before_s == 5.0
    assert removed.position_to_w is None and removed.confidence > 0.9
    appeared = {e.node_id: e for e in snap.changes if e.kind == EventKind.APPEARED}
    assert appeared[mug.node_id].before_s == 0.0 and math.isinf(appeared[mug.node_id].after_s)
    early = mem.as_of(4.5).changes  # nothing had changed yet
    assert {e.kind for e in early} == {EventKind.APPEARED}
    assert [e for e in mem.as_of(11.0).changes] == list(snap.changes)


def test_reach_and_direction_two_seconds_after_a_put_down_use_the_new_place():
    """The default config with 1 frame/s: asked at put-down + 2 s."""
    agent = Agent(AgentConfig.from_dict({"memory": {"up_world": [0.0, 0.0, 1.0]}}))
    near_new = look_at((0.9, -0.9, 1.5), (0.5, -0.6, 0.0))  # beside the new place, 2.3 m from the old one
    far_eye = look_at((2.5, 0.0, 1.5), (0.3, 0.0, 0.0))
    for k in range(5):
        agent.observe_perception(perceive([MUG, BOOK], far_eye, K, float(k), k))
    for k in range(5, 8):  # put down at t=5 next to where the wearer now stands
        agent.observe_perception(perceive([MOVED, BOOK], near_new, K, float(k), k))
    ans = agent.ask("Can I reach the mug?", t=7.0, options=["Yes.", "No."])
    assert ans.letter == "A", ans.text
    node = next(o for o in agent.memory.as_of(7.0).objects.values() if o.label == "mug")
    assert np.linalg.norm(node.position_w - MOVED.centre_w) < 0.05
    old = Agent(AgentConfig.from_dict({"memory": {"up_world": [0.0, 0.0, 1.0]}}))  # asked before the put-down
    for k in range(5):
        old.observe_perception(perceive([MUG, BOOK], far_eye, K, float(k), k))
    old.observe_perception(perceive([BOOK], near_new, K, 5.0, 5))
    assert old.ask("Can I reach the mug?", t=5.0, options=["Yes.", "No."]).letter == "B"


def test_a_move_seen_after_the_old_place_was_found_empty_is_present_at_once():
    """Taken away (its place seen empty: gone), then seen put down elsewhere by the same track: the view that
    confirms the move is a sighting at the new place, so the object is present there from that frame."""
    bag, put = Box(4, "backpack", (0.0, 0.0, 0.2), (0.35, 0.25, 0.4)), Box(4, "backpack", (0.5, -0.8, 0.2), (0.35, 0.25, 0.4))
    eye = look_at((2.2, -0.3, 1.4), (0.2, -0.4, 0.0))
    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
    for k in range(5):
        mem.update(perceive([bag, BOOK], eye, K, float(k), k))
    for k in range(5, 8):  # carried: its place seen empty
        mem.update(perceive([BOOK], eye, K, float(k), k))
    gone = next(o for o in mem.as_of(7.0).objects.values() if o.label == "backpack")
    assert not gone.present
    mem.update(perceive([put, BOOK], eye, K, 8.0, 8))  # put down 1 m away, seen once
    now = next(o for o in mem.as_of(8.0).objects.values() if o.label == "backpack")
    assert now.node_id == gone.node_id and now.present
    assert np.linalg.norm(now.position_w - put.centre_w) < 0.1 and len(now.position_history) == 2


def _agent_after_changes():
    agent = Agent(AgentConfig.from_dict({"memory": {"up_world": [0.0, 0.0, 1.0]}}))
    apple = Box(3, "apple", (0.4, 0.5, 0.04), (0.08, 0.08, 0.08))
    for k in range(5):
        agent.observe_perception(perceive([MUG, BOOK], EYE, K, float(k), k))
    for k in range(5, 9):  # mug moved, book taken away
        agent.observe_perception(perceive([MOVED], EYE, K, float(k), k))
    for k in range(9, 12):  # an apple put where nothing was (that place in view all along)
        agent.observe_perception(perceive([MOVED, apple], EYE, K, float(k), k))
    return agent


def test_questions_on_change_are_answered_from_the_events_at_the_asked_time():
    agent = _agent_after_changes()
    ask = agent.ask
    assert ask("What did I move?", t=11.0, options=["The book.", "The mug.", "The apple."]).letter == "B"
    assert ask("Which of these is missing now?", t=11.0, options=["The mug.", "The book."]).letter == "B"
    assert ask("What is new?", t=11.0, options=["The apple.", "The book.", "The mug."]).letter == "A"
    still = ask("Is the book still there?", t=11.0, options=["Yes.", "No."])
    assert still.letter == "B" and "no longer there" in still.text
    assert ask("Is the book still there?", t=4.0, options=["Yes.", "No."]).letter == "A"  # as known then
    assert ask("What did I move?", t=4.0, options=["The book.", "The mug."]).flags  # nothing moved yet: no evidence


def test_an_object_moving_with_the_camera_is_carried_then_put_down_elsewhere():
    """Seen at rest, then held 0.6 m in front of the camera while the wearer walks (it moves with the camera),
    then seen at rest on the floor elsewhere: carried in between, a new placement after, events for both;
    as_of any earlier time says what was known then, and a save keeps the carry log."""
    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
    cup = Box(5, "cup", (0.0, 0.0, 0.05), (0.1, 0.1, 0.1))
    for k in range(3):  # on the floor, seen from 2 m
        mem.update(perceive([cup, BOOK], look_at((2.0, 0.0, 1.2), (0.0, 0.0, 0.0)), K, float(k), k))
    for k in range(3, 7):  # in the hand: the wearer walks along y, the cup stays 0.6 m ahead, 0.3 m down
        eye = look_at((0.5, -0.8 * (k - 3), 1.2), (0.5, -0.8 * (k - 3) - 1.0, 0.6))
        held = Box(5, "cup", tuple(eye.t + eye.R @ np.array([0.0, 0.3, 0.55])), (0.1, 0.1, 0.1))
        mem.update(perceive([held], eye, K, float(k), k))
    put = Box(5, "cup", (0.5, -4.5, 0.05), (0.1, 0.1, 0.1))
    for k in range(7, 9):  # put down, seen from 1.5 m
        mem.update(perceive([put], look_at((0.5, -3.0, 1.2), (0.5, -4.5, 0.0)), K, float(k), k))
    def cup_at(t):
        return next(o for o in mem.as_of(t).objects.values() if o.label == "cup")
    assert not cup_at(2.0).carried and cup_at(5.0).carried and cup_at(6.0).carried
    assert cup_at(5.0).present  # with the wearer: not gone, although its old place is empty
    now = cup_at(8.0)
    assert not now.carried and len(now.position_history) == 2
    assert np.linalg.norm(now.position_w - put.centre_w) < 0.1
    kinds = [(e.kind, e.before_s) for e in mem.as_of(8.0).changes if e.node_id == now.node_id]
    assert (EventKind.PICKED_UP, 4.0) in kinds and (EventKind.PUT_DOWN, 7.0) in kinds
    picked = next(e for e in mem.as_of(8.0).changes if e.kind == EventKind.PICKED_UP)
    assert picked.after_s == 3.0 and np.linalg.norm(np.asarray(picked.position_from_w) - cup.centre_w) < 0.6
    assert EventKind.PUT_DOWN not in {e.kind for e in mem.as_of(6.0).changes}  # causal
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        mem.save(f"{d}/m")
        back = SpatialMemory.load(f"{d}/m")
    again = next(o for o in back.as_of(5.0).objects.values() if o.label == "cup")
    assert again.carried and [e.kind for e in back.as_of(8.0).changes] == [e.kind for e in mem.as_of(8.0).changes]


def test_the_rendered_subgraph_says_what_the_wearer_carries():
    from directme.query.ego import relate

    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
    for k in range(3):
        eye = look_at((0.5, -0.8 * k, 1.2), (0.5, -0.8 * k - 1.0, 0.6))
        held = Box(5, "cup", tuple(eye.t + eye.R @ np.array([0.0, 0.3, 0.55])), (0.1, 0.1, 0.1))
        mem.update(perceive([held], eye, K, float(k), k))
    snap = mem.as_of(2.0)
    cup = next(o for o in snap.objects.values() if o.label == "cup")
    assert cup.carried and "(carried by you)" in relate(snap, cup).describe()


def test_a_place_read_empty_a_moment_after_a_sighting_out_of_reach_is_not_a_removal_yet():
    """Seen at t=4 from 2.5 m, its place read empty at t=5 and 6 (within gone.just_seen_s of the sighting,
    out of the wearer's reach): the evidence counts gone.just_seen_absence_scale times and the book stays
    present; from t=7 on the view counts in full and it is gone. With the scale at 1 it is gone at t=5."""
    def book_present(mem, t):
        return next(o for o in mem.as_of(t).objects.values() if o.label == "book").present

    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
    _stream(mem)
    assert book_present(mem, 5.0) and book_present(mem, 6.0) and not book_present(mem, 7.0)
    (removed,) = [e for e in mem.as_of(11.0).changes if e.kind == EventKind.REMOVED]
    assert (removed.after_s, removed.before_s) == (4.0, 5.0)  # the interval still starts at the first empty view
    plain = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)).replace(gone__just_seen_absence_scale=1.0))
    _stream(plain)
    assert not book_present(plain, 5.0)


def test_a_place_read_empty_after_the_wearer_stood_beside_it_is_a_removal_at_once():
    """Seen at t=4 from 2.5 m; at t=5 the wearer stands 0.5 m from the book along the ground (1.5 m above it:
    more than gone.hand_reach_m from the camera), looking away; at t=6 its place is read empty from the old
    spot. The wearer could have taken it: the view counts in full and the book is gone at t=6, within
    gone.just_seen_s of the sighting. Without the wearer's path (the camera's distance only) it stays."""
    from directme.memory.ego_log import EgoLog

    def book_present(mem, t):
        return next(o for o in mem.as_of(t).objects.values() if o.label == "book").present

    def stream(mem):
        for k in range(5):
            mem.update(perceive([MUG, BOOK], EYE, K, float(k), k))
        beside = look_at((1.0, 0.3, 1.5), (3.0, 0.3, 1.5))  # 0.4 m from the book, facing away from it
        mem.update(perceive([MUG], beside, K, 5.0, 5))
        mem.update(perceive([MUG], EYE, K, 6.0, 6))

    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
    stream(mem)
    assert book_present(mem, 5.0) and not book_present(mem, 6.0)
    far = EgoLog.nearest_since
    try:  # the rule as it was: the camera's distance to the place in the empty view itself
        EgoLog.nearest_since = lambda self, pos, point, up, until=None: float(
            np.linalg.norm(np.asarray(self.T[len(self) - 1])[:3, 3] - point))
        old = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
        stream(old)
    finally:
        EgoLog.nearest_since = far
    assert book_present(old, 6.0)
    log = mem.ego
    assert abs(log.nearest_since(0, BOOK.centre_w, mem.up_world) - 0.4) < 0.05  # along the ground, not the 1.5 m height
    assert log.nearest_since(len(log) - 1, BOOK.centre_w, mem.up_world) > 1.8


def _drifted(boxes, n, t0, shift_m, track_ids):
    from directme.geometry import Pose
    from directme.memory.pose import with_pose

    shift = Pose.from_Rt(np.eye(3), np.array([0.0, shift_m, 0.0]))  # sideways to the view
    return [with_pose(fp, Pose(shift.matrix @ fp.frame.T_world_cam.matrix))
            for fp in (perceive(boxes, EYE, K, t0 + k, int(t0) + k, track_ids=track_ids) for k in range(n))]


def test_a_duplicate_left_by_drift_is_folded_into_the_node_seen_in_its_stead(tmp_path):
    """The input pose jumps 0.4 m sideways and the tracker gives the basket a new id: a second basket node
    starts beside the first. In each later frame the first one's place is in view while the second stands in for
    it (the same label, within the drift allowance, never both in one frame): after
    association.stand_in_merge such frames the two are one node. Off (0), two nodes stay."""
    frames = [perceive([BASKET], EYE, K, float(k), k) for k in range(4)] + _drifted([BASKET], 5, 4.0, 0.4, {4: 7})
    for merge_after, n_baskets in ((3, 1), (0, 2)):
        mem = SpatialMemory(MemoryConfig().replace(up_world=(0.0, 0.0, 1.0), relocalisation__enabled=False,
                                                   association__stand_in_merge=merge_after))
        mem.update_many(frames)
        baskets = [o for o in mem.as_of(8.0).objects.values() if o.label == "basket"]
        assert len(baskets) == n_baskets, (merge_after, [(o.node_id, o.position_w) for o in baskets])
        assert len([o for o in mem.as_of(3.0).objects.values() if o.label == "basket"]) == 1  # the past is unchanged
    counts = {r.index: dict(r.stood_in_for) for r in mem.objects.records}
    assert any(counts.values())  # counted while off, too
    loaded = SpatialMemory.load(mem.save(tmp_path / "m"))
    assert {r.index: dict(r.stood_in_for) for r in loaded.objects.records} == counts


def test_two_objects_of_a_label_seen_together_once_are_never_folded_into_one():
    """Two baskets 0.5 m apart, both seen in the first frames; later the detector reports only one of them
    while both are in view: the two were seen together, so the one reported does not stand in for the other
    (it is another object, not the other seen displaced), and they stay two."""
    twin = Box(5, "basket", (0.0, 0.5, 0.15), (0.3, 0.3, 0.3))
    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
    for k in range(3):
        mem.update(perceive([BASKET, twin], EYE, K, float(k), k))
    for k in range(3, 10):  # the detector misses the twin (its box rendered, its instance dropped)
        fp = perceive([BASKET, twin], EYE, K, float(k), k)
        mem.update(type(fp)(fp.frame, tuple(i for i in fp.instances if i.track_id == 4), fp.scene_tag))
    baskets = [o for o in mem.as_of(9.0).objects.values() if o.label == "basket"]
    assert len(baskets) == 2
    assert not any(r.stood_in_for for r in mem.objects.records)


def test_an_object_removed_beside_one_of_its_label_it_was_seen_with_is_read_gone():
    """Two baskets 0.5 m apart seen together; then one is taken away while the other stays in view. The one
    left is within the removed one's drift allowance, but it was seen beside it: it is not the removed basket
    seen displaced, so the empty place counts as evidence of absence (before, it voided every such view and
    the removed basket stayed present while the other was in view)."""
    twin = Box(5, "basket", (0.0, 0.5, 0.15), (0.3, 0.3, 0.3))
    mem = SpatialMemory(MemoryConfig(up_world=(0.0, 0.0, 1.0)))
    for k in range(3):
        mem.update(perceive([BASKET, twin], EYE, K, float(k), k))
    for k in range(3, 8):  # the twin taken away: not rendered, not reported
        mem.update(perceive([BASKET], EYE, K, float(k), k))
    snap = mem.as_of(7.0)
    present = {o.node_id: o.present for o in snap.objects.values() if o.label == "basket"}
    kept = mem.objects.tracked(BASKET.obj_id).node_id
    gone = mem.objects.tracked(twin.obj_id).node_id
    assert present == {kept: True, gone: False}, present
    assert snap.objects[gone].gone_since_s == 3.0


def _carried_out_of_view(link_window_s: float, other_backpack: bool = False, until: float = math.inf,
                         seen_taken: bool = False, link_taken: bool = True):
    """A backpack seen at rest, the wearer walks up to it (it is picked up: not seen again, its place never seen
    again), walks 6 m away and puts a backpack down within reach, seen from 0.8 m; with ``other_backpack`` a
    second backpack was also reached just before (then which one was carried is unknown). With ``seen_taken``
    its place is seen empty at t=5, from where it was first seen (a wall behind it), before the walk away."""
    cfg = MemoryConfig(up_world=(0.0, 0.0, 1.0))
    cfg = cfg.replace(association__link_window_s=link_window_s, association__link_taken=link_taken)
    mem = SpatialMemory(cfg)
    bag = Box(7, "backpack", (0.0, 0.0, 0.2), (0.3, 0.2, 0.4))
    twin = Box(8, "backpack", (0.0, 1.5, 0.2), (0.3, 0.2, 0.4))
    scene = [bag, twin] if other_backpack else [bag]
    frames = []
    for k in range(3):  # seen from 2.5 m, then the wearer stands at it, looking away (up the wall)
        frames.append(perceive(scene, look_at((2.5, 0.5, 1.5), (0.0, 0.5, 0.2)), K, float(k), k))
    for k, eye in enumerate([(0.6, 0.0, 1.5), (0.6, 1.5, 1.5), (2.0, -3.0, 1.5), (3.0, -6.0, 1.5)], start=3):
        wall = Box(20 + k, "whiteboard", (eye[0] + 3.0, eye[1], 2.5), (0.1, 4.0, 3.0))  # something to see: depth
        frames.append(perceive([wall], look_at(eye, (eye[0] + 1.0, eye[1], 2.5)), K, float(k), k))
    if seen_taken:
        behind = Box(30, "whiteboard", (-1.0, 0.5, 1.0), (0.1, 4.0, 2.0))
        frames[5] = perceive([behind], look_at((2.5, 0.5, 1.5), (0.0, 0.5, 0.2)), K, 5.0, 5)
    put = Box(9, "backpack", (3.8, -6.6, 0.2), (0.3, 0.2, 0.4))  # a new track id: the tracker lost it meanwhile
    for k in range(7, 10):
        frames.append(perceive([put], look_at((3.2, -6.0, 1.5), (3.8, -6.6, 0.2)), K, float(k), k))
    mem.update_many(fp for fp in frames if fp.t_s <= until)
    return mem, put


def test_an_object_the_wearer_reached_then_put_down_out_of_view_is_one_object_moved():
    mem, put = _carried_out_of_view(60.0)
    bags = [o for o in mem.as_of(9.0).objects.values() if o.label == "backpack"]
    assert len(bags) == 1 and bags[0].present and len(bags[0].position_history) == 2
    assert np.linalg.norm(bags[0].position_w - put.centre_w) < 0.1
    kinds = [e.kind for e in mem.as_of(9.0).changes if e.node_id == bags[0].node_id]
    assert EventKind.MOVED in kinds and EventKind.REMOVED not in kinds
    assert len([o for o in mem.as_of(7.0).objects.values() if o.label == "backpack"]) == 2  # causal: one sighting
    off, _ = _carried_out_of_view(0.0)
    assert len([o for o in off.as_of(9.0).objects.values() if o.label == "backpack" and o.present]) == 2
    for t in (7.0, 7.5, 8.0):  # causal: as of any time, what a memory of the frames up to then says
        assert snapshot_facts(mem.as_of(t)) == snapshot_facts(_carried_out_of_view(60.0, until=t)[0].as_of(t)), t
    two, _ = _carried_out_of_view(60.0, other_backpack=True)  # two candidates: nothing is linked
    assert len([o for o in two.as_of(9.0).objects.values() if o.label == "backpack" and o.present]) == 3


def test_an_object_seen_gone_after_the_wearer_reached_it_was_taken_and_its_put_down_is_a_move():
    """Its place seen empty right after the wearer stood at it: gone from there, but taken along, not removed
    by someone else; put down 7 m away and seen there twice, it is the same object moved
    (``association.link_taken``). Off: a second node."""
    mem, put = _carried_out_of_view(60.0, seen_taken=True)
    (old,) = [o for o in mem.as_of(5.0).objects.values() if o.label == "backpack"]
    assert not old.present
    bags = [o for o in mem.as_of(9.0).objects.values() if o.label == "backpack"]
    assert len(bags) == 1 and bags[0].present and len(bags[0].position_history) == 2
    assert np.linalg.norm(bags[0].position_w - put.centre_w) < 0.1
    off, _ = _carried_out_of_view(60.0, seen_taken=True, link_taken=False)
    bags = sorted((o for o in off.as_of(9.0).objects.values() if o.label == "backpack"), key=lambda o: o.first_seen_s)
    assert [o.present for o in bags] == [False, True]
    for t in (7.0, 8.0):  # causal: as of any time, what a memory of the frames up to then says
        assert snapshot_facts(mem.as_of(t)) == snapshot_facts(_carried_out_of_view(60.0, until=t, seen_taken=True)[0].as_of(t))

"""Change events (memory/events.py) and answers right after a put-down, on hand-built box scenes."""
import math

import numpy as np

from directme import Agent
from directme.config import AgentConfig
from directme.geometry import Intrinsics
from directme.memory import MemoryConfig, SpatialMemory
from directme.memory.snapshot import EventKind
from directme.memory.testing import Box, look_at, perceive

K = Intrinsics.from_fov(160, 120, 70.0)
MUG = Box(1, "mug", (0.0, 0.0, 0.05), (0.12, 0.12, 0.12))
BOOK = Box(2, "book", (0.6, 0.3, 0.03), (0.2, 0.3, 0.06))
MOVED = Box(1, "mug", (0.5, -0.6, 0.05), (0.12, 0.12, 0.12))
EYE = look_at((2.5, 0.0, 1.5), (0.3, 0.0, 0.0))


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

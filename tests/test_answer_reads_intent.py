"""The geometric answerer decides from the Intent's fields, never from the question's text: the same words
with a different parse get the parse's answer; and an Agent's answer carries the Intent it was given for."""
from __future__ import annotations

from dataclasses import replace

from snapshot_builders import snapshot
from test_agent_geometric import OBJECTS, TRACK

from directme.answerers.geometric import GeometricAnswerer
from directme.query.context import build_context
from directme.query.parsed import ChangeAsked, Primitive, SequenceEnd
from directme.query.vocab import Vocabulary


def _answer(question, t=40.0, **asked):
    """The answer to ``question``, its parse given ``asked``'s fields instead of the parser's."""
    ctx = build_context(question, [], snapshot(t, OBJECTS, TRACK), Vocabulary(), None)
    if asked:
        ctx = replace(ctx, intent=replace(ctx.intent, **asked))
    return GeometricAnswerer().answer(ctx)


def test_routes_follow_the_parse():
    assert _answer("What path did I take?").text.startswith("Your path: kitchen -> corridor -> living room")
    assert _answer("What path did I take?", path_asked=False).text.startswith("The living room (your path:")
    assert _answer("What path did I take?", back_at_start=True).text.startswith("You are not back at where you were")


def test_floors_follow_the_parse():
    assert "living room" in _answer("Which room is the sofa in?").text
    floor = _answer("Which room is the sofa in?", floor_asked=True)
    assert "rooms, not floors" in floor.text and floor.letter is None


def test_changes_and_the_order_seen_follow_the_parse():
    assert _answer("Is the cup still there?").text.startswith("The Cup is still there")
    for change in (ChangeAsked.MOVED, ChangeAsked.REMOVED):  # the memory's events of that change, none here
        text = _answer("Is the cup still there?", change=change).text
        assert text == f"No object {change.value} that memory knows of."
    assert _answer("What did I see first?").text.startswith("First seen: the Kettle")
    assert _answer("What did I see first?", sequence_end=SequenceEnd.LAST).text.startswith("Last seen: ")


def test_an_agents_answer_carries_its_intent():
    from test_agent_api import frames

    from directme import Agent, AgentConfig

    agent = Agent(AgentConfig.from_dict({"query": {"embedder": "string"}}))
    agent.observe_many(frames(3))
    q = "Which side is the couch on right now?"
    a = agent.ask(q)
    assert a.intent is not None and a.intent.question == q and a.intent.primitive == Primitive.EGO_DIRECTION
    assert replace(a, intent=None) == a and "intent" not in repr(a)  # not part of equality, repr or result files


def test_the_named_object_is_the_instance_nearest_the_wearer_among_several_well_seen():
    """A day holds a sink in every home: "where is the sink?" means the one where the wearer is, not the one
    seen most; a one-off sighting (a false detection) never wins by being near."""
    from snapshot_builders import obj, snapshot, walk

    from directme.answerers.geometric import GeometricAnswerer
    from directme.query.context import build_context
    from directme.query.vocab import Vocabulary

    far = obj("far", "Sink", (40, 0), n_obs=50)  # the other home's sink, seen all morning
    here = obj("here", "Sink", (2, 0), t0=90, t1=100, n_obs=4)
    stray = obj("stray", "Sink", (0.5, 0), t0=99, t1=99, n_obs=1)
    snap = snapshot(100.0, [far, here, stray], walk([(0, 40, -2, 0, "kitchen"), (100, 0, 0, 0, "kitchen")]))
    ctx = build_context("How far is the sink from me?", [], snap, Vocabulary(), None)
    assert "2.0 m" in GeometricAnswerer().answer(ctx).text


def test_a_doubtful_instance_counts_as_farther_not_as_absent():
    """Presence can be wrong under noise: the sink of the home the wearer stands in, believed gone, is still
    meant over another home's sink 40 m away; within a home, the present instance wins over a gone one nearby
    (an object moved a few metres)."""
    from snapshot_builders import obj, snapshot, walk

    from directme.answerers.geometric import GeometricAnswerer
    from directme.query.context import build_context
    from directme.query.vocab import Vocabulary

    track = walk([(0, 40, -2, 0, "kitchen"), (100, 0, 0, 0, "kitchen")])
    far = obj("far", "Sink", (40, 0), n_obs=50)
    doubted = obj("here", "Sink", (2, 0), t0=90, t1=99, n_obs=6, present=False)
    moved_from = obj("old", "Cup", (1, 0), t0=90, t1=95, n_obs=6, present=False)
    moved_to = obj("new", "Cup", (0, 5), t0=96, t1=99, n_obs=3)
    snap = snapshot(100.0, [far, doubted, moved_from, moved_to], track)
    ask = GeometricAnswerer().answer
    assert "2.0 m" in ask(build_context("How far is the sink from me?", [], snap, Vocabulary(), None)).text
    assert "5.0 m" in ask(build_context("How far is the cup from me?", [], snap, Vocabulary(), None)).text

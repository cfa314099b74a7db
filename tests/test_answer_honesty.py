"""Answers that know what memory does not hold: a named object (asked, reference or viewpoint object) that is
not in memory as of the asked time is said to be missing (flag missing_object), never answered by picking
among the options left; ``Answer.abstained`` is the one test of "no answer"; yes / no and recall questions
that memory can answer are answered."""
import pytest
from snapshot_builders import obj, snapshot, walk

from directme import Agent
from directme.answerers.geometric import GeometricAnswerer
from directme.answerers.geometric_config import GeometricConfig
from directme.config import oracle_config
from directme.query.context import build_context
from directme.query.vocab import Vocabulary
from directme.sim import generate_episode
from directme.types import Answer, Flag

NEVER_SHOWN = ("giraffe", "saxophone", "surfboard")  # not in the simulator's catalog: never in an episode


@pytest.fixture(scope="module")
def sim_agent():
    ep = generate_episode(seed=0, minutes=0.5)
    agent = Agent(oracle_config("none", 0), episode=ep)
    for frame in ep.frames():
        for fp in agent.perception.process(frame):
            agent.observe_perception(fp)
    labels = {n.label.lower() for n in agent.memory.as_of(agent.latest_t).objects.values()}
    assert "couch" in labels and "backpack" in labels and not labels & set(NEVER_SHOWN)
    return agent


def _missing(a: Answer, name: str) -> None:
    assert a.abstained and a.letter is None and a.confidence == 0.0, a.text
    assert Flag.MISSING_OBJECT in a.flags and f"'{name}'" in a.text and "in memory" in a.text, a.text


@pytest.mark.parametrize("template, options", [
    ("Where is the {x}?", ["In front of you.", "Behind you.", "On your left."]),  # asked object
    ("How far is the {x} from me?", None),
    ("Can I reach the {x}?", ["Yes", "No"]),
    ("Which room is the {x} in?", None),
    ("Is the {x} still there?", None),
    ("Which is closer to me, the couch or the {x}?", ["The couch.", "The {x}."]),  # one side missing
    ("Which is closer to me, the {x} or the couch?", None),
    ("Is the backpack to the left of the {x}?", ["Yes", "No"]),  # reference missing
    ("What is to the left of the {x}?", None),
    ("Which chair is closest to the {x}?", None),
    ("If I face the {x}, where is the backpack?", ["On your left.", "On your right."]),  # viewpoint object
])
@pytest.mark.parametrize("name", NEVER_SHOWN[:2])
def test_a_named_object_never_shown_is_said_to_be_missing(sim_agent, template, options, name):
    a = sim_agent.ask(template.format(x=name), options=[o.format(x=name) for o in options] if options else None)
    _missing(a, name)
    if options:  # no pick among the options left: the scores stay uniform
        assert list(a.option_scores.values()) == pytest.approx([1 / len(options)] * len(options))


def test_the_issue_examples_on_a_simulator_episode(sim_agent):
    a = sim_agent.ask("Which is closer, the table or the door?")  # tables are in memory, doors never
    _missing(a, "door")
    assert "table" in a.text.split("in memory:")[1]
    _missing(sim_agent.ask("Which is closer, the sofa or the fridge?", options=["The sofa.", "The fridge."]), "fridge")


def test_missing_as_of_the_asked_time(sim_agent):
    """An object first seen later in the episode is missing when asked about before that, answered after."""
    first: dict[str, float] = {}
    for n in sim_agent.memory.as_of(sim_agent.latest_t).objects.values():
        first[n.label] = min(first.get(n.label, n.first_seen_s), n.first_seen_s)
    label = max((lab for lab in first if "/" not in lab), key=first.get)
    assert first[label] >= 2.0, first
    name = label.lower()
    _missing(sim_agent.ask(f"How far is the {name} from me?", t=first[label] - 1.0), name)
    a = sim_agent.ask(f"How far is the {name} from me?", t=sim_agent.latest_t)
    assert not a.abstained and "m from you" in a.text, a.text


def test_did_i_see_an_object_never_shown_answers_no_and_says_why(sim_agent):
    a = sim_agent.ask("Did I see a giraffe?", options=["Yes", "No"])
    assert a.letter == "B" and not a.abstained and Flag.MISSING_OBJECT in a.flags and "'giraffe'" in a.text
    assert sim_agent.ask("Did I see a couch?", options=["Yes", "No"]).letter == "A"


def test_what_did_i_see_first_and_last(sim_agent):
    snap = sim_agent.memory.as_of(sim_agent.latest_t)
    first = min(snap.objects.values(), key=lambda n: n.first_seen_s)
    last = max(snap.objects.values(), key=lambda n: n.last_seen_s)
    a = sim_agent.ask("What did I see first?")
    assert a.text.startswith(f"First seen: the {first.label};") and not a.abstained, a.text
    assert sim_agent.ask("What was the last thing I saw?").text.startswith(f"Last seen: the {last.label}")


# a loop: out 3 m along +x, across, and back to the start (no scene tags)
LOOP = walk([(0, 0, 0, 0, None), (3, 3, 0, 90, None), (6, 3, 3, 180, None), (9, 0, 3, 270, None), (12, 0.2, 0.1, 0, None)])


@pytest.mark.parametrize("t, letter", [(12.0, "A"), (6.0, "B")])
def test_am_i_back_where_i_started_picks_the_option_its_text_says(t, letter):
    snap = snapshot(t, [], LOOP)
    a = GeometricAnswerer().answer(build_context("Am I back where I started?", ["Yes", "No"], snap, Vocabulary(), None))
    assert a.letter == letter and not a.abstained and Flag.OPTIONS_MISMATCH not in a.flags, a.text
    assert ("You are back near" if letter == "A" else "You are not back") in a.text


def test_am_i_back_where_i_started_with_rooms_is_not_a_room_answer():
    track = walk([(0, 1, 0, 0, "kitchen"), (10, 5, 0, 0, "corridor"), (20, 1.2, 0, 180, "kitchen")])
    snap = snapshot(21.0, [obj("cup", "Cup", (2, 0), t0=1, t1=20)], track)
    a = GeometricAnswerer().answer(build_context("Am I back where I started?", ["Yes", "No"], snap, Vocabulary(), None))
    assert a.letter == "A" and not a.abstained, a.text


def test_abstained_is_the_flag_with_or_without_options():
    assert Answer("q", 0.0, "t", flags=("abstained",)).abstained
    assert not Answer("q", 0.0, "t", letter="A", flags=("no_evidence",)).abstained
    snap = snapshot(12.0, [], LOOP)
    a = GeometricAnswerer().answer(build_context("Where is the giraffe?", [], snap, Vocabulary(), None))
    assert a.abstained and Flag.NO_EVIDENCE in a.flags and Flag.MISSING_OBJECT in a.flags


def _count_zero(track, calibration="none"):
    snap = snapshot(track[-1][0], [obj("cup", "Cup", (2, 0), t0=0, t1=track[-1][0])], track)
    answerer = GeometricAnswerer(GeometricConfig(calibration=calibration))
    return answerer.answer(build_context("How many chairs are there?", [], snap, Vocabulary(), None))


def test_none_counted_is_as_sure_as_the_share_of_the_surroundings_looked_at():
    glance = _count_zero(walk([(0, 0, 0, 0, "kitchen"), (1, 0, 0, 0, "kitchen")]))  # two frames, one heading
    around = _count_zero(walk([(t, 0, 0, 30 * t, "kitchen") for t in range(13)]))  # turned all the way round
    assert glance.text == "0 chairs (looked at 19% of the directions around you in 2 frames)."
    assert glance.confidence == pytest.approx(1 - (1 - 70 / 360) * 0.5, abs=0.01)  # 70 deg field of view, prior 0.5
    assert "looked at 100% of the directions around you in 13 frames" in around.text and around.confidence > 0.99
    # the packaged calibration maps counts monotonically: a glance stays less sure than a look all round
    glance, around = (_count_zero(walk(w), "packaged") for w in ([(0, 0, 0, 0, "kitchen"), (1, 0, 0, 0, "kitchen")],
                                                                 [(t, 0, 0, 30 * t, "kitchen") for t in range(13)]))
    assert glance.confidence < around.confidence - 0.2


def test_view_coverage_of_a_place_counts_its_frames_only():
    from directme.answerers.coverage import view_coverage

    snap = snapshot(5.0, [], walk([(0, 0, 0, 0, "kitchen"), (2, 5, 0, 180, "hall"), (5, 5, 0, 180, "hall")]))
    kitchen, hall, nowhere = (view_coverage(snap, 70.0, p) for p in ("kitchen", "hall", "garage"))
    assert (kitchen.n_frames, hall.n_frames, nowhere.n_frames) == (2, 4, 0)
    assert kitchen.fraction == pytest.approx(70 / 360, abs=0.01) and nowhere.fraction == 0.0
    assert nowhere.describe() == "no frame of it seen yet"


def test_a_count_in_a_room_never_entered_is_no_answer():
    snap = snapshot(5.0, [obj("cup", "Cup", (2, 0), t0=0, t1=5)], walk([(0, 0, 0, 0, "kitchen"), (5, 1, 0, 0, "kitchen")]))
    a = GeometricAnswerer().answer(build_context("How many chairs are in the garage?", ["0", "1", "2"], snap,
                                                 Vocabulary(), None))
    assert a.abstained and a.letter is None and "no frame of the garage" in a.text, a.text

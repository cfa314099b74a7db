"""Question parsing generalises to phrasings it was not written for: each case stands for a kind of
wording (a self-relative side, a clock dial, a participle clause, a bare verb before the object, ...),
not for one sentence of a phrasing set."""
import pytest

from directme.query.intent import parse_question
from directme.query.vocab import canonical


@pytest.mark.parametrize("text, obj", [
    ("Tell me, is the couch to the left of me or to the right of me?", "sofa"),
    ("Is the fridge to the front or to the back of me at the moment?", "fridge"),
    ("Where's the telly with respect to my current heading?", "telly"),
    ("Point out the direction of the bin for me, please.", "bin"),
    ("Tell me the direction I would need to walk in to reach the bedside table.", "bedside table"),
    ("How would I need to turn to be facing the couch?", "couch"),
    ("If I wanted to look at the fridge, which way would I turn?", "fridge"),
    ("Given the way I'm facing, where is the mug?", "mug"),
    ("What side of me is the sofa on?", "sofa"),
    ("Quick check - the kettle, left side or right side?", "kettle"),
    ("Is the couch off to my side somewhere?", "couch"),
    ("With me standing here, where would you say the lamp is?", "lamp"),
    ("Where should I be looking if I want to see the telly?", "telly"),
    ("Can you guide me to the rubbish bin? Which way do I go?", "rubbish bin"),
    ("In relation to my position, where's the fridge at the moment?", "fridge"),
    ("Do I have my back to the fridge?", "fridge"),
    ("Looking around me, where would the sofa be?", "sofa"),
    ("Where am I in relation to the bedside table?", "bedside table"),
    ("I lost sight of the mug; which way is it now?", "mug"),
    ("Where did the couch end up relative to me, now that it's out of view?", "couch"),
    # clock faces
    ("What time on a clock face is the fridge at from me?", "fridge"),
    ("If I'm facing twelve o'clock, where's the couch?", "couch"),
    ("Describe the telly's bearing from me as a clock hour.", "telly"),
    ("On the clock dial, where does the bedside table fall relative to me?", "bedside table"),
    ("Clock-face style, where's the bin?", "bin"),
])
def test_ego_direction_phrasings(text, obj):
    it = parse_question(text)
    assert (it.primitive, it.answerable()) == ("ego_direction", True), (it.primitive, it.confidence, it.how)
    assert [t.key for t in it.asked] == [canonical(obj)]
    assert it.time_ref.kind == "now"


@pytest.mark.parametrize("text, obj, ref", [
    ("Once I turn to the sofa, where will the cup be relative to me?", "cup", "sofa"),
    ("If I spin round to face the fridge, where's the bedside table?", "bedside table", "fridge"),
])
def test_facing_phrasings(text, obj, ref):
    it = parse_question(text)
    assert it.primitive == "facing" and it.answerable()
    assert [t.key for t in it.asked] == [canonical(obj)] and it.viewpoint.facing.key == canonical(ref)


@pytest.mark.parametrize("text", [
    "Once seated inside that cafe, what is she doing?",  # "once" only imagines a viewpoint with I / you / we
    "Where should I look if I want to research a topic?",
    "What dramatic action occurs involving the boat?",
    "What is the main similarity between the two dogs?",
    "What is the final step in the preparation of the soup?",
    "What does the headset's external display show?",
    "What important toggle is switched off before finishing?",
    "Which specific camera model is featured in the display?",
])
def test_open_questions_stay_open(text):
    assert not parse_question(text).answerable()


@pytest.mark.parametrize("text, event, subject", [
    ("Where was I just before going to the kitchen?", "enter", "kitchen"),
    ("Which room was I in before making it to the bathroom?", "enter", "bathroom"),
    ("What room preceded my entering the living room?", "enter", "living room"),
    ("Where had I been before reaching the laundry room?", "enter", "laundry room"),
    ("After my time in the kitchen, where did I go?", "leave", "kitchen"),
    ("After my visit to the office, where did I go next?", "leave", "office"),
    ("Which room did I go into on my way out of the bedroom?", "leave", "bedroom"),
    ("Which room did I go on to, leaving the kitchen behind?", "leave", "kitchen"),
    ("From the kitchen, which room did I head into next?", "leave", "kitchen"),
    ("After I was finished with the bathroom, what room came next?", "leave", "bathroom"),
    ("Which room was my next stop after the kitchen?", "leave", "kitchen"),
])
def test_my_trajectory_room_events(text, event, subject):
    it = parse_question(text)
    assert it.primitive == "my_trajectory" and it.answerable(), (it.primitive, it.confidence)
    assert (it.time_ref.kind, it.time_ref.event, it.time_ref.subject) == ("event", event, subject)


def test_minutes_before_this_is_a_duration():
    ref = parse_question("Which room was I in 2 minutes before this?").time_ref
    assert (ref.kind, ref.seconds) == ("ago", 120)


@pytest.mark.parametrize("text, obj", [
    ("What room was the mug in prior to me moving it?", "mug"),
    ("Where was the couch kept before I shifted it?", "couch"),
    ("Which room did the fridge start out in before I moved it?", "fridge"),
])
def test_object_room_before_a_move(text, obj):
    it = parse_question(text)
    assert it.answerable() and [t.key for t in it.asked] == [canonical(obj)]
    assert (it.time_ref.kind, it.time_ref.relation) == ("event", "before")


def test_object_room_after_a_move():
    it = parse_question("Which room did the couch end up in?")
    assert it.primitive == "object_trajectory" and it.answerable() and [t.key for t in it.asked] == ["couch"]


def test_reach_without_steps_names_only_the_object():
    it = parse_question("Without taking any steps, could I grab the bedside table?")
    assert it.primitive == "reachability" and [t.key for t in it.asked] == ["nightstand"]


@pytest.mark.parametrize("options, kinds", [
    (["The kitchen.", "In the living room.", "The laundry room."], {"my_trajectory", "object_trajectory", "place"}),
    (["Three.", "3", "Zero."], {"count", "quantity_change", "count_here"}),
    (["It is on your left.", "At 3 o'clock."], {"ego_direction", "relative_position"}),
    (["A cup.", "A lamp."], set()),
])
def test_option_kinds(options, kinds):
    from directme.query.intent import _option_kinds, default_vocabulary

    assert _option_kinds(options, default_vocabulary()) == kinds


def test_unsure_meaning_and_agreeing_options_make_a_parse_answerable(monkeypatch):
    """A kind guessed by meaning below the bar is answered when the options are of that kind, never otherwise."""
    import directme.query.intent as intent
    from directme.query.calibrate import Votes
    from directme.query.classify import KindGuess

    def meaning(p):
        scores = (("ego_direction", p), ("open", 1 - p))
        return lambda *a, **k: (KindGuess("ego_direction", p, "embedding", scores),
                                Votes("ego_direction", "meaning", meaning=scores))

    monkeypatch.setattr(intent, "guess_kind", meaning(0.4))
    q = "The kettle, where would that be for me?"
    agree = parse_question(q, ["It is on your left.", "It is behind you.", "It is on your right."])
    assert agree.answerable() and agree.how == "embedding+options" and [t.key for t in agree.asked] == ["kettle"]
    assert not parse_question(q, ["The kitchen.", "The office."]).answerable()
    assert not parse_question(q).answerable()
    monkeypatch.setattr(intent, "guess_kind", meaning(0.2))
    assert not parse_question(q, ["It is on your left.", "It is behind you."]).answerable()  # too unsure

"""Kinds of wording the parser reads: a scene-setting sentence before the
question, one room and a before/after word instead of a time clause, polite formulas, the wearer in the
third person, options that rule a kind out. Each case stands for a kind of wording, not one sentence."""
import pytest

from directme.query.intent import Primitive, TimeKind, parse_question
from directme.query.vocab import canonical

ROOMS = ("The kitchen.", "In the bedroom.", "The bathroom.", "The office.", "The living room.")
SIDES = ("It is on your left.", "It is behind you.", "It is in front of you.", "It is to your rear-right.",
         "It is on your right.")
CLOCK = ("At 1 o'clock.", "At 3 o'clock.", "At 6 o'clock.", "At 9 o'clock.", "At 11 o'clock.")


def _is_ego_direction_of(it, obj):
    """``it`` asks where ``obj`` is for the wearer, confidently enough for geometry to answer."""
    assert (it.primitive, it.answerable()) == (Primitive.EGO_DIRECTION, True), (it.primitive, it.confidence, it.how)
    assert [t.key for t in it.asked] == [canonical(obj)]


@pytest.mark.parametrize("text, relation, event, room", [
    # a statement names the room, the question only looks one way from it
    ("I ended up in the bathroom at some point. Which room was I in just before that?", "before", "enter", "bathroom"),
    ("I walked into the office earlier on; where had I come from?", "before", "enter", "office"),
    ("I spent some time in the kitchen. Where did I go after that?", "after", "leave", "kitchen"),
    ("I was in the bedroom and then I left. Which room did I go to?", "after", "leave", "bedroom"),
    ("I walked out of the office at some point. What was the next room?", "after", "leave", "office"),
    ("I went into the bathroom - what was the room before it?", "before", "enter", "bathroom"),
    # participles and visits
    ("Having been in the kitchen, where did I go next?", "after", "leave", "kitchen"),
    ("Which room was I in immediately prior to visiting the office?", "before", "enter", "office"),
    ("Which room did I visit right after visiting the bedroom?", "after", "leave", "bedroom"),
    # the way there, the way on
    ("Which room did I walk through to reach the bathroom?", "before", "enter", "bathroom"),
    ("Which room did I exit to walk into the kitchen?", "before", "enter", "kitchen"),
    ("Which room was I in when I set off for the office?", "before", "enter", "office"),
    ("Which room did I pass into from the living room?", "after", "leave", "living room"),
    ("Tracing my path back from the office, which room was I in before?", "before", "enter", "office"),
    ("Which room did I visit just ahead of the kitchen?", "before", "enter", "kitchen"),
    # very short, the options saying it is about rooms
    ("bedroom then where?", "after", "leave", "bedroom"),
    ("Kitchen, then which room?", "after", "leave", "kitchen"),
    ("What came before the office?", "before", "enter", "office"),
    # the wearer in the third person
    ("Where did the camera wearer go after leaving the bathroom?", "after", "leave", "bathroom"),
])
def test_route_questions_find_the_room_and_the_way(text, relation, event, room):
    it = parse_question(text, ROOMS)
    tr = it.time_ref
    assert it.primitive == Primitive.MY_TRAJECTORY and it.answerable(), (it.primitive, it.confidence, it.how)
    assert (tr.kind, tr.relation, tr.event, tr.subject) == (TimeKind.EVENT, relation, event, canonical(room))


@pytest.mark.parametrize("text, seconds", [
    ("What room was the camera wearer in 2 minutes ago?", 120.0),
    ("If I rewind 3 minutes, which room am I in?", 180.0),
    ("Tell me the name of the room I was in 1 minute ago.", 60.0),
])
def test_rooms_some_minutes_ago(text, seconds):
    it = parse_question(text, ROOMS)
    assert it.primitive == Primitive.MY_TRAJECTORY and it.answerable(), (it.primitive, it.confidence, it.how)
    assert (it.time_ref.kind, it.time_ref.seconds) == (TimeKind.AGO, seconds)


@pytest.mark.parametrize("text, obj", [
    # polite formulas and the wearer's own frame name no object
    ("Any idea which way the sofa is from here?", "sofa"),
    ("If it's not too much trouble, could you say where the fridge is compared with me?", "fridge"),
    ("Compared with my current heading, where is the bin?", "bin"),
    ("From my perspective, what o'clock is the lamp?", "lamp"),
    # the wearer in the third person
    ("Relative to the camera wearer, where is the mug now?", "mug"),
    ("From the camera wearer's viewpoint, which clock direction is the bed in?", "bed"),
    ("From the camera's point of view, where is the kettle right now?", "kettle"),
    # a scene-setting sentence or clause names another object
    ("I put my bag down a moment ago; where's the lamp from where I'm standing now?", "lamp"),
    ("With my back to the wall, where is the stove relative to me now?", "stove"),
    # an act to come is no time in the past
    ("Before I move, tell me which side the toilet is on.", "toilet"),
    ("Before I go over there, which way is the bed from me?", "bed"),
    # describing a position is asking for it
    ("Describe the bed's position using a clock face.", "bed"),
    # nothing named to be relative to: relative to me
    ("Which quadrant around me is the bed in?", "bed"),
    ("Imagine I'm about to sit down: where would the backpack be relative to me at this moment?", "backpack"),
])
def test_ego_questions_with_clauses_and_formulas(text, obj):
    it = parse_question(text, SIDES)
    _is_ego_direction_of(it, obj)
    assert it.time_ref.kind == TimeKind.NOW


@pytest.mark.parametrize("text, options", [
    ("The basket?", CLOCK),  # read as where it went; clock hours say where it is for me
    ("stove: ahead or behind?", SIDES),
])
def test_options_rule_out_a_kind(text, options):
    it = parse_question(text, options)
    assert (it.primitive, it.answerable()) == (Primitive.EGO_DIRECTION, True), (it.primitive, it.confidence, it.how)


def test_options_never_make_an_open_question_geometric():
    assert parse_question("Find the trash can for me.", SIDES).primitive == Primitive.OPEN
    assert not parse_question("What colour is the kettle?", ROOMS).answerable()


@pytest.mark.parametrize("text, relation, event", [
    ("Where did I go on leaving the bathroom?", "at", "leave"),  # "go on leaving" is no "went on to"
    ("When I left the bathroom, which room did I go to?", "at", "leave"),
])
def test_route_time_keeps_clauses_it_has_no_word_against(text, relation, event):
    tr = parse_question(text, ROOMS).time_ref
    assert (tr.relation, tr.event, tr.subject) == (relation, event, "bathroom")


def test_place_kind_keeps_asking_where_i_am_now():
    assert parse_question("Which room am I in now? I came from the kitchen.").time_ref.kind == TimeKind.NOW
    assert parse_question("What room is next to the kitchen?").time_ref.kind == TimeKind.NOW


@pytest.mark.parametrize("text, relation, event, room", [
    ("Where was I coming from when I showed up in the bathroom?", "before", "enter", "bathroom"),
    ("Where did I go once I finished up in the bedroom?", "after", "leave", "bedroom"),
    ("Which room did the office lead me to?", "after", "leave", "office"),
])
def test_more_ways_of_arriving_and_leaving(text, relation, event, room):
    tr = parse_question(text, ROOMS).time_ref
    assert (tr.kind, tr.relation, tr.event, tr.subject) == (TimeKind.EVENT, relation, event, room)


@pytest.mark.parametrize("text, obj", [
    ("How do I get to the backpack from here?", "backpack"),
    ("How do I get to the rubbish bin?", "rubbish bin"),
    ("Is the umbrella over my left shoulder or my right shoulder?", "umbrella"),
    ("Over which shoulder is the couch?", "couch"),
])
def test_the_way_to_an_object_and_shoulders(text, obj):
    _is_ego_direction_of(parse_question(text), obj)


def test_how_to_stays_open():
    assert parse_question("How do I make pancakes?").primitive == Primitive.OPEN
    assert parse_question("How can I turn on the TV?").primitive == Primitive.OPEN


@pytest.mark.parametrize("text, obj", [
    ("If I imagine a clock with 12 straight ahead, what time does the fridge sit at?", "fridge"),
    ("Using the clock system, give me the direction of the basket.", "basket"),
    ("Which number on the clock lines up with the umbrella?", "umbrella"),
])
def test_a_clock_as_the_frame_of_the_answer(text, obj):
    _is_ego_direction_of(parse_question(text, CLOCK), obj)


@pytest.mark.parametrize("text", ["What time is shown on the clock face?", "What time is it on the wall clock?",
                                  "What time did I leave the kitchen?"])
def test_reading_a_clock_or_asking_the_time_stays_open(text):
    assert parse_question(text).primitive == Primitive.OPEN


@pytest.mark.parametrize("text, obj", [
    ("I just came from the hallway; where's the stove relative to me now?", "stove"),
    ("In the kitchen where is the kettle relative to me?", "kettle"),
    ("I've got a question about the umbrella: which way is it from me right now?", "umbrella"),
])
def test_a_room_or_a_question_opening_the_sentence_is_not_the_object(text, obj):
    _is_ego_direction_of(parse_question(text, SIDES), obj)


def test_a_room_opening_a_count_question():
    it = parse_question("In the kitchen how many mugs are there?")
    assert (it.primitive, [t.key for t in it.asked]) == (Primitive.COUNT, [canonical("mug")])


@pytest.mark.parametrize("text", [
    "Could you tell me the clock's position using the clock method?",
    "Describe the clock's position using a clock face.",
    "I'd like the clock's direction in clock terms.",
    "Using the clock system, give me the direction of the clock.",
    "Which number on the clock lines up with the clock?",
])
def test_a_clock_asked_about_in_clock_terms(text):
    _is_ego_direction_of(parse_question(text, CLOCK), "clock")


@pytest.mark.parametrize("text, obj", [
    ("Can you put the basket's direction in terms of a clock?", "basket"),
    ("What side of my body is the stove closest to?", "stove"),
    ("Where is the backpack situated in relation to the center of my view?", "backpack"),
])
def test_sides_of_me_and_my_view(text, obj):
    _is_ego_direction_of(parse_question(text, SIDES), obj)


def test_entering_it_from():
    tr = parse_question("The bedroom - which room did I enter it from?", ROOMS).time_ref
    assert (tr.relation, tr.event, tr.subject) == ("before", "enter", "bedroom")
    assert parse_question("Can I put the cup on the shelf?").primitive == Primitive.OPEN
    assert parse_question("Which is closest to me, the cup or the lamp?").primitive == Primitive.DISTANCE_COMPARE

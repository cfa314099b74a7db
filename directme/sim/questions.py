"""Every question template, option phrasing and decision margin of the simulator's questions
(constants only; generation lives in question_gen.py).

Kept in one place (and stable) because the question parser and the geometric answerer are
written against these phrasings. Placeholders: ``{obj}`` spoken singular name ("cup"),
``{objs}`` plural ("cups"), ``{a}``/``{b}`` two objects, ``{ref}`` a reference object,
``{room}`` a room type ("kitchen"), ``{ago}`` a duration ("2 minutes").

Ground-truth conventions (the answerer must use the same):
- ego frame = camera heading projected on the ground plane, up = world +z (geometry.EgoFrame);
- an object's position = the centre of its axis-aligned box (``ObjectGT.position_at``);
- directions: ``geometry.direction_word`` (8 sectors of 45 deg), ``geometry.clock_hour``;
- distances: ground-plane distance camera centre -> object centre (``geometry.ground_distance_m``).
"""
from __future__ import annotations

# ----------------------------------------------------------------- subtasks and categories

SUBTASKS = (
    "My Trajectory",
    "Object Trajectory",
    "Ego-centric Position",
    "Relative Position & Orientation Memory",
    "Distance Comparison",
    "Reachability Judgment",
    "Object Category Recall",
    "Quantity Change Tracking",
)

SUBTASK_CATEGORY = {
    "My Trajectory": "Trajectory & Movement",
    "Object Trajectory": "Trajectory & Movement",
    "Ego-centric Position": "Position & Orientation",
    "Relative Position & Orientation Memory": "Position & Orientation",
    "Distance Comparison": "Proximity & Reachability",
    "Reachability Judgment": "Proximity & Reachability",
    "Object Category Recall": "Category & Quantity",
    "Quantity Change Tracking": "Category & Quantity",
}

SUBTASK_QTYPE = {s: "OTHER" for s in SUBTASKS} | {
    "Distance Comparison": "BINARY",
    "Reachability Judgment": "BINARY",
    "Quantity Change Tracking": "COUNT",
}

# ----------------------------------------------------------------- question templates per kind

TEMPLATES = {
    # My Trajectory
    "my_prev_room": ("Which room was I in before I entered the {room}?",
                     "Where did I come from before entering the {room}?",
                     "Before I walked into the {room}, which room was I in?"),
    "my_next_room": ("Where did I go after leaving the {room}?",
                     "Which room did I walk into after I left the {room}?",
                     "After leaving the {room}, which room did I enter?"),
    "my_room_ago": ("Which room was I in {ago} ago?",
                    "Where was I {ago} ago?",
                    "{ago_cap} ago, which room was I in?"),
    # Object Trajectory (objects the wearer picked up and put down elsewhere)
    "obj_prev_room": ("Where was the {obj} before I moved it?",
                      "Which room was the {obj} in before I picked it up?",
                      "Before I moved the {obj}, where was it?"),
    "obj_now_room": ("Where did I put the {obj}?",
                     "Which room did I take the {obj} to?",
                     "Where did I leave the {obj} after moving it?"),
    # Ego-centric Position (object seen within RECENT_S)
    "ego_direction": ("Which side is the {obj} on right now?",
                      "Where is the {obj} relative to me right now?",
                      "In which direction is the {obj} from me now?"),
    "ego_clock": ("At what o'clock is the {obj} from me right now?",
                  "In which clock direction is the {obj} right now?"),
    # Relative Position & Orientation Memory (object not seen for MEMORY_MIN_UNSEEN_S)
    "memory_direction": ("Where is the {obj}?",
                         "Where is the {obj} now?",
                         "Which direction is the {obj} from me now?"),
    "memory_facing": ("If I turn to face the {ref}, which side will the {obj} be on?",
                      "Facing the {ref}, where would the {obj} be?",
                      "Suppose I face the {ref}: where is the {obj} then?"),
    # Distance Comparison (binary: the two objects, in the order mentioned)
    "distance_closer": ("Which is closer to me now, the {a} or the {b}?",
                        "Which one is nearer to me right now: the {a} or the {b}?"),
    "distance_farther": ("Which is farther from me now, the {a} or the {b}?",
                         "Which one is farther away from me right now: the {a} or the {b}?"),
    # Reachability Judgment (binary: Yes / No)
    "reach": ("Can I reach the {obj} now?",
              "Is the {obj} within arm's reach right now?",
              "Can I touch the {obj} without walking?"),
    # Object Category Recall (exactly one option was seen; the others never were, by time t)
    "recall_room": ("Which of these objects did I see in the {room}?",
                    "Which of the following was in the {room}?",
                    "What did I see in the {room}?"),
    "recall_any": ("Which of these objects have I seen so far?",
                   "Which of the following have I come across so far?"),
    # Quantity Change Tracking (count of instances present at time t)
    "count_all": ("How many {objs} are there?",
                  "How many {objs} are there now?",
                  "How many {objs} can be found here now?"),
    "count_room": ("How many {objs} are in the {room} now?",
                   "How many {objs} are there in the {room}?"),
}

KIND_SUBTASK = {
    "my_prev_room": "My Trajectory", "my_next_room": "My Trajectory", "my_room_ago": "My Trajectory",
    "obj_prev_room": "Object Trajectory", "obj_now_room": "Object Trajectory",
    "ego_direction": "Ego-centric Position", "ego_clock": "Ego-centric Position",
    "memory_direction": "Relative Position & Orientation Memory",
    "memory_facing": "Relative Position & Orientation Memory",
    "distance_closer": "Distance Comparison", "distance_farther": "Distance Comparison",
    "reach": "Reachability Judgment",
    "recall_room": "Object Category Recall", "recall_any": "Object Category Recall",
    "count_all": "Quantity Change Tracking", "count_room": "Quantity Change Tracking",
}

# ----------------------------------------------------------------- option phrasings (styles)

# direction word (geometry.DIRECTIONS_8) -> option text, one tuple entry per style.
DIRECTION_OPTIONS = {
    "front": ("It is in front of you.", "It's in front of you."),
    "front-left": ("It is to your front-left.", "It's on your left front."),
    "left": ("It is on your left.", "It's on your left."),
    "behind-left": ("It is to your rear-left.", "It's on your left rear."),
    "behind": ("It is behind you.", "It's behind you."),
    "behind-right": ("It is to your rear-right.", "It's on your right rear."),
    "right": ("It is on your right.", "It's on your right."),
    "front-right": ("It is to your front-right.", "It's on your right front."),
}
CLOCK_OPTIONS = ("At {h} o'clock.", "It is at {h} o'clock.")
ROOM_OPTIONS = ("The {room}.", "In the {room}.")
OBJECT_OPTIONS = ("The {obj}.",)  # distance comparison: the two objects
RECALL_OPTIONS = ("{article} {obj}.",)  # "A cup." / "An apple."
COUNT_WORDS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten")
COUNT_OPTIONS = ("{word}.", "{n}")  # "Three." / "3"
YES_NO_OPTIONS = (("Yes.", "No."), ("Yes, you can.", "No, you can't."))

N_OPTIONS = 5  # multiple choice; binary questions have 2 (Yes/No, or the two objects)

# ----------------------------------------------------------------- decision margins (ambiguity filter)

AZIMUTH_MARGIN_DEG = 10.0  # skip if the azimuth is within this of an 8-sector boundary
CLOCK_MARGIN_DEG = 7.0  # skip if within this of a 30 deg clock-sector boundary
DIRECTION_MAX_EXTENT_RATIO = 0.15  # skip if object half-extent / distance exceeds this (direction unclear)
DIRECTION_MIN_DISTANCE_M = 1.0  # no direction questions about objects closer than this
DISTANCE_MARGIN_M = 0.3  # skip if |d_a - d_b| < this + half the objects' ground extents
REACH_RADIUS_M = 1.0  # arm's reach: ground distance <= radius -> reachable
REACH_MARGIN_M = 0.15  # skip if |d - REACH_RADIUS_M| < this + the object's ground half-extent
ROOM_TIME_MARGIN_S = 10.0  # "room N minutes ago": no room change within this of that time

# ----------------------------------------------------------------- what counts as "seen"

SEEN_MIN_PIXEL_FRACTION = 0.002  # an object is seen in a frame if >= this fraction of the image shows it
RECENT_S = 10.0  # Ego-centric Position: the object was seen within the last RECENT_S
MEMORY_MIN_UNSEEN_S = 20.0  # Relative Position Memory: not seen for at least this long

# ----------------------------------------------------------------- phrasings beyond the templates

# ``generate_episode(..., phrasings=...)``: "templates" asks with TEMPLATES above (the default, what the parser
# was first written against); "dev" and "heldout" ask the same questions (same answers, options and times) in
# other words: multi-clause, indirect and polite sentences, and object names that differ from the catalogue's
# (NAME_VARIANTS). "dev" phrasings are for tests, the demo and parser development; "heldout" phrasings are
# reserved for `benchmarks/agent_accuracy.py --phrasings heldout` and only ever measured in aggregate.
PHRASING_SETS = ("templates", "dev", "heldout")

PHRASINGS = {
    "dev": {
        "my_prev_room": ("Just before I came into the {room}, where had I been?",
                         "Could you remind me which room I was in before walking into the {room}?",
                         "I'm retracing my steps: which room was I in right before I went into the {room}?",
                         "Which room did I leave to get into the {room}?",
                         "Which room had I just come out of when I entered the {room}?",
                         "Tell me which room I was in prior to the {room}, please.",
                         "I went into the {room} a little earlier; where was I just before that?",
                         "Do you know what room I was in before I got to the {room}?",
                         "Which room was I in before going into the {room}?",
                         "Which room did I come from before I reached the {room}?",
                         "What was the room right before the {room}?",
                         "Prior to entering the {room}, which room was I in?"),
        "my_next_room": ("After I walked out of the {room}, which room did I go into?",
                         "Could you tell me where I headed once I left the {room}?",
                         "I left the {room} at some point; which room came right after it?",
                         "What was the next room I entered after the {room}?",
                         "Where did I end up right after I exited the {room}?",
                         "Tell me the room I went to once I was done in the {room}.",
                         "Do you know which room I went into after I came out of the {room}?",
                         "What room did I go to next, after the {room}?",
                         "Where did I head after I had left the {room}?",
                         "Right after the {room}, where did I go?",
                         "Which room followed the {room}?",
                         "When I left the {room}, which room did I go to?"),
        "my_room_ago": ("Could you tell me which room I was in {ago} ago?",
                        "Thinking back to {ago} ago, what room was I standing in?",
                        "I'd like to know where I was {ago} ago.",
                        "What room was I in {ago} ago?",
                        "Where had I been {ago} ago?",
                        "Tell me which room I was in {ago} ago, please.",
                        "{ago_cap} ago I was somewhere; which room was it?",
                        "Do you recall the room I was in {ago} ago?",
                        "What room was I in {ago} back?",
                        "{ago_cap} earlier, which room was I in?",
                        "Which room was I in, {ago} ago?",
                        "Can you tell me the room I was in about {ago} ago?"),
        "obj_prev_room": ("Which room did the {obj} come from before I moved it?",
                          "Could you remind me where the {obj} was before I picked it up?",
                          "I moved the {obj} earlier. Which room was it in before I moved it?",
                          "Where had the {obj} been sitting before I took it?",
                          "Which room had the {obj} been in before I moved it?",
                          "Tell me where the {obj} used to be before I took it.",
                          "Do you know which room the {obj} was in before I carried it away?",
                          "Where was the {obj} originally, before I picked it up?"),
        "obj_now_room": ("Which room did I carry the {obj} to?",
                         "Could you tell me where I left the {obj} after I moved it?",
                         "I moved the {obj} a while back; which room did it end up in?",
                         "Where did the {obj} end up after I moved it?",
                         "Where is the {obj} now that I have moved it?",
                         "Tell me which room I moved the {obj} into.",
                         "Do you know where I took the {obj}?",
                         "In which room did I leave the {obj} after carrying it?"),
        "ego_direction": ("Could you tell me which side the {obj} is on right now?",
                          "Where is the {obj} from where I'm standing right now?",
                          "I need to find the {obj}. Which direction is it from me at the moment?",
                          "Relative to me, where is the {obj} right now?",
                          "Tell me which direction the {obj} is in, relative to me, right now.",
                          "Do you know where the {obj} is right now, relative to me?",
                          "Is the {obj} to my left, to my right, in front of me or behind me right now?",
                          "Which direction do I need to turn to face the {obj} right now?",
                          "Where, relative to me, is the {obj} at the moment?",
                          "From where I'm standing, which way is the {obj}?",
                          "What's the direction of the {obj} from me at this moment?",
                          "Where is the {obj} positioned relative to me now?"),
        "ego_clock": ("Using clock directions, where is the {obj} right now?",
                      "Could you give me the clock position of the {obj} right now?",
                      "What o'clock would the {obj} be at from me right now?",
                      "I'm trying to spot the {obj}. At what o'clock is it right now?",
                      "Tell me at what o'clock the {obj} is right now.",
                      "Do you know the clock direction of the {obj} from me right now?",
                      "The {obj}: at what o'clock is it from me right now?",
                      "In clock terms, where is the {obj} from me right now?",
                      "The {obj} is at what o'clock from me right now?",
                      "On a clock face centred on me, where is the {obj} right now?",
                      "Give me the {obj}'s position as a clock hour right now.",
                      "What clock direction is the {obj} in right now?"),
        "memory_direction": ("I haven't seen the {obj} for a while; where is it now?",
                             "Could you tell me where the {obj} is?",
                             "Which direction should I look to find the {obj} now?",
                             "Where is the {obj} relative to me now?",
                             "Tell me where the {obj} is from here.",
                             "Do you know which way the {obj} is from me?",
                             "Where's the {obj} at the moment, relative to me?",
                             "I can't see the {obj} anymore. Which direction is it?"),
        "memory_facing": ("If I turned towards the {ref}, where would the {obj} be?",
                          "Imagine I'm facing the {ref}: which side is the {obj} on?",
                          "Suppose I turn to look at the {ref}; where will the {obj} be relative to me?",
                          "When I face the {ref}, which direction is the {obj}?",
                          "Were I to face the {ref}, where would the {obj} be?",
                          "Tell me where the {obj} would be if I faced the {ref}.",
                          "If I looked straight at the {ref}, which side would the {obj} be on?",
                          "Facing towards the {ref}, where is the {obj} relative to me?"),
        "distance_closer": ("Between the {a} and the {b}, which one is closer to me right now?",
                            "Could you tell me whether the {a} or the {b} is nearer to me?",
                            "I want to grab the closest one: is it the {a} or the {b}?",
                            "Which of these is nearest to me now: the {a} or the {b}?",
                            "Tell me which is closer to me: the {a} or the {b}.",
                            "Do you know if the {a} or the {b} is nearer to me?",
                            "Which is the nearer of the two to me, the {a} or the {b}?",
                            "Comparing the {a} and the {b}, which one is closer to me?",
                            "Which of the two, the {a} or the {b}, is closer to me?",
                            "What's closer to me right now - the {a} or the {b}?",
                            "Which object is at a shorter distance from me, the {a} or the {b}?",
                            "I can see the {a} and the {b}; which is nearer to me?"),
        "distance_farther": ("Between the {a} and the {b}, which one is farther from me right now?",
                             "Could you tell me whether the {a} or the {b} is further away from me?",
                             "Which is more distant from me at the moment, the {a} or the {b}?",
                             "Of the {a} and the {b}, which is the farthest from me now?",
                             "Tell me which is farther from me: the {a} or the {b}.",
                             "Do you know if the {a} or the {b} is further from me?",
                             "Which is the farther of the two from me, the {a} or the {b}?",
                             "Comparing the {a} and the {b}, which one is further away from me?",
                             "Which of the two, the {a} or the {b}, is farther from me?",
                             "What's farther from me right now - the {a} or the {b}?",
                             "Which object is at a greater distance from me, the {a} or the {b}?",
                             "I can see the {a} and the {b}; which is further from me?"),
        "reach": ("Could I touch the {obj} without taking a step?",
                  "Is the {obj} close enough for me to grab right now?",
                  "I don't want to move. Can I reach the {obj} from here?",
                  "Would I be able to reach the {obj} from where I'm standing?",
                  "Tell me if I can reach the {obj} without moving.",
                  "Do you think I could grab the {obj} from where I am now?",
                  "Is the {obj} reachable from my current spot?",
                  "Without walking, would I be able to touch the {obj}?"),
        "recall_room": ("When I was in the {room}, which of these objects did I see?",
                        "Could you tell me which of the following I saw in the {room}?",
                        "Which of these things was in the {room}?",
                        "Think back to the {room}: which of these did I come across there?",
                        "Tell me which of these I saw in the {room}.",
                        "Do you know which of these objects were in the {room}?",
                        "Which of the following did I see when I was in the {room}?",
                        "Among these objects, which one did I see in the {room}?"),
        "recall_any": ("Which of these objects have I come across up to now?",
                       "Could you tell me which of the following I have already seen?",
                       "Which one of these things have I noticed so far?",
                       "Of the following, which have I seen at some point?",
                       "Tell me which of these objects I've seen so far.",
                       "Do you know which of the following I have come across?",
                       "Among these, which have I already seen?",
                       "Which of the following objects did I see at some point?"),
        "count_all": ("Could you count the {objs} for me?",
                      "How many {objs} are there in total right now?",
                      "I'd like to know how many {objs} there are.",
                      "What's the number of {objs} around here at the moment?",
                      "Tell me how many {objs} there are.",
                      "Do you know how many {objs} there are right now?",
                      "How many {objs} have I got at the moment?",
                      "Count the {objs}, please."),
        "count_room": ("How many {objs} are there in the {room} right now?",
                       "Could you count the {objs} in the {room} for me?",
                       "In the {room}, how many {objs} are there now?",
                       "I'd like to know the number of {objs} in the {room}.",
                       "Tell me how many {objs} are in the {room}.",
                       "Do you know how many {objs} there are in the {room}?",
                       "How many {objs} does the {room} have right now?",
                       "Count the {objs} in the {room}, please."),
    },
    "heldout": {
        "my_prev_room": ("Before my most recent entry into the {room}, which room had I been in?",
                         "Please tell me the room I was in just prior to entering the {room}.",
                         "Where was I right before I stepped into the {room}?",
                         "I walked into the {room} a while ago. What room did I come from?"),
        "my_next_room": ("Which room did I move on to after exiting the {room}?",
                         "Please remind me where I went when I came out of the {room}.",
                         "Once I had left the {room}, what room did I walk into next?",
                         "Following my time in the {room}, which room did I go to?"),
        "my_room_ago": ("Which room was I standing in {ago} ago?",
                        "Please remind me what room I was in {ago} ago.",
                        "{ago_cap} ago, where was I exactly?",
                        "Do you know which room I happened to be in {ago} ago?"),
        "obj_prev_room": ("Before I carried the {obj} off, which room was it in?",
                          "Please tell me which room the {obj} was originally in, before I moved it.",
                          "In which room was the {obj} before I picked it up and took it away?",
                          "Where did the {obj} sit before I moved it?"),
        "obj_now_room": ("Which room did I bring the {obj} into?",
                         "After I picked up the {obj}, where did I put it down?",
                         "Please remind me which room I took the {obj} to.",
                         "The {obj} got moved by me earlier. Which room is it in now?"),
        "ego_direction": ("Which way is the {obj} from me at this moment?",
                          "Please tell me where the {obj} is relative to me right now.",
                          "From my current position, in which direction is the {obj}?",
                          "I'm looking for the {obj}: where is it relative to where I'm facing right now?"),
        "ego_clock": ("Tell me the o'clock direction of the {obj} from me right now.",
                      "At which clock hour is the {obj} relative to me right now?",
                      "If I think of a clock face, where is the {obj} right now?",
                      "Roughly what o'clock is the {obj} from me now?"),
        "memory_direction": ("Where would I find the {obj} from here?",
                             "Please point me towards the {obj}.",
                             "Do you remember where the {obj} is? Which way is it from me now?",
                             "Which direction is the {obj} in at the moment?"),
        "memory_facing": ("Say I face the {ref}. On which side would the {obj} be?",
                          "If I were to turn and face the {ref}, where would the {obj} end up relative to me?",
                          "Assuming I'm looking straight at the {ref}, where's the {obj}?",
                          "Picture me facing the {ref}: is the {obj} on my left, my right, in front or behind?"),
        "distance_closer": ("Out of the {a} and the {b}, which is closer to where I am?",
                            "Please tell me which is nearer to me right now, the {a} or the {b}.",
                            "Is the {a} closer to me than the {b}, or the other way round?",
                            "Which one would I reach first if I walked straight to it, the {a} or the {b}?"),
        "distance_farther": ("Which is further from where I'm standing, the {a} or the {b}?",
                             "Please tell me which one is farther away right now: the {a} or the {b}.",
                             "Out of the {a} and the {b}, which would take me longer to walk to?",
                             "Is the {a} or the {b} farther from me at this moment?"),
        "reach": ("Can I get my hand on the {obj} without walking over?",
                  "Please tell me whether the {obj} is within my reach right now.",
                  "Standing where I am, could I pick up the {obj}?",
                  "Is the {obj} within arm's length of me?"),
        "recall_room": ("Which of these items did I notice while I was in the {room}?",
                        "Please tell me which of the following objects were in the {room}.",
                        "Which of these did I spot in the {room}?",
                        "I was in the {room} earlier. Which of these objects did I see there?"),
        "recall_any": ("Which of these have I seen since I started?",
                       "Please tell me which of the following objects I have encountered so far.",
                       "Up to this moment, which of these items have I spotted?",
                       "Have I seen any of these? Which one?"),
        "count_all": ("Please tell me how many {objs} there are now.",
                      "How many {objs} do I have in total?",
                      "Can you count how many {objs} there are at the moment?",
                      "What is the total number of {objs} right now?"),
        "count_room": ("Please tell me how many {objs} the {room} has now.",
                       "What is the number of {objs} currently in the {room}?",
                       "Inside the {room}, how many {objs} can be found now?",
                       "Can you count the {objs} that are in the {room} at the moment?"),
    },
}

# Other names for the catalogue's spoken names (singular and plural), used by the "dev" and "heldout"
# phrasings half of the time; each must be a synonym the question parser's vocabulary knows.
NAME_VARIANTS = {
    "sofa": ("couch", "settee"), "sofas": ("couches", "settees"),
    "refrigerator": ("fridge",), "refrigerators": ("fridges",),
    "nightstand": ("bedside table",), "nightstands": ("bedside tables",),
    "trash can": ("rubbish bin", "garbage bin"), "trash cans": ("rubbish bins", "garbage bins"),
    "TV": ("telly", "television"), "TVs": ("televisions",),
    "cup": ("mug",), "cups": ("mugs",),
    "potted plant": ("plant", "houseplant"), "potted plants": ("plants", "houseplants"),
    "picture": ("painting", "photo"), "pictures": ("paintings", "photos"),
    "shelf": ("cupboard",), "shelves": ("cupboards",),
    "bathtub": ("bath", "tub"), "bathtubs": ("baths",),
    "dining table": ("kitchen table",), "dining tables": ("kitchen tables",),
}
NAME_SLOTS = ("obj", "ref", "a", "b", "objs")

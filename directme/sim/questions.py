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

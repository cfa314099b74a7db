"""The ``my_trajectory`` question kind: my own route, rooms visited, distance walked.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import KindSpec, PhraseRules, Roles, register
from ._rules import cues_of

PROTOTYPES = (
    "Which room was I in before the kitchen?",
    "Where did I go after leaving the bedroom?",
    "Which rooms have I been to?",
    "What route did I take to get here?",
    "How far have I walked so far?",
    "Where was I five minutes ago?",
    "Which room did I come from?",
    "In what order did I visit the rooms?",
    "Where did I start my walk?",
    "Did I pass through the hallway?",
    "What was the last room I was in before this one?",
    "How did I get to the office?",
    "Which places did I walk through?",
    "How many rooms did I visit?",
    "Have I been in the bathroom today?",
    "Which room did I enter after the corridor?",
    "Which room did I walk out of to get here?",
    "Where did I head once I left the bedroom?",
    "What room did I go to next after the bathroom?",
    "Which room was I standing in three minutes ago?",
    "Tell me where I was a minute ago.",
    "What distance have I covered so far?",
    "How many metres have I walked since I started?",
    "I am trying to remember which room I passed through just before the study.",
    "Which room did I step into once I had walked out of the hallway?",
    "What room was I standing in a couple of minutes back?",
    "Which room did I end up in straight after the garage?",
    "Where had I been right before I got to the living area?",
)

SPEC = register(KindSpec(
    "my_trajectory", "my own route, rooms visited, distance walked", PROTOTYPES, cues_of("my_trajectory"),
    options=frozenset({O.PLACE, O.DISTANCE}), roles=Roles.ROUTE,
    phrases=PhraseRules(rooms_scope=True),
    solvers=((P.MY_TRAJECTORY, "my_room"),),
    needs_target=False, subtask="My Trajectory"))

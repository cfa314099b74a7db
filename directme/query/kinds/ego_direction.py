"""The ``ego_direction`` question kind: where X is relative to me now (side, direction, clock hour), or where I left X.

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from .. import cues
from ..options import OptionKind as O
from ..parsed import Primitive as P
from . import CueRule, KindSpec, PhraseRules, Roles, register
from ._rules import FALLBACK, cues_of

_CUES = cues_of("ego_direction", CueRule("where", cues._WHERE_RE.pattern, FALLBACK + 5))

PROTOTYPES = (
    "Where is the stapler?",
    "Where are my keys?",
    "where is the umbrella stand",
    "Where is the laundry basket located?",
    "Where did I leave my headphones?",
    "Where did I put the scissors?",
    "Where did I drop my gloves?",
    "Where was my phone last?",
    "On which side of me is the fridge?",
    "Is the printer on my left or on my right?",
    "Which direction should I turn to see the window?",
    "Which way do I need to look to find the heater?",
    "In what direction is the front door from here?",
    "Is the wardrobe behind me?",
    "Is the fan in front of me or behind me?",
    "At what clock position is the armchair?",
    "What o'clock is the radiator at from my point of view?",
    "Can you tell me where the hair dryer is relative to me?",
    "I am trying to find my charger, where is it?",
    "Help me find the remote control.",
    "Where can I find the toolbox?",
    "Which side of me is the bookshelf on at the moment?",
    "Point me towards the coat hanger.",
    "If I want to look at the sofa, which way should I turn?",
    "Where would I have to face to see the oven?",
    "Tell me which direction the exit is.",
    "Is the bin to my right?",
    "where's the kettle",
    "Where are the spare batteries kept?",
    "Could you show me where the towel is?",
    "Where is the green folder now?",
    "Where is the tall lamp?",
    "Which way do I turn to face the bookshelf right now?",
    "Where is the microwave in relation to me?",
    "Is the couch ahead of me or behind me?",
    "Point me towards the fridge, please.",
    "From my point of view, where is the armchair?",
    "Tell me which direction the rubbish bin is in.",
    "Where would I find the radiator from here?",
    # the direction asked with a time phrase, indirectly, or as a clock hour
    "Where is the printer relative to me at the moment?",
    "Right now, which way is the laundry basket from where I stand?",
    "Is the mirror ahead of me, behind me or off to the side at this point?",
    "I am trying to work out where the heater is compared to me right now.",
    "Could you let me know which side of me the dresser is on currently?",
    "Which direction would I need to turn towards to face the sink at present?",
    "Where does the ironing board sit in relation to my current position?",
    "At what o'clock is the rug from me at this moment?",
    "Give me the clock position of the piano relative to me.",
    "In clock-face terms, where is the wardrobe right now?",
    "If twelve o'clock is straight ahead of me, what hour is the door at?",
    "Which hour on a clock would point towards the chest of drawers?",
    "Using the hours of a clock, tell me where the fan is from me.",
    "What clock direction is the guitar in from my position now?",
    "Whereabouts is the vacuum cleaner compared with where I am right now?",
    "Would I have to look left or right to see the bench at the moment?",
    "Relative to where I am standing now, where is the dishwasher?",
    "Where is the fish tank with respect to me right now?",
    "Do you know where the scale is in relation to me at the moment?",
    "Where exactly is the shoe rack from my current spot?",
    "Where is the kettle now, compared with my position?",
    "Looking from where I stand, where is the ottoman at this moment?",
)

SPEC = register(KindSpec(
    "ego_direction", "where X is relative to me now (side, direction, clock hour), or where I left X",
    PROTOTYPES, _CUES,
    options=frozenset({O.DIRECTION, O.CLOCK}), roles=Roles.OBJECT,
    phrases=PhraseRules(rooms_scope=True, asking_sentence=True, clock_frame=True, present=True),
    solvers=((P.EGO_DIRECTION, "ego_direction"),),
    needs_target=True, subtask="Ego-centric Position"))

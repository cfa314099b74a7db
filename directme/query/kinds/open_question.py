"""The ``open`` question kind: anything memory geometry cannot answer (attributes, states, functions, text, activities).

Its prototype sentences are written for this meaning, never copied from an evaluation set (the sentence
classifier compares questions with them, query/classify.py); its cue rules are registered from query/cues.py."""
from __future__ import annotations

from ..parsed import Primitive as P
from . import KindSpec, Roles, register
from ._rules import cues_of

PROTOTYPES = (
    # attributes: colour, shape, material, size, text
    "What color is the sofa?",
    "What colour are the curtains?",
    "What shape is the rug?",
    "What material is the table made of?",
    "What pattern is on the cushions?",
    "How big is the television?",
    "What is written on the sign?",
    "What does the label on the jar say?",
    "What time does the clock show?",
    "What brand is the laptop?",
    "Which language is the poster in?",
    "What is the title of the book on the desk?",
    # states
    "Is the window open?",
    "Is the oven turned on?",
    "Are the lights off?",
    "Is the sink clean?",
    "Is the fridge door closed?",
    "Is the bed made?",
    "Is the tap running?",
    "Is the laptop switched on or off?",
    "Is the trash can full?",
    "Is the glass empty?",
    # function, affordance, free space, advice
    "How can I make the room warmer?",
    "What can I use to cut the paper?",
    "Where can I sit down and read?",
    "Where could I charge my phone?",
    "How do I turn on the coffee machine?",
    "What should I use to clean the spill?",
    "Is there enough space on the desk for a monitor?",
    "Is there room in the cupboard for more plates?",
    "Would a suitcase fit beside the wardrobe?",
    "What is the fan used for?",
    "Where can I wash my hands?",
    "What can I cook with what is in the kitchen?",
    "What is the purpose of this device?",
    # world knowledge, identification
    "What kind of dog is that?",
    "What is the name of this building?",
    "Which city is this?",
    "What species of bird is on the fence?",
    "What dish is being served?",
    "Who is the person on the poster?",
    # third-person activities and events in a video
    "What is the man doing with the hammer?",
    "What is she cooking?",
    "What does the chef add next to the pan?",
    "Tell me when the girl starts dancing.",
    "Wait until he opens the box and tell me what is inside.",
    "Let me know when the bus arrives.",
    "What happens after the dog jumps into the water?",
    "Why did the woman laugh?",
    "How does the player react when he scores?",
    "What did the guide say about the statue?",
    "Describe what the people are doing in the park.",
    "Summarize the steps of the recipe.",
    "What is the next exercise the trainer shows?",
    "What did the host buy at the market?",
    "How many times did the presenter mention the price?",
    "What is the mood of the crowd at the concert?",
    "What does the app screen show after the update?",
    "Which setting did she change on the phone?",
    "What is the vlogger's opinion of the restaurant?",
    "What sound does the machine make?",
    "Is anyone sitting at the table?",
    "What is the weather like outside?",
    "Is the food fresh?",
    "What is shown in the painting?",
    "What is depicted on the poster?",
    "What is in the photograph on the wall?",
    "What does the artwork show?",
    "What is printed on the rug?",
)

SPEC = register(KindSpec("open", "anything memory geometry cannot answer (attributes, states, functions, text, activities)", PROTOTYPES,
                         cues_of("open"), roles=Roles.CORE, solvers=((P.OPEN, ""),), needs_target=False,
                         geometric=False))

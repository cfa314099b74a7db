"""Exact cue rules for the kind of a question: short patterns whose reading is not in doubt ("what
colour", "how far", "which side", "tell me when", "if I face X"), each a vote for a kind (query/kinds
registers them; query/calibrate.py turns the votes into a confidence), and the relation cues the parser applies once it knows whether a named landmark is an object or a
room (query/classify.py falls back to meaning when no rule decides)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class KindGuess:
    """A kind with its probability; ``how`` says what decided it ("rule:<name>" | "embedding" | "none")."""

    kind: str
    confidence: float
    how: str
    scores: tuple[tuple[str, float], ...] = ()  # embedding: (kind, probability), best first


def normalise_question(text: str) -> str:
    """Lower case, straight apostrophes, contractions spelled out, single spaces."""
    t = " ".join(text.lower().replace("’", "'").replace("`", "'").split())
    t = re.sub(r"\b(what|where|there|that|it|who|how|here)'?s\b", r"\1 is", t)
    t = re.sub(r"\bwhats\b", "what is", t)
    t = re.sub(r"\bi'?m\b", "i am", t)
    t = re.sub(r"\b(you|we|they)'re\b", r"\1 are", t)
    t = re.sub(r"\b(can)'?t\b|\bcannot\b", "can not", t)
    t = re.sub(r"\b(do|does|did|is|are|was|were|have|has|would|could|should)n'?t\b", r"\1 not", t)
    t = re.sub(r"\bi'?ve\b", "i have", t)
    t = re.sub(r"\b(one|which|this|who|something|everything|nothing|someone|direction|way|side|position|"
               r"location|room|place)'s\b", r"\1 is", t)  # "which one's nearer", "which direction's the cup"
    t = re.sub(r"\bwhere ?abouts (is|are|was|were)\b", r"where \1", t)  # "whereabouts is the cup": where
    # "I'd like to know" (would) but "after I'd left the kitchen" (had)
    t = re.sub(r"\b(i|you|we|they)'d (like|love|prefer|rather|be|say|guess|think|imagine|expect|want|need|appreciate|"
               r"have to)\b", r"\1 would \2", t)
    t = re.sub(r"\b(i|you|we|they)'d\b", r"\1 had", t)
    t = _as_me(t)
    t = re.sub(r"\b(?:just )?(?:prior|previous) to\b", "before", t)
    t = re.sub(r"^picture (me|myself|yourself|us)\b", r"imagine \1", t)  # "picture me turned towards the sofa"
    t = re.sub(r",? or (?:is it |"
               r"was it )?(?:the )?other way (?:a)?round\b", "", t)  # "is A closer than B, or the other way round"
    return t


# the wearer named in the third person ("relative to the camera wearer", "where did the user go"): me
_WEARER = r"(?:the |this )?(?:camera[ -]?wearer|wearer|camera[ -]?(?:user|person|holder|operator)|cameraman|user|" \
          r"person (?:wearing|holding|carrying) the camera)"
_WEARER_SUBS = (
    (re.compile(r"\b" + _WEARER + r"'s\b|\bthe camera's (?=(?:point of view|perspective|viewpoint|view|position|"
                r"location|heading|orientation|left|right|front|back)\b)"), "my "),
    (re.compile(r"\b(to|from|of|than|with|behind|for|by|near|around|toward|towards|beside|about|at) " + _WEARER + r"\b"),
     r"\1 me"),
    (re.compile(r"\b" + _WEARER + r"\b(?= (?:is|was|were|am|are|has|had|have|did|does|do|go|goes|went|walk\w*|mov\w*|"
                r"enter\w*|leav\w*|left|come|came|head\w*|turn\w*|stand\w*|stood|fac\w*|look\w*|in|at|currently|now|"
                r"first|last|just|then|can|could|would|will|should|need|needs)\b)"), "i"),
    (re.compile(r"\b" + _WEARER + r"\b"), "me"),
    (re.compile(r"\b(can|could|would|will|should|did|does|do|was|were|has|have|had|may|might|must) me\b"), r"\1 i"),
    (re.compile(r"\bi is\b"), "i am"), (re.compile(r"\bis i\b"), "am i"), (re.compile(r"\bi has\b"), "i have"),
    (re.compile(r"\bhas i\b"), "have i"), (re.compile(r"\bdoes i\b"), "do i"), (re.compile(r"\bi does\b"), "i do"),
)


def _as_me(t: str) -> str:
    if not re.search(r"wearer|user|camera|cameraman", t):
        return t
    for pattern, sub in _WEARER_SUBS:
        t = pattern.sub(sub, t)
    return " ".join(t.split())


_REL = (r"(?:to the (?:left|right)(?: hand side| side)? of|on the (?:left|right)(?: hand side| side)? of|(?:left|right) of|"
        r"in front of|behind|on top of|on|onto|under|underneath|beneath|below|above|over|next to|beside|by|near|"
        r"between|in between|across from|opposite(?: to| of)?|inside(?: of)?|in|within|at the (?:back|front|bottom|top) of|"
        r"in the (?:center|centre|middle|corner) of|against|around|atop)")
# "did I move on to", "after I moved into the kitchen": the wearer moving, not an object
_NOT_SELF = r"(?! (?:on|onto|to|into|in to|over|through|along|off|out of|away from|back|next|around|about|across)\b)"
# "describe where the cup is", "explain which way the door is": a place asked for, not a description
_NOT_WHERE = (r"(?! (?:to me |for me )?(?:where|which (?:way|side|direction)|in which direction|how far))"
              r"(?![^?.;]*\b(?:(?:from|relative to|in relation to|with respect to|compared to) (?:me|my|where i)\b|"
              r"o'?clock\b|clock (?:hours?|positions?|directions?|face|terms)\b))"
              # "describe the position of the cup", "describe the cup's position": where it is
              r"(?![^?.;]*\b(?:(?:position|location|direction|whereabouts|bearing) of (?:the|my|a|an)|"
              r"'s (?:position|location|direction|whereabouts|bearing))\b)")
# "where should I be looking if I want to see the cup", "where do I turn to find the cup": a direction to an object
_LOOK_FOR = (r"(?:be )?(?:look|looking|turn|turning|face|facing)(?: (?:to|in order to) (?:see|find|spot|face|look at)| for|"
             r" if (?:i|we) (?:want|wanted|need|needed) to (?:see|find|spot|face|look at|get to))? (?:the|my|a|an|that|this)\b")
# "where did the cup end up relative to me": a direction from the wearer, not a room
_NOT_FROM_ME = r"(?![^?]*\b(?:(?:relative|compared|in relation|with respect) to|from) (?:me|you|us|my|where i)\b)"
# "how do I get to the cup from here": the way to an object, not how to do something
_GET_TO = r"(?:get|walk|go|head|make my way|find my way) (?:over |back |across )?to (?:the|my|that|this)\b"
# "how would I need to turn to face the cup": which way to turn is asked, not how to do something
_NOT_TURNING = r"(?![^?]*\bturn(?:ed|ing|s)? (?:(?:my (?:head|body)|myself|(?:a)?round) )?(?:to(?:wards?)? |left\b|right\b))" \
    r"(?! (?:(?:i|we|you) )?" + _GET_TO + r")"
# "my current position", "where I am standing": the wearer's own place as a frame of reference
_MY_SPOT = (r"my (?:current |present |own |exact )?(?:position|location|spot|place|standpoint|vantage point|heading|"
            r"orientation|line of sight|field of view|body)|the (?:way|direction) i am (?:facing|looking|pointing|headed)|"
            r"where i am (?:facing|looking|pointing)|the (?:centre|center|middle) of my (?:view|field of view|vision|"
            r"gaze)|"
            r"where i (?:am|stand|am standing|am now|currently am|am right now|happen to be)")
_STATE = (r"(?:open|opened|closed|shut|lit|unlit|clean|cleaned|dirty|messy|tidy|empty|full|filled|locked|unlocked|"
          r"broken|damaged|wet|dry|running|working|plugged in|unplugged|charging|occupied|vacant|made|folded|"
          r"(?:turned|switched) (?:on|off)|on or off|off or on|open or closed|closed or open|full or empty|"
          r"empty or full|ajar|on fire|boiling|cooked|ripe)")

# (kind, rule name, pattern) in order; query/kinds registers them with these priorities (the first that matches
# decides).
_CUES: tuple[tuple[str, str, str], ...] = (
    # --- what memory geometry cannot answer
    ("open", "attribute", r"\b(?:what|which)\b[^?.]*\bcolou?rs?\b|\bcolou?rs? (?:is|are|of)\b|"
                                r"\b(?:what|which) (?:is |are )?(?:the )?(?:colou?rs?|shapes?|materials?|patterns?|"
                                r"textures?|brand|fabric|font|shade|design|style)\b|\bmade (?:of|from|out of)\b|"
                                r"\bwhat colou?r\b|\bhow (?:big|large|small|tall|wide|heavy|old|thick|deep|bright)\b"),
    ("open", "text", r"\b(?:written|writing|inscribed|printed|says|reads|spelled|spelt|logo|caption|headline|"
                          r"subtitle)\b|\bwhat (?:does|do|did) (?:it|the [\w']+(?: [\w']+){0,2}|this|that|they|he|she) (?:say|read|show|"
                          r"display|mean|indicate)\b|\bwhat (?:day|date|year|temperature|language)\b|"
                          r"\bnames? of\b(?! (?:the |that |this )?(?:room|place)s?\b)|\bwhat (?:is|are) (?:the |its |his |her |their )?names?\b|\bcalled\b|^who\b|"
                          r"\bwho (?:is|are|was|were|did|does)\b|\bwhose\b|\bletters?\b|\bnumbering\b"),
    # "what time is it" (not "what time on a clock": unless a clock is the answer's frame, see _UNLESS)
    ("open", "time_of_day", r"\bwhat time(?! (?:on|of|in terms of) (?:a|the) clock\b)\b"),
    ("open", "state", r"^(?:is|are|was|were|has|have)\b(?! there\b)(?!.*\b(?:reach|closer|nearer|farther|further)\b).*\b"
                           + _STATE + r"\b"),
    ("open", "state_on_off", r"^(?:is|are|was|were)\b.* (?:on|off)\s*[?.!]*$|(?<!that )(?<!which )\b(?:is|are|was|were|gets?|got) "
                                  r"(?:switched|turned|toggled) (?:on|off)\b"),
    ("open", "how_to", r"(?:\bhow (?:can|could|do|does|should|would|might|to|will) (?:i|we|you|one|a person|someone|"
                            r"people)\b|^how (?:can|could|do|should|would|to)\b)" + _NOT_TURNING),
    # --- an imagined viewpoint ("if I face the sofa, which side ...")
    ("relative_position", "viewpoint", r"(?:\b(?:if|suppose|supposing|imagine|assuming|say|when)\b|\bonce (?:i|you|we)\b|\bwere (?:i|"
                                             r"you|we) to\b)(?! (?:i|you|we) (?:want|need|wanted|needed|would like) to)"
                                             r"[^?]*\b(?:face|facing|faced|sit|sitting|sat|stand|standing|stood|lie|"
                                             r"lying|look(?:ed|ing|s)? (?:straight |directly |right )?at|seated|"
                                             r"turn(?:ed|s)? (?:(?:a)?round )?(?:towards?|to look at|to(?= (?:the|a|an|my) )))\b"
                                             r"(?! (?:towards? )?(?:twelve|12|noon|straight|ahead|forwards?)\b)|^(?:facing|face|turned to face|"
                                             r"turning to face)(?: towards?| at)? (?:the|a|an|my)\b|"
                                             r"^with (?:the|a|an|my) [^,;?]*?in front of (?:me|you|us)\b"),
    ("open", "affordance", r"\bwhere (?:can|could|should|might|may) (?:i|we|you|one|a person|someone|"
                                r"people|the \w+|an? \w+)\b(?! (?:find|locate|spot|look for|see|get to) (?:the|my|a|an|"
                                r"that|this|some|our|your)\b)(?! " + _LOOK_FOR + r")"),
    ("open", "use", r"\bwhat (?:can|could|should|would|might|do) (?:i|we|you|one|a person)\b(?! (?:see|find)\b)|"
                         r"\bwhat (?:can|could) be used\b|\bused (?:for|to)\b(?! be\b)|\b(?:purpose|function|use) of\b|"
                         r"\b(?:something|anything) (?:i|we|you) (?:can|could) use\b|\bcan (?:i|we|you) use\b|"
                         r"\bwhat (?:is|are) (?:the |this |that )?\w+(?: \w+)? (?:for|used for)\s*[?.!]*$"),
    ("open", "free_space", r"\bis there (?:enough |any |some |more |still )?(?:free |empty |open )?(?:room|space)\b|"
                                r"\benough (?:room|space)\b|\b(?:free|empty|available) (?:space|spot)\b|"
                                r"\b(?:enough|free|some|any|more|no|much|little|the|there|of) (?:room|space) (?:for|"
                                r"to (?:hang|put|sit|store|keep|place|work|fit|stand|move|add|walk|lie|park))\b|"
                                r"^(?![^?]*\b(?:direction|position|bearing)\b)(?:can|could|would|will) (?:i|we|you|one|a person|someone|"
                                r"somebody|it) (?:put|fit|keep|store|place|hang|stand|sit|lie|park|add|cook|watch|"
                                r"make|charge|eat|sleep|wash|work(?! out)|play|read|use|plug|hide)\b"),
    ("open", "event", r"\b(?:tell me|let me know|notify me|alert me|remind me) (?:when|as soon as|once)\b|"
                           r"\bwait (?:until|till|for)\b|"
                           r"^(?:describe|summari[sz]e|explain|list|name|identify|compare)\b" + _NOT_WHERE + r"|"
                           r"\b(?:describe|summari[sz]e)\b" + _NOT_WHERE + r"|"
                           r"^why\b|\bwhy (?:is|are|does|do|did|was|were|would|has|have)\b|\bwhat happen(?:s|ed)?\b|"
                           r"\b(?:video|scene|clip|footage|vlog\w*|episode|tutorial)\b|"
                           # events in a video: "what dramatic action occurs", "what event prompts"
                           r"\b(?:occurs?|occurred|occurring|takes place|took place)\b|\bwhat (?:events?|actions?)\b"),
    ("open", "people", r"\b(?:he|she|his|her|hers|him)\b|\b(?:anyone|anybody|someone|somebody) "
                             r"(?:living|live|lives|sitting|sleeping|using|working|home|inside|there|here)\b|"
                             r"\bis (?:anyone|anybody|someone|somebody)\b|\b(?:doing|performing|cooking|dancing|singing|"
                             r"playing|eating|drinking|saying|speaking|talking|wearing|reacting|buying|bought|"
                             r"purchased?|preparing|demonstrat\w+|mention\w*|introduc\w+|recommend\w*|perform\w*)\b"),
    ("open", "reasoning", r"\b(?:could|might|would) (?:you|i|we|one) (?:possibly|probably|likely|typically|"
                                r"usually|normally)\b|\b(?:possibly|typically|expect to find|inferr?(?:ed)?|infer|"
                                r"conclude\w*|implies|imply|according to|based on|opinion|reasons?|similarit(?:y|ies)|in common|"
                                r"common (?:elements?|features?|themes?|factors?|threads?))\b|"
                                r"\bwhat (?:information|message|details?|instructions?|steps?|ingredients?)\b|"
                                r"\bwhat (?:is|are|was|were) the (?:\w+ )?(?:steps?|stages?|phases?)\b"),
    ("open", "third_party", r"\b(?:what|how|why|when|which|where)\b(?: \w+){0,3} (?:does|did|do) (?:the|a|an|this|"
                                  r"that|these|those) (?:\w+ ){0,3}?(?:add|adds|use(?! to (?:be|sit|stand|live|lie|stay|go)\b)|say|do|make|show|buy|cook|prepare|"
                                  r"wear|hold|eat|drink|play|perform|mention|recommend|demonstrate|explain|describe|"
                                  r"try|want|need|like|think|feel|react|sound|mean|offer|give|introduce|order|choose|"
                                  r"display|present|sell|teach|ask|answer|suggest|plan|decide|finish|start(?! (?:out|off)\b)|begin|"
                                  r"do next|look like)\b"),
    ("open", "knowledge", r"\bwhat (?:kind|type|sort|species|breed|model|make|genre|variety) of\b(?! (?:rooms?|"
                                r"places?|locations?|buildings?|areas?|spaces?|shops?|stores?|venues?|objects?|things?|"
                                r"items?|furniture)\b)|\b(?:which|what) (?:city|country|language|brand|species|breed|song|"
                                r"company|team|dish|cuisine|sport|model|genre|style)\b|\bhow many times\b|"
                                r"\b(?:which|what) (?:\w+ ){1,2}(?:brand|model|genre|species|breed|language|cuisine|company)\b"),
    # --- my own movement (before object movement and places: "which room was I in")
    ("my_trajectory", "my_route", r"\b(?:which|what) (?:rooms?|places?|areas?) (?:was|were|did|have|had) (?:i|we)\b"
                                        r"(?! (?:take|took|bring|brought|carry|carried|move|moved|put|leave|left|drop|dropped|place|placed|"
                                        r"set|pick|picked|grab|grabbed|get|got|fetch|fetched|collect|collected|remove|"
                                        r"removed) (?:the|my|a|an|this|that|it|our|your)\b)|"
                                        r"\bwhere (?:i|we) (?:was|were|had been)\b|"
                                        r"\bwhere (?:was|were) (?:i|we)\b|\bwhere had (?:i|we) (?:been|gone|come from|walked)\b|"
                                        r"\bwhere did (?:i|we) (?:come from|go|walk|"
                                        r"head|end up|start|begin|enter)\b|\bwhere have (?:i|we) (?:been|gone|walked)\b|"
                                        r"\bhow did (?:i|we) (?:get|go|walk|come)\b|\bmy (?:next|last|previous|first|final) (?:stop|destination|"
                                        r"port of call)\b|\bmy (?:path|route|trajectory|walk|"
                                        r"movements?)\b|\b(?:path|route|way) (?:did|have|had) (?:i|we) (?:take|taken|"
                                        r"walk|walked|follow|followed)\b|\bin what order did (?:i|we)\b|"
                                        r"\bhow (?:far|much|long) (?:have|did|had) (?:i|we) (?:walk|walked|go|gone|went|"
                                        r"travel\w*|come|move|moved)\b|\bhow many rooms (?:did|have) (?:i|we)\b|"
                                        r"\bhow many (?:meters|metres|steps|feet|km|kilometres|kilometers|miles|yards) "
                                        r"(?:have|did|had) (?:i|we)\b|\b(?:what|which) distance (?:have|did|"
                                        r"had) (?:i|we)\b|"
                                        r"\b(?:which|what) (?:room|place) did (?:i|we) (?:walk|go|come|enter|pass)\b|"
                                        r"\bwhat was the (?:last|first|previous) (?:room|place)\b|"
                                        r"\bdid (?:i|we) (?:pass|walk|go) (?:through|by|into)\b"),
    # "am I back where I started": a yes / no on my path
    ("my_trajectory", "back_at_start", r"\bback (?:to |at |near )?(?:where|the (?:place|spot) where) (?:i|we) (?:started|"
                                       r"began)\b|\b(?:returned|come back|got back|gone back) to (?:where (?:i|we) "
                                       r"(?:started|began)|(?:my|our|the) (?:starting point|start(?:ing)? (?:spot|place)))\b"),
    # --- object movement
    ("object_trajectory", "moved", r"\b(?:before|after|since) (?:i|you|we|someone|somebody|anyone) (?:moved|"
                                         r"picked|took|carried|grabbed|lifted|removed|relocated|brought|shifted|fetched|"
                                         r"collected)\b|"
                                         r"\b(?:before|after|since) (?:me |my |you |your )?(?:moving|carrying|picking|"
                                         r"taking|grabbing|lifting|relocating|bringing|shifting)\b|"
                                         r"\b(?:which|what) (?:room|place) (?:did )?(?:i|we) (?:take|took|bring|"
                                         r"brought|carry|carried|move|moved|"
                                         r"pick|picked|grab|grabbed|fetch|fetched|collect|collected|remove|removed|put|"
                                         r"set|place|placed|drop|dropped)\b|"
                                         r"\b(?:which|what) (?:room|place)\b[^?]*\b(?:put|set|place|placed|drop|"
                                         r"dropped|leave|"
                                         r"left) (?:it|them)\b|\b(?:room|place) (?:where|that|which) (?:i|"
                                         r"we) (?:left|put|"
                                         r"placed|set|dropped|took|brought|carried|moved) (?:the|my|a|an|it|"
                                         r"them|our)\b|"
                                         r"\b(?:which|what) (?:room|place) (?:did|has|have|had) (?:the|my|our|that|this) (?:\w+ ){1,3}(?:go|gone|end(?:ed)? "
                                         r"up|been moved|been taken|land|landed)\b|"
                                         r"\bwhere did (?:i|we) (?:take|bring|carry|move)\b" + _NOT_SELF + r"|\bwhere (?:i|"
                                         r"we) (?:took|brought|carried|moved|"
                                         r"relocated) (?:the|my|a|an|it|them|our)\b|"
                                         r"\bwhere (?:did|has|have) (?:the|my|our) (?:\w+ ){1,3}(?:go|gone|end up|ended "
                                         r"up|been moved|been taken)\b" + _NOT_FROM_ME + r"|\b(?:path|trajectory|movement|route) of (?:the|"
                                         r"my)\b|\b(?:has|have|was|were) (?:the|my|our) (?:\w+ ){1,3}(?:been )?(?:moved|"
                                         r"relocated|displaced|carried away|taken away)\b|\bdid (?:i|you|we|anyone|"
                                         r"someone|somebody) (?:move|relocate|carry)\b" + _NOT_SELF + r"|\b(?:moved|relocated|displaced)\b" +
                                         _NOT_SELF + r"|"
                                         r"\bstill where it was\b|\bchange(?:d)? (?:place|position|location)\b"),
    # --- "what is on / between / left of Y" (a superlative later in it is not a distance question)
    ("relative_position", "what_relation", r"^(?:so |and |ok |okay |now )?what(?: is| are| was| were)?(?: \w+)?"
                                                r"(?: (?:located|placed|hanging|sitting|lying|standing|leaning|mounted|"
                                                r"attached|kept|stored|displayed|stacked|positioned|resting|set|found|"
                                                r"visible|there))?(?: (?:directly|right|just|immediately|exactly))? "
                                                r"(?:in between|between|to the (?:left|right)(?: hand side| side)? of|"
                                                r"in the (?:center|centre|middle|corner) of|"
                                                r"on the (?:left|right)(?: hand side| side)? of|(?:left|right) of|"
                                                r"in front of|behind|on top of|under|underneath|beneath|below|above|"
                                                r"next to|beside|across from|opposite)\b"),
    # --- distances (my walk is above; "how far is X")
    ("distance_compare", "closer_distance", r"\b(?:shorter|smaller|lesser|greater|larger|bigger|longer) "
                                                  r"distance\b|\b(?:less|more|shorter|longer|quicker|smaller|"
                                                  r"bigger|longer) (?:of a )?(?:walk|trip|stroll|way to go)\b|"
                                                  r"\btakes? (?:me |us )?(?:longer|less time|more time|the "
                                                  r"(?:longest|shortest|least time|most time)) to (?:walk|get|reach|"
                                                  r"go)\b|\b(?:reach|get to|arrive at|come to|walk to) (?:first|"
                                                  r"sooner|quicker|faster|last)\b"),
    ("distance", "how_far", r"\bhow far\b|\b(?:what is|tell me) the distance\b|\bdistance (?:between|from|to)\b|"
                                  r"\bhow many (?:meters|metres|feet|foot|steps|yards|m|cm|centimeters|centimetres|inches|"
                                  r"paces)\b|\bhow close (?:am i|is|are|was|were)\b|\bhow near\b|\bhow far apart\b"),
    ("distance_compare", "closer", r"\b(?:closer|nearer|closest|nearest|farther|further|farthest|furthest|"
                                         r"more distant|less distant|most distant|less far|least far|more far|"
                                         r"most far|further off|farther off)\b|"
                                         r"\b(?:shortest|shorter|longest|longer) "
                                         r"(?:walk|way to go|trip)\b"),
    ("reachability", "reach", r"\b(?:can|could) (?:i|you|we) (?:still )?(?:reach|touch|grab|get hold of)\b|"
                                    r"\b(?:i|you|we) (?:can|could) (?:still )?(?:reach|touch|grab|get hold of)\b|"
                                    r"\bwithin (?:my |your |arm'?s?'? )?reach\b|\barm'?s?'? (?:length|reach)\b|"
                                    r"\b(?:reachable|out of reach|in reach|within reach)\b|\bwithout (?:moving|walking|"
                                    r"getting up|standing up|taking a step|stepping|leaning)\b|\bclose enough (?:for me )?"
                                    r"to (?:reach|touch|grab|pick)\b|\bable to (?:reach|touch|grab)\b"),
    # --- where X is for me
    ("ego_direction", "ego_words", r"\b(?:which|what) side\b(?! of (?:the|a|an|my|this|that|his|her)\b)|\bo'?clock\b|"
                                         # "the cup, left side or right side?" (no other object named as a frame)
                                         r"^(?![^?]*\b(?:from|relative to|of) (?:the|a|an|this|that)\b)[^?]*\b(?:left|right)"
                                         r"(?: hand)?(?: side)? or (?:on |to )?(?:the |my )?(?:left|right)\b|"
                                         r"\b(?:which|what) direction\b|\bwhich way\b|\b(?:do|would|will|should|must) (?:i|we) (?:need to |have to )?turn (?:left|right|"
                                         r"(?:a)?round)\b|"
                                         r"\b(?:to|on|at) (?:my|your) (?:left|right|back|rear|side)\b|\b(?:my|your) (?:left|right) shoulder\b|\bwhich shoulder\b|\b(?:which|what) side of (?:me|my body|myself)\b|"
                                         r"\b(?:number|numeral|hour|digit)s? (?:on|of) (?:the|a|my|an imaginary) clock\b|\b(?:my|your) back (?:is )?(?:to|towards?) "
                                         r"(?:the|my|a|an|that|this)\b|\b(?:in|within|out of) (?:my|your) (?:line of sight|"
                                         r"field of view)\b|\bwhere am i (?:in relation|relative|compared|with respect) to "
                                         r"(?:the|a|an|my|this|that)\b|"
                                         r"\b(?:to|on|at) the (?:left|right|front|back|rear)(?: hand side| side)? of "
                                         r"(?:me|you|us)\b|\b(?:ahead of|off to the side of) (?:me|you|us)\b|"
                                         r"\bdirection (?:of|to|towards) (?:the|my|a|an|that|this)\b(?![^?]*\b(?:from|"
                                         r"relative to|in relation to|compared to|with respect to) (?:the|a|an|this|that)\b)|"
                                         r"\bdirection (?:i|we) (?:would |will |should |must |had |could )?(?:need to |have to |"
                                         r"want to )?(?:walk|go|head|turn|look|face|move)\b|"
                                         r"\b(?:how|where|what way) (?:\w+ ){0,4}?turn\w* (?:(?:my (?:head|body)|myself|"
                                         r"(?:a)?round) )?(?:to (?:be )?(?:face|facing|see|look at|spot|get to)|towards?) "
                                         r"(?:the|my|a|an|that|this)\b|"
                                         r"\bbehind (?:me|you|us)\b|\bin front of (?:me|you|us)\b|\bam i facing\b|"
                                         r"\b(?:relative|compared|in relation|with respect|with regard|in respect) to "
                                         r"(?:me|you|us|" + _MY_SPOT + r")\b|"
                                         r"\bfrom (?:my (?:point of view|perspective|viewpoint|vantage point|"
                                         r"standpoint)|" + _MY_SPOT + r")\b|"
                                         r"\bfrom (?:me|here|where i am)\b|\bclock (?:direction|position|hour|face|dial|"
                                         r"terms?|notation|reading|numbers?)s?\b|\b(?:which|what) (?:clock )?hour "
                                         r"(?:is|are|would|will|does|do)\b(?! it\b)"),
    ("ego_direction", "find", r"\b(?:help me find|help me locate|(?:i am|am) (?:looking|searching) for|i (?:need|want|"
                                   r"have) to find|i can not find|i lost|point me (?:to|towards)|show me where|"
                                   r"where (?:can|could|would|might|do|should) (?:i|we) (?:find|locate|spot|look for|see|"
                                   r"get to)|where did (?:i|we) (?:leave|left|put|place|drop|dropped|keep|kept|store|"
                                   r"stored|hide|hid|last see|see|set|lose|lost|misplace\w*)|"
                                   r"\bhow (?:do|can|could|would|should) (?:i|we) " + _GET_TO + r"|where (?:should|do|would|must|can|could) (?:i|we) "
                                   + _LOOK_FOR + r")"),
)
# a clock as the frame of an answer, not an object to read: "imagine a clock", "clock face", "12 straight ahead"
_CLOCK_AS_FRAME = re.compile(r"\b(?:imagine|imagining|picture|picturing|think of|thinking of|using|use) (?:a|the|an "
                             r"imaginary) clock\b|\bclock[- ](?:system|method|positions?|directions?|terms|hours?)\b|\b(?:12|twelve)(?: o'clock)? (?:is |being |as |at )?(?:straight |dead |"
                             r"directly |right )?(?:ahead|in front)\b|\bo'?clock\b")
_SIDE_OF_ME = re.compile(r"\b(?:which|what) side of (?:me|my body|myself)\b")
# rule name -> a pattern that vetoes it ("if I imagine a clock with 12 straight ahead, what time does the cup sit
# at": a clock hour; "what side of my body is the cup closest to": a side of me)
_UNLESS = {"time_of_day": _CLOCK_AS_FRAME.pattern, "closer": _SIDE_OF_ME.pattern}

_WHERE_RE = re.compile(r"\bwhere (?:is|are|was|were|do (?:i|we|you) keep)\b|"
                       r"\bwhere (?:would|will|could|might|should|must) (?:the|my|that|this) [^?.,;]*? be\b|"  # and indirect: "where would you say the cup is"
                       r"\bwhere (?:(?:would|do|does|did|will) (?:you|one) (?:say|think|reckon|guess|suppose|imagine) )?"
                       r"(?:the|my|a|an|this|that|these|those|our|your) [^?.,;]*?(?:is|are|was|were)\b")
_RELATIVE_TO_RE = re.compile(r"\b(?:relative to|in relation to|compared to|with respect to|from the perspective of) "
                             r"(?:the|a|an|my|this|that)\b")
_WH_START = re.compile(r"^(?:so |and |ok |okay |hey |please |now )?(?:what|which|whats)\b")
_EXIST_RE = re.compile(r"^(?:is|are|was|were) (?:there|anything|something|any \w+|some \w+)\b|\bis there\b|\bare there\b")
_BINARY_RE = re.compile(r"^(?:is|are|was|were)\b")
_COUNT_CHANGE_RE = re.compile(r"\bhow many\b.*\b(?:still|left|remain\w*|anymore|any more|more|fewer|less|changed?|"
                              r"added|removed|taken away|than before|compared|difference|now that|gone)\b|"
                              r"\b(?:increase|decrease|change)\w* in the number\b|\bnumber of .* (?:changed?|increase|"
                              r"decrease)|\b(?:fewer|more) \w+(?: \w+)? (?:than|now than)\b")
_COUNT_RE = re.compile(r"\bhow many\b|\bnumber of\b|^count\b|\bcount(?:ing)? (?:up )?(?:the|all|how|of|every)\b|"
                       r"\b(?:total|overall|full|exact|current) count\b|\btally\b")
_RECALL_RE = re.compile(r"\b(?:have|has|had|did) (?:i|you|we) (?:ever )?(?:see|seen|saw|notice|noticed|spot|spotted|"
                        r"come across|came across|pass|passed|encounter|encountered|observe|observed)\b|"
                        r"\bwhich (?:one |ones )?(?:of (?:the|these|those) )?(?:objects?|items?|things?)\b.*\b(?:see|"
                        r"saw|seen|appear\w*|present|observed|notice\w*|come across|came across|(?:show\w*|turn\w*) "
                        r"up|spotted|encountered)\b|\bwhich (?:one |ones )?of (?:the following|"
                        r"these|those)\b|\bwhat did (?:i|you|we) see\b|\bwhat (?:objects?|things?|items?|furniture|"
                        r"kinds? of (?:objects?|things?|items?)|types? of (?:objects?|things?|items?)) (?:are|were|did|"
                        r"is|was|do)\b|\b(?:come|came) across\b")
_PLACE_RE = re.compile(r"\b(?:which|what) (?:room|floor|level|storey|story|part of the (?:house|apartment|building|flat))"
                       r" (?:is|are|was|were|has|contains|holds|do|does)\b(?!.*\b(?:i|we)\b)|"
                       r"\bin (?:which|what) (?:room|place|part of the \w+)\b(?!.*\b(?:i|we)\b)|"
                       r"\b(?:which|what) (?:room|floor|place) (?:am i|are we)\b|\bwhere am i\b|\bwhere are we\b|"
                       r"\bwhat (?:kind|type|sort) of (?:room|place|location|building|area|space|shop|store|venue)\b|"
                       r"\bwhat is this (?:place|location|room|building|area)\b|\bwhat (?:place|room|location) is "
                       r"(?:this|it|that)\b|\bon (?:which|what) (?:floor|level|storey)\b|\b(?:which|what) floor\b|"
                       r"\b(?:which|what) room (?:has|contains|holds)\b|\bwhich room would\b")


def relation_cue(text: str, has_reference: bool, reference_is_place: bool) -> Optional[KindGuess]:
    """"What is on / under / left of Y?", "Is X on Y?", "Is there X on Y?": a relation to a named
    landmark (decided by the parser, which knows whether Y is an object or a room)."""
    if not has_reference:
        return None
    if reference_is_place:  # "what is in the kitchen", "are there towels in the bathroom"
        if _WH_START.search(text) or _EXIST_RE.search(text):
            return KindGuess("category_recall", 1.0, "rule:in_place")
        return None
    if re.search(r"^(?:so |and |ok |okay |now )?(?:what|which|whats)\b[^?]*?\b" + _REL + r"\b", text) or \
            _EXIST_RE.search(text) or _BINARY_RE.search(text):
        return KindGuess("relative_position", 1.0, "rule:relation")
    return None

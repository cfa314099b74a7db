"""The geometric answerer's settings in sections (metres, degrees, probabilities; frozen so its answers are
fixed): every tuning constant of its solvers, with a one-line doc each. Given as the answerer's ``options``
(``answerer: {name: geometric, options: {counting: {duplicate_radius_m: 0.5}}}``) and read back as
``AgentConfig.answerer.geometric``. Most values are round guesses, not fitted to data; docs/agent.md says which
were measured."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InvalidInputError
from ..query.parsed import MIN_PARSE_CONFIDENCE
from ..validation import check_section, parse_options
from .counting import PutDownLink


@dataclass(frozen=True)
class ScoringConfig:
    """How well each option fits what memory says (prediction.score_options), before normalising."""

    direction_sigma_deg: float = 18.0  # a direction option fits by a Gaussian of the angle it is off, this wide
    clock_sigma_deg: float = 12.0  # ... this wide for a clock-hour option
    metres_sigma_min_m: float = 0.3  # a distance option fits by a Gaussian at least this wide ...
    metres_sigma_frac: float = 0.25  # ... or this share of the distance memory says, when that is wider
    count_off_decay: float = 2.0  # a count option off memory's count distribution fits by exp(-this x abs(off)) ...
    count_off_weight: float = 1e-3  # ... times this (added to its probability: the nearest wins only off the pmf)
    number_sigma_frac: float = 0.15  # a numeric option (a size, an area) fits by a Gaussian this share of memory's value wide
    score_floor: float = 1e-4  # added to every option's fit before normalising (no option has probability 0)
    mismatch_below: float = 1e-3  # no option fits better than this: answered at confidence 0, flag options_mismatch

    def __post_init__(self) -> None:
        check_section(self, "scoring", positive=("direction_sigma_deg", "clock_sigma_deg", "metres_sigma_min_m",
                                                 "number_sigma_frac", "score_floor"),
                      non_negative=("metres_sigma_frac", "count_off_decay", "count_off_weight", "mismatch_below"))


@dataclass(frozen=True)
class MetricConfig:
    """Distances from the wearer or a reference: "which is closer", "the nearest X", "can I reach it"."""

    compare_scale_m: float = 0.1  # "which is closer": each this many metres nearer adds 1 to an object's log-odds
    extreme_scale_min_m: float = 0.3  # "the closest X": an object's score falls by e per max(this, compare_scale_m) m
    unseen_logit_gap: float = 50.0  # "which is closer": a compared object not in memory, this far below the others
    reach_scale_m: float = 0.05  # "can I reach it": width of the yes/no boundary at arm's reach (logistic scale)
    nearest_min_obs: int = 2  # a named object means its instance nearest the wearer; one seen less often is in doubt
    doubt_m: float = 10.0  # each doubt about an instance (seen less often; believed gone) counts as this many m farther

    def __post_init__(self) -> None:
        check_section(self, "metric", positive=("compare_scale_m", "reach_scale_m"), at_least_one=("nearest_min_obs",),
                      non_negative=("extreme_scale_min_m", "unseen_logit_gap", "doubt_m"))


@dataclass(frozen=True)
class CountingConfig:
    """Counts with uncertainty (counting.py): which nodes count, and how sure a count is said."""

    min_obs: int = 1  # a node seen in fewer frames is not counted
    duplicate_radius_m: float = 0.4  # nodes of the class closer than this are one object seen twice: counted once
    sure_p: float = 0.95  # a count this likely is said plainly; below, with its expectation
    label_vote_logodds: float = 3.0  # one unit of label vote adds this to its label's log-odds
    min_similarity: float = 0.8  # a label matched by meaning alone (embedding) must be this close to be counted
    min_p: float = 0.02  # a node less likely than this to be a present object of the class is left out

    def __post_init__(self) -> None:
        check_section(self, "counting", at_least_one=("min_obs",), unit=("sure_p", "min_similarity", "min_p"),
                      non_negative=("duplicate_radius_m", "label_vote_logodds"))


@dataclass(frozen=True)
class CoverageConfig:
    """How sure an absence is ("0 chairs", "did I see a cup? no"): coverage.py."""

    view_hfov_deg: float = 70.0  # the camera's horizontal field of view assumed (memory keeps no intrinsics)
    absent_prior: float = 0.5  # the chance the object is in what was not looked at (an untuned guess)

    def __post_init__(self) -> None:
        check_section(self, "coverage", positive=("view_hfov_deg",), unit=("absent_prior",))


@dataclass(frozen=True)
class RecallConfig:
    """"Which of these did I see?" (recall.py)."""

    sightings_scale: float = 6.0  # an object's score is 1 - exp(-sightings / this) (label-share weighted)

    def __post_init__(self) -> None:
        check_section(self, "recall", positive=("sightings_scale",))


@dataclass(frozen=True)
class RelationConfig:
    """"What is left of / on / in / between / opposite the Y?" (around.py), in the wearer's orientation."""

    near_m: float = 1.2  # "next to", "near", "by": at most this far from the reference (ground)
    side_range_m: float = 2.5  # "left of", "behind": at most this far from the reference (ground) ...
    side_half_angle_deg: float = 45.0  # ... within this angle of that side's direction, and beyond its half size
    default_half_size_m: float = 0.3  # a reference without a known extent: its half size (ground)
    between_margin: float = 0.1  # "between": at least this share of the way from either end ...
    between_off_min_m: float = 0.5  # ... and off the line at most max(this, between_off_frac x its length)
    between_off_frac: float = 0.25  # (see between_off_min_m)
    on_min_rise_m: float = 0.02  # "on", "above": at least this much higher than the reference ("under": lower) ...
    on_range_min_m: float = 0.35  # ... within max(this, half size + on_range_margin_m) of it on the ground ...
    on_range_margin_m: float = 0.1  # (see on_range_min_m)
    on_max_rise_m: float = 1.5  # ... and at most this far above (below)
    in_range_min_m: float = 0.3  # "in", "at": within max(this, half size) on the ground ...
    in_max_height_m: float = 0.6  # ... and at most this far above or below
    opposite_min_m: float = 1.5  # "opposite": at least max(this, the reference's size) away ...
    opposite_half_angle_deg: float = 35.0  # ... within this angle of the reference's open side ...
    open_side_radius_m: float = 3.0  # ... which is where the wearer stood within this of the reference
    rank_decay: float = 0.3  # the objects found, nearest first: the k-th scores 1 / (1 + this x k)

    def __post_init__(self) -> None:
        check_section(self, "relations", positive=("side_half_angle_deg", "opposite_half_angle_deg"),
                      non_negative=("near_m", "side_range_m", "default_half_size_m", "between_off_min_m",
                                    "between_off_frac", "on_min_rise_m", "on_range_min_m", "on_range_margin_m",
                                    "on_max_rise_m", "in_range_min_m", "in_max_height_m", "opposite_min_m",
                                    "open_side_radius_m", "rank_decay"))
        if not 0 <= self.between_margin < 0.5:
            raise InvalidInputError(f"relations.between_margin must be in [0, 0.5), got {self.between_margin!r}")


@dataclass(frozen=True)
class PlacesConfig:
    """Rooms and the wearer's path (places.py)."""

    put_back_p: float = 0.9  # a placement found gone this surely, then seen again: taken and put back
    back_radius_m: float = 1.0  # "am I back where I started?": this close (ground) is yes ...
    back_scale_m: float = 0.25  # ... and the width of that yes/no boundary (logistic scale)
    other_room_weight: float = 0.5  # an object's room: the other rooms with evidence score this x their share

    def __post_init__(self) -> None:
        check_section(self, "places", positive=("back_scale_m",), unit=("put_back_p", "other_room_weight"),
                      non_negative=("back_radius_m",))


@dataclass(frozen=True)
class MeasureConfig:
    """The measurement kinds (measure.py): sizes, room areas, first-appearance orders, routes, closest points."""

    class_min_obs: int = 2  # distances, orders: nodes of the asked class seen at least this often (all when none is)
    room_min_frames: int = 5  # a room's area needs at least this many of the wearer's frames with its settled tag
    room_object_reach_m: float = 2.0  # an object's box joins its room's area when this close (ground) to the walk
    room_half_extent_cap_m: float = 0.6  # ... each box at most this far from its centre (stray points inflate it)
    room_trim: float = 0.0  # share of points allowed outside the area's rectangle on each side
    room_min_edges: int = 20  # fewer far edges logged in a room (memory/outline.py): its area comes from the walk
    room_max_edges: int = 20000  # more far edges are thinned evenly to this many (the wall fit's cost)
    room_wall_cell_m: float = 0.1  # walls: the far edges are counted in cells of this size
    room_wall_band_m: float = 0.1  # ... a wall's support: the edges within this of its line ...
    room_wall_cap: int = 3  # ... at most this many per cell along it (length seen beats a face seen often)
    room_wall_share: float = 0.5  # a room's wall: the innermost line with this share of the best support on its side
    rect_step_deg: float = 1.0  # the area's rectangle: orientations searched in steps of this
    order_vote_share: float = 0.3  # appearance order: a node shows a category when labels naming it hold at least
    # this share of its label votes (a confused first label; 1: only nodes of its class)
    inversion_penalty: float = 3.0  # appearance order: each pair an option orders against memory costs this (log)
    first_view_gap_s: float = 0.0  # appearance order: back-date a first sighting over the views of it just before, each
    # at most this long after the last (0: off; 3.5 s measured no better on held-out seeds, docs/memory.md)
    first_view_window_s: float = 60.0  # ... by at most this long
    first_view_range_m: float = 6.0  # ... views with its box's centre or a corner in the image, at most this far ahead
    turn_sigma_deg: float = 30.0  # routes: a turn word fits by a Gaussian of the angle to its heading change
    turn_back_deg: float = 135.0  # routes: a heading change larger than this (either way) is "turn back"

    def __post_init__(self) -> None:
        check_section(self, "measure", at_least_one=("class_min_obs", "room_min_frames", "room_max_edges",
                                                     "room_wall_cap"), unit=("order_vote_share",),
                      positive=("rect_step_deg", "turn_sigma_deg", "turn_back_deg", "room_wall_cell_m",
                                "room_wall_share"),
                      non_negative=("room_object_reach_m", "room_half_extent_cap_m", "inversion_penalty",
                                    "room_min_edges", "room_wall_band_m", "first_view_gap_s", "first_view_window_s",
                                    "first_view_range_m"))
        if not 0 <= self.room_trim < 0.5:
            raise InvalidInputError(f"measure.room_trim must be in [0, 0.5), got {self.room_trim!r}")
        if not 0 < self.room_wall_share <= 1:
            raise InvalidInputError(f"measure.room_wall_share must be in (0, 1], got {self.room_wall_share!r}")


@dataclass(frozen=True)
class ConfidenceConfig:
    """The confidences and yes/no probabilities the solvers state when memory's evidence is partial (round
    values, not fitted)."""

    gone_object: float = 0.6  # the direction of an object found gone (to where it was)
    partial_compare: float = 0.4  # "which is closer" with some of the compared objects not in memory
    no_objects_count: float = 0.2  # a count when memory holds no object at all (no detector?)
    several_found: float = 0.5  # several objects fit (changes, objects around), or none (relations)
    no_move_seen: float = 0.5  # "where was X before it moved?" with no move seen: where it is
    rooms_unknown: float = 0.3  # rooms asked of a memory without room names, or no earlier room
    no_change: float = 0.6  # "what changed?" answered "nothing" (no change event)
    found_p_yes: float = 0.9  # "is there an X left of the Y?", "did X change?": P(yes) when memory found one ...
    missed_p_yes: float = 0.1  # ... and when it found none

    def __post_init__(self) -> None:
        check_section(self, "confidence", unit=("gone_object", "partial_compare", "no_objects_count",
                                                "several_found", "no_move_seen", "rooms_unknown", "no_change",
                                                "found_p_yes", "missed_p_yes"))


@dataclass(frozen=True)
class GeometricConfig:
    """The geometric answerer's settings (see the module docstring); sections by what they tune."""

    min_parse_confidence: float = MIN_PARSE_CONFIDENCE  # below this parse confidence the answerer abstains
    # answer confidence -> probability of being right, one map per kind of question (calibration.py):
    # "packaged" (fitted on simulator episodes), "none" (the solvers' raw scores) or the path of a fitted file
    calibration: str = "packaged"
    scoring: ScoringConfig = field(default_factory=ScoringConfig)
    metric: MetricConfig = field(default_factory=MetricConfig)
    counting: CountingConfig = field(default_factory=CountingConfig)
    put_down: PutDownLink = field(default_factory=PutDownLink)  # counts: an object the wearer carried elsewhere
    coverage: CoverageConfig = field(default_factory=CoverageConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    relations: RelationConfig = field(default_factory=RelationConfig)
    places: PlacesConfig = field(default_factory=PlacesConfig)
    measure: MeasureConfig = field(default_factory=MeasureConfig)
    confidence: ConfidenceConfig = field(default_factory=ConfidenceConfig)

    def __post_init__(self) -> None:
        check_section(self, "", unit=("min_parse_confidence",))

    @staticmethod
    def from_options(options: Any, path: str = "answerer.options") -> "GeometricConfig":
        """The config from an options mapping (sections as nested mappings; ``path`` names where it sits in
        messages); the flat names of earlier versions (``count_sure_p``) are accepted with a DeprecationWarning."""
        if isinstance(options, Mapping) and not options:  # the defaults (no parser needed)
            return GeometricConfig()
        if isinstance(options, Mapping) and set(options) & set(RETIRED):
            options = _nest_retired(options, path)
        return parse_options(GeometricConfig, options, "geometric answerer options", path)


# the flat option names of earlier versions -> (section, field)
RETIRED = {"direction_sigma_deg": ("scoring", "direction_sigma_deg"), "clock_sigma_deg": ("scoring", "clock_sigma_deg"),
           "distance_scale_m": ("metric", "compare_scale_m"), "reach_scale_m": ("metric", "reach_scale_m"),
           "count_min_obs": ("counting", "min_obs"), "duplicate_radius_m": ("counting", "duplicate_radius_m"),
           "count_sure_p": ("counting", "sure_p"), "label_vote_logodds": ("counting", "label_vote_logodds"),
           "count_min_similarity": ("counting", "min_similarity"), "near_m": ("relations", "near_m"),
           "side_range_m": ("relations", "side_range_m"), "put_back_p": ("places", "put_back_p"),
           "back_radius_m": ("places", "back_radius_m"), "back_scale_m": ("places", "back_scale_m"),
           "put_down_reach_m": ("put_down", "hand_reach_m"), "put_down_window_s": ("put_down", "window_s"),
           "put_down_min_move_m": ("put_down", "min_move_m"), "absent_prior": ("coverage", "absent_prior"),
           "view_hfov_deg": ("coverage", "view_hfov_deg")}


def _nest_retired(options: Mapping[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {k: dict(v) if isinstance(v, Mapping) else v for k, v in options.items() if k not in RETIRED}
    for key in [k for k in options if k in RETIRED]:
        section, name = RETIRED[key]
        warnings.warn(f"{path}.{key} -> {path}.{section}.{name} (the geometric answerer's options are in sections; "
                      "the flat name will be removed)", DeprecationWarning, stacklevel=3)
        target = out.setdefault(section, {})
        if isinstance(target, dict):
            target.setdefault(name, options[key])
    return out

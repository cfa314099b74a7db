"""The geometric answerer's settings are a sectioned config (answerers/geometric_config.py) given as its
options, checked by the shared validator (directme.validation) and reachable as AgentConfig.answerer.geometric."""
from __future__ import annotations

import dataclasses

import pytest

from directme import AgentConfig
from directme.answerers.geometric import GeometricAnswerer, build
from directme.answerers.geometric_config import RETIRED, GeometricConfig
from directme.errors import InvalidInputError


def test_sections_from_options_reach_the_answerer_and_the_agent_config():
    options = {"counting": {"duplicate_radius_m": 0.5, "min_obs": 2}, "relations": {"near_m": 1.0},
               "min_parse_confidence": 0.7}
    answerer = build(options)
    assert isinstance(answerer, GeometricAnswerer)
    assert answerer.config.counting.duplicate_radius_m == 0.5 and answerer.config.counting.min_obs == 2
    assert answerer.config.relations.near_m == 1.0 and answerer.min_parse_confidence == 0.7
    assert answerer.config.scoring == GeometricConfig().scoring  # sections not given keep their defaults
    cfg = AgentConfig.from_dict({"answerer": {"name": "geometric", "options": options}})
    assert cfg.answerer.geometric == answerer.config
    policy = AgentConfig.from_dict({"answerer": {"name": "policy", "options": {
        "min_parse_confidence": 0.6, "geometric_options": {"places": {"put_back_p": 0.8}}}}})
    assert policy.answerer.geometric.places.put_back_p == 0.8 and policy.answerer.geometric.min_parse_confidence == 0.6
    assert AgentConfig().answerer.geometric == GeometricConfig()


@pytest.mark.parametrize("options, message", [
    ({"counting": {"min_obs": 1.5}}, "answerer.options.counting.min_obs: expected an integer, got 1.5"),
    ({"scoring": {"direction_sigma_deg": "18"}}, "answerer.options.scoring.direction_sigma_deg: expected a number"),
    ({"coverage": {"absent_prior": 1.5}}, "answerer.options.coverage.absent_prior must be in [0, 1], got 1.5"),
    ({"metric": {"reach_scale_m": 0.0}}, "answerer.options.metric.reach_scale_m must be > 0"),
    ({"relations": {"between_margin": 0.5}}, "answerer.options.relations.between_margin must be in [0, 0.5)"),
    ({"put_down": {"window_s": -1.0}}, "answerer.options.put_down.window_s must be >= 0"),
    ({"countng": {}}, "unknown geometric answerer options ['countng'] in answerer.options"),
    ({"counting": {"radius": 1}}, "unknown keys ['radius'] in answerer.options.counting"),
])
def test_a_bad_option_is_refused_at_load_naming_its_key_path(options, message):
    with pytest.raises(InvalidInputError) as err:
        AgentConfig.from_dict({"answerer": {"name": "geometric", "options": options}})
    assert message in str(err.value), str(err.value)


def test_a_section_built_in_code_is_checked_like_one_read_from_a_file():
    with pytest.raises(InvalidInputError, match=r"counting\.sure_p must be in \[0, 1\]"):
        dataclasses.replace(GeometricConfig().counting, sure_p=2.0)
    with pytest.raises(InvalidInputError, match="takes a GeometricConfig"):
        GeometricAnswerer({"min_parse_confidence": 0.5})


def test_the_flat_names_of_earlier_versions_still_work_with_a_warning():
    for flat, (section, name) in RETIRED.items():
        default = getattr(getattr(GeometricConfig(), section), name)
        value = default + 1 if isinstance(default, int) else default * 0.5
        with pytest.warns(DeprecationWarning, match=rf"{flat} -> answerer\.options\.{section}\.{name}"):
            cfg = GeometricConfig.from_options({flat: value})
        assert getattr(getattr(cfg, section), name) == value
    with pytest.warns(DeprecationWarning):  # a section given too: the sectioned value wins
        cfg = GeometricConfig.from_options({"near_m": 0.5, "relations": {"near_m": 0.9}})
    assert cfg.relations.near_m == 0.9


def test_every_setting_is_documented_in_agent_md_with_its_default():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "agent.md").read_text(encoding="utf-8")
    root = GeometricConfig()
    sections = [("", root)] + [(f.name, getattr(root, f.name)) for f in dataclasses.fields(root)
                               if dataclasses.is_dataclass(getattr(root, f.name))]
    missing = [f"{name}.{f.name}" for name, section in sections for f in dataclasses.fields(section)
               if not dataclasses.is_dataclass(getattr(section, f.name))
               and f"| `{f.name}` | `{getattr(section, f.name)}` |" not in doc]
    assert not missing, f"docs/agent.md's settings tables lack (or have a stale default for): {missing}"

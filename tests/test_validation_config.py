"""Configs are parsed strictly when loaded (AgentConfig.from_dict / from_file, MemoryConfig.from_dict):
booleans only from booleans, integers only from integers, numbers not from strings, values in range, plain
option data, no YAML aliases; an error names the key path. Includes the probe's finding 8."""
from __future__ import annotations

import copy
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from directme import Agent, AgentConfig
from directme.errors import InvalidInputError
from directme.memory.config import MemoryConfig

FAST = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
BOMB = "perception:\n  options:\n    a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"    {chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))


def _leaves(d, path=()):
    if isinstance(d, dict) and d:
        return [p for k, v in d.items() for p in _leaves(v, path + (k,))]
    return [path]


DEFAULT = AgentConfig().to_dict()


def _value(path):
    v = DEFAULT
    for k in path:
        v = v[k]
    return v


def _wrong_type(default):
    """Values that are definitely not of the field's type."""
    if isinstance(default, bool):
        return st.one_of(st.sampled_from(["false", "no", "true", 0, 1, None, 1.0]), st.text(max_size=3))
    if isinstance(default, int):
        return st.one_of(st.sampled_from([2.5, True, "3", None, [1]]), st.floats().filter(lambda f: f != int(f)
                                                                                            if f == f and abs(f) < 1e300
                                                                                            else True))
    if isinstance(default, float):
        return st.sampled_from(["1.0", True, None, [1.0], {"a": 1}, float("nan"), float("inf")])
    if isinstance(default, str):
        return st.sampled_from([1, 2.5, None, True, ["a"]])
    return st.sampled_from([object()])


@FAST
@given(data=st.data())
def test_a_wrong_type_anywhere_is_refused_naming_the_key_path(data):
    path = data.draw(st.sampled_from([p for p in _leaves(DEFAULT) if p[-1] != "options" and
                                      not isinstance(_value(p), (list, tuple)) and _value(p) is not None]))
    v = data.draw(_wrong_type(_value(path)))
    d = copy.deepcopy(DEFAULT)
    target = d
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = v
    with pytest.raises(InvalidInputError) as err:
        AgentConfig.from_dict(d)
    assert ".".join(path) in str(err.value) or path[-1] in str(err.value)


@FAST
@given(data=st.data())
def test_a_value_of_the_right_type_is_accepted_or_refused_clearly_and_an_accepted_config_works(data, tmp_path_factory):
    path = data.draw(st.sampled_from([p for p in _leaves(DEFAULT) if p[0] == "memory" and
                                      isinstance(_value(p), (int, float)) and not isinstance(_value(p), bool)]))
    default = _value(path)
    v = data.draw(st.integers(-3, 50) if isinstance(default, int) else st.floats(-2.0, 50.0))
    d = copy.deepcopy(DEFAULT)
    d["query"]["embedder"] = "string"
    target = d
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = v
    try:
        cfg = AgentConfig.from_dict(d)
    except InvalidInputError as exc:
        assert ".".join(path) in str(exc), str(exc)
        return
    from directme.memory.testing import Box, look_at, perceive
    from directme.geometry import Intrinsics

    agent = Agent(cfg)
    K = Intrinsics.from_fov(64, 48, 80.0)
    for k in range(2):
        agent.observe_perception(perceive([Box(1, "chair", (2.5, 0.0, 0.45), (0.6, 0.6, 0.9))],
                                          look_at((0, 0, 1.5), (1.0, 0.1 * k, 1.1)), K, 1.0 + k, k))
    assert agent.ask("Where is the chair?").text
    agent.save(tmp_path_factory.mktemp("cfg") / "saved")


def test_probe_finding_8_config_types_ranges_and_aliases(tmp_path):
    """Wrong scalar types give an error naming the key path at load time (not a traceback at observe/ask
    time); 'false' / 'no' are not booleans; an alias bomb is refused at once instead of hanging save()."""
    cases = [({"query": {"reach_m": "1.0"}}, "query.reach_m: expected a number, got '1.0'"),
             ({"memory": {"map": {"pixel_stride": 2.5}}}, "memory.map.pixel_stride: expected an integer, got 2.5"),
             ({"memory": {"keyframes": {"image_max_side": 0}}}, "memory.keyframes.image_max_side must be >= 1"),
             ({"memory": {"places": {"edge_knn": -1}}}, "memory.places.edge_knn must be >= 0"),
             ({"memory": {"relocalisation": {"enabled": "false"}}},
              "memory.relocalisation.enabled: expected a boolean (true or false), got 'false'"),
             ({"memory": {"relocalisation": {"enabled": "no"}}}, "memory.relocalisation.enabled: expected a boolean"),
             ({"memory": {"map": {"pixel_stride": True}}}, "memory.map.pixel_stride: expected an integer"),
             ({"memory": {"map": {"voxel_m": float("nan")}}}, "memory.map.voxel_m: expected a finite number")]
    for d, message in cases:
        with pytest.raises(InvalidInputError) as err:
            AgentConfig.from_dict(d)
        assert message in str(err.value), str(err.value)
    with pytest.warns(DeprecationWarning), pytest.raises(InvalidInputError, match="memory.relocalisation.enabled"):
        MemoryConfig.from_dict({"relocalize": "no"})
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB, encoding="utf-8")
    t0 = time.perf_counter()
    with pytest.raises(InvalidInputError, match="alias"):
        AgentConfig.from_file(path)
    assert time.perf_counter() - t0 < 5.0
    yml = tmp_path / "agent.yaml"
    yml.write_text("memory:\n  relocalisation:\n    enabled: 'false'\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"agent.yaml: memory.relocalisation.enabled: expected a boolean"):
        AgentConfig.from_file(yml)
    yml.write_text("memory:\n  relocalisation:\n    enabled: false\nquery:\n  reach_m: 1\n", encoding="utf-8")
    cfg = AgentConfig.from_file(yml)
    assert cfg.memory.relocalisation.enabled is False and cfg.query.reach_m == 1.0


def test_options_are_plain_bounded_data():
    a: list = ["x"] * 10
    for _ in range(9):
        a = [a] * 10  # 10**10 values when written out: save() would never finish
    t0 = time.perf_counter()
    with pytest.raises(InvalidInputError, match="perception.options: more than"):
        AgentConfig.from_dict({"perception": {"options": {"bomb": a}}})
    assert time.perf_counter() - t0 < 5.0
    for bad, needle in ((float("nan"), "finite"), ({1, 2}, "plain data"), (b"x", "plain data")):
        with pytest.raises(InvalidInputError, match=needle):
            AgentConfig.from_dict({"perception": {"options": {"depth_pose": {"x": bad}}}})
    with pytest.raises(InvalidInputError, match="keys must be strings"):
        AgentConfig.from_dict({"answerer": {"options": {1: 2}}})
    with pytest.raises(InvalidInputError, match="answerer.options"):
        AgentConfig.from_dict({"answerer": {"options": {"direction_sigma_deg": "18"}}})
    with pytest.raises(InvalidInputError, match="unknown answerer"):
        AgentConfig.from_dict({"answerer": {"name": "geometrc"}})


def test_config_files_limits(tmp_path):
    cases = {"deep.yaml": ("x: " + "[" * 5000 + "]" * 5000 + "\n").encode(), "utf16.yaml": "query: {}\n".encode("utf-16"),
             "latin1.yaml": "answerer:\n  name: g\xe9om\n".encode("latin-1"), "big.yaml": b"#" * (2 << 20),
             "merge.yaml": b"base: &b {reach_m: 1.0}\nquery:\n  <<: *b\n", "nan.json": b'{"query": {"reach_m": NaN}}',
             "deep.json": b"[" * 100_000 + b"]" * 100_000}
    for name, raw in cases.items():
        p = tmp_path / name
        p.write_bytes(raw)
        with pytest.raises(InvalidInputError) as err:
            AgentConfig.from_file(p)
        assert name in str(err.value), str(err.value)

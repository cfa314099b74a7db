"""Outputs shown in docs/getting-started.md are what the commands print.

Convention: a line ``<!-- output: NAME -->`` right before a fenced ```text block marks the block as the
output of a command; this test reruns the command and compares. Times vary from run to run and are
compared as "#.# s"; the doctor's device and torch lines describe the documenting machine.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from directme.commands import doctor_verdict as V

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "getting-started.md"
TIMEOUT_S = 300


def documented_output(name: str) -> str:
    m = re.search(rf"<!--\s*output:\s*{re.escape(name)}\s*-->\s*\n```text\n(.*?)```", PAGE.read_text(encoding="utf-8"),
                  re.S)
    assert m, f"docs/getting-started.md has no '<!-- output: {name} -->' block"
    return m.group(1)


def _times(text: str) -> str:
    return re.sub(r"\b\d+\.\d+ s\b", "#.# s", text)


def _run(args: list[str], cwd: Path, **env: str) -> str:
    full = {k: v for k, v in os.environ.items() if k not in ("DIRECTME_WEIGHTS_DIR", "HF_HOME", "HF_HUB_CACHE")}
    full.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONPATH=str(REPO),
                MPLBACKEND="Agg", **env)
    proc = subprocess.run(args, cwd=cwd, env=full, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.stdout


def test_documented_verdict_fetch_commands_are_the_code_s():
    text = documented_output("directme doctor (verdict)")
    for ws in V.weight_sets():
        assert f"{ws.used_by}" in text and ws.fetch in text, ws.key
    assert text.splitlines()[-1].startswith("doctor: ") and "huggingface-cli" not in text


@pytest.mark.slow
def test_demo_output_is_documented_as_printed(tmp_path):
    out = _run(["directme", "demo"], tmp_path)
    assert _times(out) == _times(documented_output("directme demo"))


@pytest.mark.slow
def test_doctor_verdict_is_documented_as_printed(tmp_path):
    missing = [m for m in V.INPUT_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the documented verdict is for the full stack; not installed here: {missing}")
    out = _run(["directme", "doctor"], tmp_path, HOME=str(tmp_path), TORCH_HOME=str(tmp_path / "torch"))
    printed = out[out.index("\nverdict\n") + 1:]
    machine = re.compile(r"^  (device|torch): .*$", re.M)  # this machine's lines: compared by shape only
    documented = documented_output("directme doctor (verdict)")
    assert machine.sub(r"  \1: ...", printed) == machine.sub(r"  \1: ...", documented)
    assert len(machine.findall(documented)) == 2


def _readme_first_python() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def test_readme_first_snippet_says_where_frames_come_from():
    code = _readme_first_python()
    assert "from directme.readers import open_reader" in code
    assert code.index("frames = open_reader(") < code.index("for frame in frames")


@pytest.mark.slow
def test_readme_first_snippet_runs(tmp_path):
    data = (REPO / ".." / "shared" / "data" / "sevenscenes-redkitchen").resolve()
    if not data.is_dir():
        pytest.skip(f"needs {data} (the real data is only in the project workspace)")
    code = _readme_first_python().replace('"../shared/data/sevenscenes-redkitchen"', repr(str(data)))
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    out = _run([sys.executable, str(script)], tmp_path)
    assert (tmp_path / "my_memory").is_dir() and out.strip()

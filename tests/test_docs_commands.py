"""Every documented command that needs no weights runs as written.

Convention (for every docs/*.md and README.md): a fenced ```bash block right after a line
``<!-- test -->`` is executed by this test with ``bash -euo pipefail`` in a fresh temporary folder,
with the checkout's ``directme`` first on PATH. ``<!-- test: repo -->`` runs it in the repository root
instead (only for read-only commands). Blocks of one page share their temporary folder and run in order,
so a page can generate an episode in one block and use it in the next. Blocks without the marker (model
weights, long runs, `make`) are documentation only.

``<!-- test needs PATH -->`` marks a self-contained block that reads data beside the repository, PATH
written relative to the repository root (``../shared/data/sevenscenes-redkitchen``). It runs on its
own in a temporary folder laid out like the checkout (``tmp/<checkout>`` beside a link ``tmp/shared``), so the
command reads as a user types it in the repository root, and is skipped, saying why, when PATH is absent.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
MARKED = re.compile(r"<!--\s*test(?::\s*(?P<where>\w+))?(?:\s+needs\s+(?P<needs>\S+))?\s*-->\s*\n"
                    r"```bash\n(?P<body>.*?)```", re.S)
TIMEOUT_S = 240


def marked_blocks(text: str, with_needs: bool = False) -> list[tuple[str, str]]:
    """(where, script) of each marked bash block, in page order; ``with_needs``: (needs, script) of the
    blocks that need data beside the repository instead."""
    blocks = list(MARKED.finditer(text))
    if with_needs:
        return [(m.group("needs"), m.group("body")) for m in blocks if m.group("needs")]
    return [(m.group("where") or "tmp", m.group("body")) for m in blocks if not m.group("needs")]


def _pages_with_blocks() -> list[Path]:
    return [p for p in PAGES if p.is_file() and marked_blocks(p.read_text(encoding="utf-8"))]


def _blocks_with_needs() -> list:
    return [pytest.param(needs, body, id=f"{p.name}-{i + 1}") for p in PAGES if p.is_file()
            for i, (needs, body) in enumerate(marked_blocks(p.read_text(encoding="utf-8"), with_needs=True))]


def _env() -> dict:
    return dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                MPLBACKEND="Agg", PYTHONPATH=str(REPO))


def test_marker_convention_is_parsed():
    page = ("x\n<!-- test -->\n```bash\necho a\n```\n<!-- test: repo -->\n```bash\necho b\n```\n```bash\nno\n```\n"
            "<!-- test needs ../data/x -->\n```bash\nls ../data/x\n```\n")
    assert marked_blocks(page) == [("tmp", "echo a\n"), ("repo", "echo b\n")]
    assert marked_blocks(page, with_needs=True) == [("../data/x", "ls ../data/x\n")]


def test_getting_started_has_tested_commands():
    text = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert marked_blocks(text)
    assert [n for n, _ in marked_blocks(text, with_needs=True)] == ["../shared/data/sevenscenes-redkitchen",
                                                                    "../shared/data/aria/adt"]
    assert "path/to/" not in text


def test_benchmarks_simulator_row_is_tested():
    text = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert any("directme eval sim --annotations" in body for _, body in marked_blocks(text))


@pytest.mark.slow
@pytest.mark.parametrize("page", _pages_with_blocks(), ids=lambda p: p.name)
def test_documented_commands_run(page, tmp_path):
    for i, (where, body) in enumerate(marked_blocks(page.read_text(encoding="utf-8"))):
        _run_block(f"{page.name} block {i + 1}", body, REPO if where == "repo" else tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("needs, body", _blocks_with_needs())
def test_documented_commands_with_data_run(needs, body, tmp_path):
    data = (REPO / needs).resolve()
    if not data.exists():
        pytest.skip(f"needs {needs}: not found at {data} (the real data sets are only in the project "
                    "workspace, see ../shared/data/README.md)")
    assert Path(needs).parts[0] == ".." and len(Path(needs).parts) > 2, f"needs {needs}: write ../FOLDER/..."
    work = tmp_path / REPO.name
    work.mkdir()
    top = Path(needs).parts[1]  # ../shared/data/x: link tmp/shared to the checkout's sibling
    (tmp_path / top).symlink_to((REPO.parent / top).resolve(), target_is_directory=True)
    _run_block(f"block needing {needs}", body, work)


def _run_block(name: str, body: str, cwd: Path) -> None:
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", body], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, (f"{name} failed (rc={proc.returncode}):\n{body}\n"
                                  f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")


def test_architecture_names_files_that_exist():
    """Each section of docs/architecture.md names its folder; every file it cites must be there."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = []
    for section in re.split(r"\n## ", text)[1:]:
        folders = re.findall(r"`(directme/[\w/]*?)/?`", section.splitlines()[0])
        for path in re.findall(r"`(directme/[\w/]+\.py)", section):
            if not (REPO / path).is_file():
                missing.append(path)
        for name in re.findall(r"`(\w+\.py)`", section):
            if folders and not any((REPO / f / name).is_file() for f in folders):
                missing.append(f"{folders}/{name}")
    assert not missing, f"docs/architecture.md cites files that do not exist: {missing}"

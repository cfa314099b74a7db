"""The layers of docs/architecture.md: what `import directme` pulls in, and the import-linter contracts
of pyproject.toml (`make test` runs `lint-imports`; here: the contracts parse and the cycle check works)."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "torchvision", "transformers", "open3d", "rerun", "cv2", "av", "sam2", "ultralytics",
         "matplotlib", "scipy", "networkx")


def _loaded(code: str) -> list[str]:
    """Modules (directme.sim*, heavy packages) loaded after running ``code`` in a fresh interpreter."""
    probe = (f"import sys; {code}; print(sorted(m for m in sys.modules if m == 'directme.sim' or "
             f"m.startswith('directme.sim.') or m.split('.')[0] in {HEAVY!r}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO)
    return ast.literal_eval(out.stdout.strip())


def test_import_directme_is_light_and_never_loads_the_simulator():
    assert _loaded("import directme") == []


def test_the_pipeline_does_not_load_the_simulator():
    loaded = _loaded("import directme.agent, directme.perception, directme.config, directme.readers, "
                     "directme.query.context, directme.answerers.registry")
    assert not [m for m in loaded if m.startswith("directme.sim")], loaded


def test_import_linter_contracts_are_declared():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert cfg["root_package"] == "directme"
    by_type: dict[str, list[dict]] = {}
    for c in cfg["contracts"]:
        by_type.setdefault(c["type"], []).append(c)
    (layers,) = by_type["layers"]
    assert layers["exhaustive"] and layers["containers"] == ["directme"]
    order = [layer.replace(" ", "") for layer in layers["layers"]]
    assert order.index("commands") < order.index("bench|viz") < order.index("agent|sim") < \
        order.index("answerers") < order.index("query") < order.index("memory|perception") < order.index("readers")
    assert order[-4:-1] == ["types", "geometry", "_atomic"]  # _atomic: save directories (imports only errors)
    assert {"data", "errors"} <= set(order[-1].split("|"))
    forbidden_sim = [c for c in by_type["forbidden"] if c["forbidden_modules"] == ["directme.sim"]]
    assert forbidden_sim and {"directme.perception", "directme.agent", "directme.config"} <= \
        set(forbidden_sim[0]["source_modules"])
    acyclic = {a for c in by_type["acyclic_siblings"] for a in c["ancestors"]}
    assert acyclic == {f"directme.{p}" for p in ("memory", "query", "answerers", "perception", "bench",
                                                  "commands", "sim", "readers")}


def test_answerers_and_pictures_are_kept_from_the_parsers_text_rules():
    """The ``intent-not-text`` contract (answerers and viz read the Intent, never re-read the question) names
    modules that exist: a renamed rule module would otherwise drop out of it unnoticed."""
    tomllib = pytest.importorskip("tomllib")
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in cfg["contracts"] if c.get("id") == "intent-not-text"]
    assert contract["type"] == "forbidden" and set(contract["source_modules"]) == {"directme.answerers", "directme.viz"}
    assert {"directme.query.intent", "directme.query.cues", "directme.query.phrases", "directme.query.timephrase",
            "directme.query.kinds"} <= set(contract["forbidden_modules"])
    for name in contract["forbidden_modules"]:
        path = REPO / Path(*name.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), name


def _lint_imports() -> str:
    exe = Path(sys.executable).parent / "lint-imports"
    found = str(exe) if exe.is_file() else shutil.which("lint-imports")
    if found is None:
        pytest.skip("import-linter is not installed (pip install 'directme[test]')")
    return found


@pytest.mark.parametrize("cyclic", [True, False])
def test_acyclic_contract_catches_a_cycle_through_a_function_local_import(tmp_path, cyclic):
    """The contract type pyproject.toml uses for 'no cycles inside a package' (import-linter's built-in
    acyclic_siblings) sees imports inside functions, as in the cycles it is there to forbid."""
    pkg = tmp_path / "cyclepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "store.py").write_text("def ingest():\n    from .ingest import run\n    return run\n" if cyclic else "")
    (pkg / "ingest.py").write_text("from .store import ingest as _unused\n\ndef run():\n    pass\n")
    (tmp_path / ".importlinter").write_text(textwrap.dedent("""\
        [importlinter]
        root_package = cyclepkg

        [importlinter:contract:acyclic]
        name = no cycles in cyclepkg
        type = acyclic_siblings
        ancestors = cyclepkg
        """))
    proc = subprocess.run([_lint_imports(), "--no-cache"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    if cyclic:
        assert proc.returncode == 1 and "No cycles are allowed in cyclepkg" in proc.stdout, proc.stdout
    else:
        assert proc.returncode == 0, proc.stdout + proc.stderr

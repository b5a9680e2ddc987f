"""``bbcore/check/`` laid out like the exploration: small modules, sizes held in one place each,
and the mutation run (``bench/mutation.py``) on every module, its notes printed by ``--notes``.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bbcore" / "check"
MOST_LINES = 500
"""No module of the package is longer: a phase or a store's judge is read in one sitting."""

SIZES = (
    "BLOCK",
    "ROWS_PER_QUERY",
    "FAMILY_BATCH",
    "SAMPLE_BATCH",
    "MAX_APART_CELLS",
    "LISTED",
    "OPS_PER_TICK",
    "METER_INTERVAL",
    "INTEGRITY_OPS_PER_PAGE",
)
"""The package's sizes and intervals, which tests shrink (``setattr(check.blocks, "BLOCK", 1)``)."""


def modules() -> dict[str, Path]:
    """The package's modules by name (``run``, ``findings``, ...; the face is ``__init__``)."""
    return {path.stem: path for path in sorted(PACKAGE.glob("*.py"))}


def mutation_script():
    """``bench/mutation.py`` loaded as a module (its ``main`` runs only as a script)."""
    spec = importlib.util.spec_from_file_location("bench_mutation", ROOT / "bench" / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_module_of_the_check_package_is_over_500_lines():
    found = modules()
    assert {"__init__", "run", "findings", "samples", "full_judge", "compact_judge"} <= set(found)
    long = {name: n for name, path in found.items() if (n := len(path.read_text().splitlines())) > MOST_LINES}
    assert not long, f"modules of bbcore/check/ over {MOST_LINES} lines: {long}"


def test_each_size_has_one_home_that_every_user_reads():
    """A size is defined in one module and read from it (``blocks.BLOCK``), never imported by name:
    a copy bound at import would keep the old value when a test shrinks it, and that test would
    pass without crossing the edge it was written for."""
    homes: dict[str, list[str]] = {}
    copies = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text())
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            homes.update({t.id: [*homes.get(t.id, []), name] for t in targets if isinstance(t, ast.Name)})
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bbcore.check"):
                copies += [f"{name}: {alias.name}" for alias in node.names if alias.name in SIZES]
    assert {size: len(homes.get(size, [])) for size in SIZES} == dict.fromkeys(SIZES, 1)
    assert not copies, f"sizes imported by name (a test shrinking them would not reach these): {copies}"


def test_the_mutation_run_covers_every_module_of_the_package():
    """``bench/mutation.py`` has an entry per module (``check.run``, ...), each with the check tests,
    and ``check`` names them all."""
    script = mutation_script()
    wanted = {f"check.{name}": f"bbcore/check/{name}.py" for name in modules() if name != "__init__"}
    entries = {name: source for name, (source, _) in script.MODULES.items() if name.startswith("check.")}
    assert entries == wanted
    assert all(script.MODULES[name][1] == script.CHECK_TESTS for name in wanted)
    assert all((ROOT / test).is_file() for test in script.CHECK_TESTS)
    assert sorted(script.expand("check")) == sorted(wanted)
    assert script.expand("check.run") == ["check.run"] and script.expand("nothing") == []


def test_the_mutation_notes_are_printed_by_notes():
    """``python bench/mutation.py --notes`` prints ``bench/mutation_notes.md`` whole (mutmut or not),
    and ``--help`` says where the notes are."""
    notes = (ROOT / "bench" / "mutation_notes.md").read_text()
    assert "rays.py:" in notes and notes.count("\n") > 300  # the notes moved there, not a stub
    run = subprocess.run(
        [sys.executable, "bench/mutation.py", "--notes"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, notes, "")
    shown = subprocess.run(
        [sys.executable, "bench/mutation.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0 and "bench/mutation_notes.md" in shown.stdout
    assert "--notes" in shown.stdout

"""bbcore is headless: importing any of its modules never loads textual or rich.

Each check runs in a fresh interpreter, because this test process has most
likely imported textual already (the snapshot plugin does).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

UI_PACKAGES = ("textual", "rich")

IMPORT_ALL = """
import importlib, json, pkgutil, sys

UI = {ui!r}

def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in UI)

before = loaded()
import bbcore
# __main__ runs the command line when imported; what it imports is imported here anyway.
modules = sorted(m.name for m in pkgutil.walk_packages(bbcore.__path__, "bbcore.")
                 if not m.name.endswith(".__main__"))
for name in modules:
    importlib.import_module(name)
{extra}
print(json.dumps({{"before": before, "modules": modules, "ui": loaded()}}))
"""


def import_bbcore(extra: str = "") -> dict:
    """Import every bbcore module in a fresh interpreter; report what got loaded."""
    code = IMPORT_ALL.format(ui=UI_PACKAGES, extra=extra)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_bbcore_never_imports_textual_or_rich():
    """Every bbcore module, found by pkgutil so that new ones are covered, stays headless."""
    report = import_bbcore()
    assert report["before"] == []
    assert {"bbcore.config", "bbcore.rays", "bbcore.engine", "bbcore.render"} <= set(report["modules"])
    assert report["ui"] == [], f"bbcore loaded UI modules: {report['ui'][:10]}"


def test_the_check_sees_a_ui_import():
    """The same check does report textual when something imports it."""
    report = import_bbcore(extra="import textual")
    assert "textual" in report["ui"]


def test_no_screen_or_widget_imports_the_app():
    """The app imports the screens, never the other way round, not even for typing (``bbtui.host``)."""
    import ast
    from pathlib import Path

    import bbtui

    root = Path(bbtui.__file__).parent
    files = sorted([*root.glob("screens/*.py"), *root.glob("widgets/*.py")])
    importers = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(name == "bbtui.app" or name.startswith("bbtui.app.") for name in names):
                importers.append(path.name)
    assert len(files) > 10 and importers == []


def test_the_app_is_what_the_screens_expect(tmp_path):
    """BlackBoxApp has every attribute and method of the Host protocol."""
    from bbtui.app import BlackBoxApp
    from bbtui.host import Host

    app = BlackBoxApp(tmp_path / "db.sqlite")
    members = {name for name in vars(Host) if not name.startswith("_")} | set(Host.__annotations__)
    missing = sorted(name for name in members if not hasattr(app, name))
    assert len(members) > 10 and missing == []


OURS = ("bbcore", "bbtui")


def private_imports(source: str) -> list[str]:
    """The modules of other packages that ``source`` imports by a private name (``x._y``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [name for name in names if name.split(".")[0] not in OURS and is_private(name)]
    return found


def is_private(module: str) -> bool:
    """``plotext._plotter.plot`` is; ``__future__`` is not."""
    return any(part.startswith("_") and not part.endswith("__") for part in module.split("."))


def test_bbcore_and_bbtui_use_only_public_apis_of_other_packages() -> None:
    # plotext's private _plotter module, pinned to one release, was the last one (issue #20).
    root = Path(__file__).parent.parent
    offenders = {
        str(path.relative_to(root)): private_imports(path.read_text())
        for package in ("bbcore", "bbtui")
        for path in sorted((root / package).rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}

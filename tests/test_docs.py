"""What can rot in the documentation: the site's pages and pictures, and the README's front page.

Links and anchors inside the site are checked by MkDocs' own strict build, which
``.ci/run`` runs (``mkdocs build --strict``); these tests need only the test
extra. They check what that build does not see: the README (outside the
site), that the nav names real pages, and that every screenshot a page shows
is one ``docs/screenshots.py`` makes with Textual's own export.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"

SETUP_COMMANDS = [
    "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/bbtui",
    "python3 -m venv .venv && .venv/bin/pip install '.[test]' && .venv/bin/python -m pytest -n 2",
]
"""The README's first lines after its title: they must work on a fresh machine with Python 3.11 and pip."""

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
"""A Markdown link or image: its target."""


def nav_pages(nav: list) -> list[str]:
    """Every page file named in a MkDocs nav, however deeply it is nested in sections."""
    pages: list[str] = []
    for item in nav:
        entries = item.values() if isinstance(item, dict) else [item]
        for entry in entries:
            pages.extend(nav_pages(entry) if isinstance(entry, list) else [entry])
    return pages


def local_targets(markdown: Path) -> list[str]:
    """The targets of a file's links and images inside the repository (no URL nor mailto:, no bare anchor)."""
    targets = (match.group(1).split("#")[0] for match in LINK.finditer(markdown.read_text()))
    return [target for target in targets if target and ":" not in target]


def screenshot_names() -> set[str]:
    """The SVG files docs/screenshots.py writes, from its own list of scenes."""
    spec = importlib.util.spec_from_file_location("screenshots", DOCS / "screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {f"{name}.svg" for name in module.SCENES}


def test_every_page_of_the_nav_exists_and_every_page_is_in_it() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = nav_pages(config["nav"])
    assert pages, "mkdocs.yml has a nav"
    assert [page for page in pages if not (DOCS / page).is_file()] == []
    assert sorted(set(pages)) == sorted(pages), "a page is in the nav twice"
    assert sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")) == sorted(pages)


def test_every_screenshot_shown_exists_and_is_made_by_the_screenshot_script() -> None:
    made = screenshot_names()
    shown: set[str] = set()
    for markdown in [README, *DOCS.rglob("*.md")]:
        for target in local_targets(markdown):
            if target.endswith(".svg"):
                path = (markdown.parent / target).resolve()
                assert path.is_file(), f"{markdown.name} shows {target}, which does not exist"
                assert path.parent == DOCS / "images", f"{markdown.name}: {target} is not in docs/images"
                shown.add(path.name)
    assert shown <= made, f"shown but not made by docs/screenshots.py: {sorted(shown - made)}"
    for name in made:
        svg = (DOCS / "images" / name).read_text()
        assert svg.startswith("<svg") and "Generated with Rich" in svg, f"{name} is not Textual's export"
    # Every main screen is pictured somewhere.
    assert {"explore.svg", "groups.svg", "group.svg", "molecule.svg", "decode.svg"} <= shown
    assert {"play.svg", "statistics.svg", "strategy.svg"} <= shown


def test_the_readme_is_a_front_page_that_starts_with_the_two_setup_commands() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, f"the README has {len(lines)} lines: move the manual into docs/"
    assert lines[0].startswith("# ") and lines[1] == ""
    assert lines[2].startswith("```") and lines[5] == "```"
    assert lines[3:5] == SETUP_COMMANDS


def test_the_readme_links_resolve_in_the_repository() -> None:
    """The README's links into docs/ are relative, so that they work on GitHub as well as here."""
    targets = local_targets(README)
    assert any(target.startswith("docs/") and target.endswith(".md") for target in targets)
    assert [target for target in targets if not (ROOT / target).exists()] == []


def test_the_docs_list_every_finding_of_check_as_the_checker_has_it():
    """docs/cli.md's list of what ``check`` verifies is the checker's own (``check.FINDINGS``):
    every finding, its stores and its description, and no finding the checker does not have."""
    from bbcore.check import FINDINGS

    text = (DOCS / "cli.md").read_text()
    listed = set(re.findall(r"^    - `([a-z_]+\.[a-z_]+)` \(", text, flags=re.MULTILINE))
    assert listed == set(FINDINGS)
    for finding in FINDINGS.values():
        stores = "both stores" if len(finding.stores) == 2 else f"{finding.stores[0]} store"
        assert f"    - `{finding.name}` ({stores}): {finding.description}\n" in text

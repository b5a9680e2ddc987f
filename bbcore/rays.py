"""The reference implementation of the ray rules, written for clarity.

Every fast path in bbcore is checked against this module over whole small
configurations; it is not used on hot paths.

Glossary:

- *ray*: the shot from one perimeter position, with its result;
- *result*: ``absorbed``, ``reflected`` or ``out`` (with the exit position);
- *length*: cells crossed, *turns*: 90-degree deflections (spec, "Ray rules");
- *spectrum*: the 2(W+H) results as a string, ``@`` absorbed, ``&`` reflected,
  a lowercase letter at both ends of each ray that came out, letters given
  in order of first appearance ("normalised").  Past 26 exit pairs (boxes
  wider than 13 or a rectangle with W + H > 26) the letters run on past
  ``z`` (``{``, ``|``, ...): such a string still compares spectra, and is
  written for people as labels 1, 2, ... (``spectrum_labels``).

The box is ``width`` wide and ``height`` high (None: the square).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from bbcore.config import Config
from bbcore.geometry import Cell, Direction, cell_of, entry, position_at

ABSORBED, REFLECTED = "@", "&"
Result = Literal["absorbed", "reflected", "out"]
SpectrumText = str
"""A spectrum as its string of 2(W+H) characters (the ``Spectrums`` table's rows are ``store.Spectrum``)."""

STAT_FIELDS: tuple[str, ...] = (
    "absorbed_number",
    "absorbed_max_length",
    "absorbed_max_turns",
    "absorbed_tot_length",
    "absorbed_tot_turns",
    "reflected_number",
    "reflected_edge",
    "reflected_deep",
    "reflected_max_length",
    "reflected_max_turns",
    "reflected_tot_length",
    "reflected_tot_turns",
    "out_number",
    "out_max_length",
    "out_max_turns",
    "out_tot_length",
    "out_tot_turns",
)
"""The 17 statistics of a molecule, in the order of the spec and the table."""


class RayLoopError(RuntimeError):
    """A ray that did not end within 2*W*H steps: a bug, never a result."""


@dataclass(frozen=True)
class Ray:
    """One traced ray: where it entered, how it ended, and the cells it crossed."""

    position: int
    result: Result
    exit: int | None  # the exit position when the result is "out"
    length: int
    turns: int
    path: tuple[Cell, ...] = field(default=(), compare=False)


def trace(width: int, atoms: Iterable[int], position: int, height: int | None = None) -> Ray:
    """Trace the ray shot from ``position`` into a box holding ``atoms`` (cells)."""
    height = width if height is None else height
    occupied = {cell_of(width, a) for a in atoms}
    (line, column), (dl, dc) = entry(width, position, height)
    # The two front diagonals are "ahead" shifted by +/- the perpendicular.
    perp = (dc, dl)

    def inside(l: int, c: int) -> bool:
        return 1 <= l <= height and 1 <= c <= width

    ahead = (line + dl, column + dc)
    if ahead in occupied:
        return Ray(position, "absorbed", None, 0, 0)
    if (ahead[0] + perp[0], ahead[1] + perp[1]) in occupied or (
        ahead[0] - perp[0],
        ahead[1] - perp[1],
    ) in occupied:
        return Ray(position, "reflected", None, 0, 0)

    turns = 0
    path: list[Cell] = []
    for step in range(1, 2 * width * height + 1):
        line, column = line + dl, column + dc
        if not inside(line, column):
            return Ray(
                position, "out", position_at(width, (line, column), height), step - 1, turns, tuple(path)
            )
        path.append((line, column))
        perp = (dc, dl)
        ahead = (line + dl, column + dc)
        left = (ahead[0] + perp[0], ahead[1] + perp[1])
        right = (ahead[0] - perp[0], ahead[1] - perp[1])
        if ahead in occupied:
            return Ray(position, "absorbed", None, step, turns, tuple(path))
        if left in occupied and right in occupied:
            return Ray(position, "reflected", None, step, turns, tuple(path))
        if left in occupied:
            dl, dc = -perp[0], -perp[1]
            turns += 1
        elif right in occupied:
            dl, dc = perp
            turns += 1
    raise RayLoopError(f"ray from position {position} did not end, atoms {sorted(occupied)}")


def path_headings(width: int, ray: Ray, height: int | None = None) -> list[tuple[Direction, Direction]]:
    """For each cell of the ray's path, the heading it enters with and the heading it leaves with.

    The ray enters from the perimeter cell of its position and, when it
    comes out, leaves to the perimeter cell of its exit.  An absorbed or
    deep-reflected ray leaves its last cell with the heading it entered with
    (the reversal of a reflection is not a turn).  So a cell turns the ray
    where the two differ, and the renderers (``bbcore.statistics``' arrows,
    the TUI's box-drawing lines) only pick glyphs.
    """
    cells = [entry(width, ray.position, height)[0], *ray.path]
    if ray.result == "out" and ray.exit is not None:
        # A ray leaving by position q lands on the cell a ray shot from q starts from.
        cells.append(entry(width, ray.exit, height)[0])
    headings = []
    for i, cell in enumerate(ray.path, start=1):
        entering = (cell[0] - cells[i - 1][0], cell[1] - cells[i - 1][1])
        leaving = (cells[i + 1][0] - cell[0], cells[i + 1][1] - cell[1]) if i + 1 < len(cells) else entering
        headings.append((entering, leaving))
    return headings


def trace_all(config: Config, atoms: Iterable[int]) -> list[Ray]:
    """All 2(W+H) rays of a molecule, position 1 first (each traced on its own)."""
    atoms = tuple(atoms)
    return [trace(config.width, atoms, p, config.height) for p in range(1, config.positions + 1)]


def spectrum_of_rays(rays: list[Ray]) -> SpectrumText:
    """The normalised spectrum string of a molecule's rays."""
    chars: list[str] = [""] * len(rays)
    letter = 0
    for ray in rays:
        k = ray.position - 1
        if chars[k]:
            continue
        if ray.result == "absorbed":
            chars[k] = ABSORBED
        elif ray.result == "reflected":
            chars[k] = REFLECTED
        else:
            assert ray.exit is not None
            chars[k] = chars[ray.exit - 1] = chr(ord("a") + letter)
            letter += 1
    return "".join(chars)


def spectrum(config: Config, atoms: Iterable[int]) -> SpectrumText:
    """The normalised spectrum of a molecule."""
    return spectrum_of_rays(trace_all(config, atoms))


def spectrum_labels(spectrum_text: str) -> list[str]:
    """A spectrum as one label per position for people: its own characters while the exit
    pairs fit in a..z, else ``@``, ``&`` and the pairs numbered 1, 2, ... in order of first
    appearance (the token notation of ``bbcore.game``)."""
    if all(ch in (ABSORBED, REFLECTED) or "a" <= ch <= "z" for ch in spectrum_text):
        return list(spectrum_text)
    number: dict[str, str] = {}
    return [
        ch if ch in (ABSORBED, REFLECTED) else number.setdefault(ch, str(len(number) + 1))
        for ch in spectrum_text
    ]


def normalise(spectrum_text: str) -> SpectrumText:
    """Relabel the exit letters of a spectrum in order of first appearance."""
    relabel: dict[str, str] = {}
    out = []
    for ch in spectrum_text:
        if ch in (ABSORBED, REFLECTED):
            out.append(ch)
        else:
            if ch not in relabel:
                relabel[ch] = chr(ord("a") + len(relabel))
            out.append(relabel[ch])
    return "".join(out)


def statistics_of_rays(rays: list[Ray]) -> dict[str, int]:
    """The 17 statistics of a molecule from its rays (an out pair counted once)."""
    absorbed = [r for r in rays if r.result == "absorbed"]
    reflected = [r for r in rays if r.result == "reflected"]
    out = [r for r in rays if r.result == "out" and r.position <= (r.exit or 0)]
    stats: dict[str, int] = {}
    for name, group in (("absorbed", absorbed), ("reflected", reflected), ("out", out)):
        stats[f"{name}_number"] = len(group)
        stats[f"{name}_max_length"] = max((r.length for r in group), default=0)
        stats[f"{name}_max_turns"] = max((r.turns for r in group), default=0)
        stats[f"{name}_tot_length"] = sum(r.length for r in group)
        stats[f"{name}_tot_turns"] = sum(r.turns for r in group)
    stats["reflected_edge"] = sum(1 for r in reflected if r.length == 0)
    stats["reflected_deep"] = sum(1 for r in reflected if r.length > 0)
    return {name: stats[name] for name in STAT_FIELDS}


def statistics(config: Config, atoms: Iterable[int]) -> dict[str, int]:
    """The 17 statistics of a molecule."""
    return statistics_of_rays(trace_all(config, atoms))

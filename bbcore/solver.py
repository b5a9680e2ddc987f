"""The solver decoder: a game's shown rays as clauses, answered without listing every molecule.

The engine (``bbcore.decode``) traces every molecule of the cells left; past
its limit, or on a box W wide and H high, or with a count of atoms given as a
range, this module answers instead.  It is written against plain integers
(width, height, least and most atoms, shown rays as ``(position, result)``),
so that it does not depend on how a configuration is named; its ``Box`` takes
the perimeter from ``bbcore.geometry`` and a guess is judged by the reference
tracer, ``bbcore.rays.trace``.

Geometry (the spec's, extended to rectangles): H lines, W columns; cell index
``(line - 1) * W + (column - 1)``; positions 1..2(W+H): the left side lines 1
to H, the bottom columns 1 to W, the right side lines H up to 1, the top
columns W back to 1 (the spec's numbering when W = H).

The encoding (one per shown ray, a ray that came out counted once):

- a variable per cell, true for an atom: these alone decide everything
  (the *projection*: counts and samples are taken over them only);
- per ray, a variable per *state* (the ray has just moved into cell (l, c)
  heading d) and per *end* (absorbed, reflected, out at q); a state and the
  atoms around it (ahead, then both front diagonals, then one, then none,
  exactly the rules of ``bbcore.rays.trace``) force the next state or end,
  so that the cells force the ray's true path from its entry on; a state or
  an end is true only when a state before it is.  What else could be true is
  a cycle of states that no entry reaches, which the ends do not see.  A
  ray's clauses are built once per box and position (``_ray_template``); a
  ray that came out is encoded from both of its ends (``BOTH_ENDS``), its
  path then forced from both;
- the shown result: every other end of the ray false, the shown one true,
  under a *selector* literal of the ray (an assumption), so that an
  unsatisfiable game names the rays it cannot satisfy (the core);
- the count of atoms: a cardinality constraint (``pysat.card``), between
  the least and the most.

What it answers (``solve``): consistent or not and, when not, a minimal core
(every ray in it needed: drop any one and the rest agree); the backbone (a
cell certainly an atom, certainly empty, or undecided: one solver call per
cell that the models found so far do not show both ways); the count of the
agreeing placements and the probability of an atom in each cell, exact by
the path search (``_PathSearch``: the shown rays traced over the cells the
backbone leaves undecided, branching on the cells they look at; the cells
none looks at counted by binomials; compiled by numba, ``bbcore.solver_kernels``, the plain
Python one kept as the tests' reference), the placements listed when at most
``ENUMERATION_LIMIT``, else drawn exactly uniformly; past the search's budget
(``PATH_LEAVES``, ``ENUMERATION_SECONDS``) the count is estimated by ApproxMC
with a stated tolerance and confidence, and the probabilities come from
near-uniform samples (UniGen) with their sampling error.  ``next_shots`` ranks the positions not shot from the
placements or the samples as ``bbcore.shots`` does; ``judge`` checks a guess
by Emacs' rule (the exact cells) or Tatham's (the same result on every ray).

The solver is CaDiCaL 1.9.5 through python-sat, chosen by measurement
(docs/decode-solver.md): Glucose 4 and MiniSat were a little quicker on the
first call and slower on the backbone's many calls.  Cancellation: ``stop``
is checked between solver calls and within each, between slices of its
conflicts (``_Interrupter``: python-sat's CaDiCaL has no ``interrupt``);
ApproxMC and UniGen, which cannot be interrupted, run in a child process that
is ended.
"""

from __future__ import annotations

import itertools
import os
import random
import time
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from math import comb
from typing import Final, Literal, Protocol

import numpy as np

from bbcore import geometry, rays
from bbcore.game import ABSORBED, REFLECTED, Result

ABSORBED_CODE: Final = -1
"""The engine's code of an absorbed ray (``bbcore.engine``; kept here so that the solver needs no numba)."""

REFLECTED_CODE: Final = -2
"""The engine's code of a reflected ray."""

SOLVER: Final = "cadical195"
CONFLICTS_PER_SLICE: Final = 5000
"""A SAT call looks at its stop event between slices of this many conflicts (tens of ms)."""
"""python-sat's name of the SAT solver (see the module)."""

ENUMERATION_LIMIT: Final = 2_000
"""The most agreeing placements listed one by one (an exact count, exact probabilities)."""

ENUMERATION_SECONDS: Final = 25.0
"""How long the exact answer (the path search, or the listing) may run before the count is
estimated instead: the path search's in processor time of its thread, the listing's in
seconds."""

COUNTING_SECONDS: Final = 120.0
"""How long ApproxMC may take for its estimate before the decode is refused in one line (a count of
about 2^160, A84_B13 with one ray, would take hours): never a bare guess, never a wait without end."""

PATH_LEAVES: Final = 10**9
"""The most partial placements (leaves) the path search goes through for an exact count (past
them, or past ``ENUMERATION_SECONDS``, the count is estimated).  The compiled search adds its
leaves up as it goes and keeps none (memory stays flat); the plain one, the reference of the
tests, keeps them all.  It was 200,000, a bound on the plain search's memory."""

UNIFORM_SAMPLES: Final = 2_000
"""Placements drawn exactly uniformly for the next shots when an exact count is too large to list."""

SAMPLES: Final = 400
"""Near-uniform samples drawn for the probabilities and next shots when the placements are not listed."""

SAMPLE_BATCH: Final = 10
"""Samples UniGen draws at a time (each batch sent to the parent at once)."""

SAMPLING_SECONDS: Final = 20.0
"""How long the samples are drawn after the estimate (one batch at least): the margin says how many."""

TOLERANCE: Final = 0.8
"""ApproxMC's tolerance (epsilon): the estimate is within a factor 1 + epsilon of the count..."""

CONFIDENCE: Final = 0.8
"""... with this probability (1 - delta)."""

BOTH_ENDS = True
"""Whether a ray that came out is encoded from both of its ends (see bench/solver.py)."""

Direction = tuple[int, int]
Cell = tuple[int, int]
EAST: Final = (0, 1)
NORTH: Final = (-1, 0)
WEST: Final = (0, -1)
SOUTH: Final = (1, 0)

UNDECIDED: Final = -1
"""A backbone cell neither certainly an atom (1) nor certainly empty (0)."""

Rule = Literal["emacs", "tatham"]


class Stop(Protocol):
    """Anything with ``is_set()``, such as a ``threading.Event``."""

    def is_set(self) -> bool: ...


class SolverCancelled(Exception):
    """The stop event was set during a solve."""


class SolverMissing(RuntimeError):
    """A solver package is not installed; the message is one line for the user."""


class SolverTimeout(RuntimeError):
    """The estimate of the count was not had within ``COUNTING_SECONDS``; one line for the user."""


# -- the W x H geometry ----------------------------------------------------------------


@dataclass(frozen=True)
class Box:
    """A box ``width`` columns wide and ``height`` lines high, with its perimeter positions."""

    width: int
    height: int

    @property
    def cells(self) -> int:
        """W * H."""
        return self.width * self.height

    @property
    def positions(self) -> int:
        """2 (W + H)."""
        return 2 * (self.width + self.height)

    def inside(self, cell: Cell) -> bool:
        """Whether (line, column) is in the box."""
        return 1 <= cell[0] <= self.height and 1 <= cell[1] <= self.width

    def index(self, cell: Cell) -> int:
        """0-based index of (line, column)."""
        return (cell[0] - 1) * self.width + cell[1] - 1

    def cell(self, index: int) -> Cell:
        """(line, column) of a 0-based index."""
        return index // self.width + 1, index % self.width + 1

    def entry(self, position: int) -> tuple[Cell, Direction]:
        """The perimeter cell a ray starts from and its inward heading (``geometry.entry``)."""
        return geometry.entry(self.width, position, self.height)

    def position_at(self, cell: Cell) -> int:
        """The position of a cell just outside the box, not a corner (``geometry.position_at``)."""
        return geometry.position_at(self.width, cell, self.height)


def _ahead(cell: Cell, heading: Direction) -> tuple[Cell, Cell, Cell, Direction]:
    """The cell ahead, its two front diagonals (left, right) and the perpendicular, as ``rays.trace``."""
    perp = (heading[1], heading[0])
    ahead = (cell[0] + heading[0], cell[1] + heading[1])
    return ahead, (ahead[0] + perp[0], ahead[1] + perp[1]), (ahead[0] - perp[0], ahead[1] - perp[1]), perp


def trace_result(box: Box, atoms: Iterable[int], position: int) -> Result:
    """The result of the ray from ``position``: ``ABSORBED``, ``REFLECTED`` or the exit position
    (the reference tracer's, ``bbcore.rays.trace``)."""
    ray = rays.trace(box.width, atoms, position, box.height)
    return {"absorbed": ABSORBED, "reflected": REFLECTED}.get(ray.result, ray.exit)


def trace_many(box: Box, placements: np.ndarray, positions: Sequence[int]) -> np.ndarray:
    """Results of the rays from ``positions`` for each placement, vectorised over both.

    ``placements`` is a boolean array (k, W*H); the answer is (k, len(positions))
    of the engine's codes (``code_of``): -1 absorbed, -2 reflected, else the
    0-based exit position.
    """
    k, n = len(placements), len(positions)
    h, w = box.height, box.width
    grid = np.zeros((k, h + 2, w + 2), dtype=bool)
    grid[:, 1:-1, 1:-1] = placements.reshape(k, h, w)
    out = np.full((k, n), -3, dtype=np.int64)
    if k == 0 or n == 0:
        return out
    which = np.repeat(np.arange(k), n)
    column = np.tile(np.arange(n), k)
    starts = [box.entry(p) for p in positions]
    line = np.tile(np.array([s[0][0] for s in starts]), k)
    col = np.tile(np.array([s[0][1] for s in starts]), k)
    dl = np.tile(np.array([s[1][0] for s in starts]), k)
    dc = np.tile(np.array([s[1][1] for s in starts]), k)

    def at(lines: np.ndarray, cols: np.ndarray, rows: np.ndarray) -> np.ndarray:
        # Cells outside the padded grid (two away from the box) hold no atom.
        ok = (lines >= 0) & (lines <= h + 1) & (cols >= 0) & (cols <= w + 1)
        found = np.zeros(len(lines), dtype=bool)
        found[ok] = grid[rows[ok], lines[ok], cols[ok]]
        return found

    codes = np.full(k * n, -3, dtype=np.int64)
    # Entry.
    al, ac = line + dl, col + dc
    hit = at(al, ac, which)
    edge = ~hit & (at(al + dc, ac + dl, which) | at(al - dc, ac - dl, which))
    codes[hit] = ABSORBED_CODE
    codes[edge] = REFLECTED_CODE
    live = np.flatnonzero(~hit & ~edge)
    for _ in range(2 * box.cells + 1):
        if len(live) == 0:
            break
        line[live] += dl[live]
        col[live] += dc[live]
        ln, cl = line[live], col[live]
        outside = (ln < 1) | (ln > h) | (cl < 1) | (cl > w)
        for i in live[outside]:
            codes[i] = box.position_at((int(line[i]), int(col[i]))) - 1
        live = live[~outside]
        ln, cl, hl, hc, rows = line[live], col[live], dl[live], dc[live], which[live]
        al, ac = ln + hl, cl + hc
        ahead = at(al, ac, rows)
        left = at(al + hc, ac + hl, rows)
        right = at(al - hc, ac - hl, rows)
        codes[live[ahead]] = ABSORBED_CODE
        deep = ~ahead & left & right
        codes[live[deep]] = REFLECTED_CODE
        turn_left = ~ahead & left & ~right
        turn_right = ~ahead & right & ~left
        # Away from a left diagonal: heading -perp; from a right one: +perp (perp = (dc, dl)).
        new_l = np.where(turn_left, -hc, np.where(turn_right, hc, hl))
        new_c = np.where(turn_left, -hl, np.where(turn_right, hl, hc))
        dl[live], dc[live] = new_l, new_c
        live = live[~ahead & ~deep]
    if len(live):
        raise RuntimeError("a ray did not end")
    out[which, column] = codes
    return out


def code_of(result: Result) -> int:
    """The engine's code of a result (``ABSORBED_CODE``, ``REFLECTED_CODE``, exit - 1)."""
    if result == ABSORBED:
        return ABSORBED_CODE
    if result == REFLECTED:
        return REFLECTED_CODE
    return int(result) - 1


def result_of(code: int) -> Result:
    """The result of an engine code."""
    return ABSORBED if code == ABSORBED_CODE else REFLECTED if code == REFLECTED_CODE else code + 1


# -- the encoding ---------------------------------------------------------------------


def _pysat():  # noqa: ANN202 - the modules, imported when first needed
    try:
        from pysat.card import CardEnc, EncType
        from pysat.solvers import Solver
    except ImportError:
        raise SolverMissing(
            "the solver decoder needs python-sat: pip install 'bbtui[solver]' (or python-sat)"
        ) from None
    return CardEnc, EncType, Solver


class Encoding:
    """The clauses of a game: cells 1..W*H are the atom variables, then each ray's states.

    ``hard`` holds the clauses every answer keeps (paths, counts);
    ``selectors`` maps each shown ray's position to the literal that asserts
    its result.
    """

    def __init__(
        self,
        box: Box,
        atoms_min: int,
        atoms_max: int,
        rays: Sequence[tuple[int, Result]],
        edges: bool = False,
    ):
        self.box = box
        self.edges = edges
        self.atoms_min, self.atoms_max = atoms_min, atoms_max
        self.rays = tuple(rays)
        self.top = box.cells
        self.hard: list[list[int]] = []
        self.selectors: dict[int, int] = {}
        for position, result in self.rays:
            self.selectors[position] = self._new()
            self._ray(position, result, self.selectors[position])
            if BOTH_ENDS and isinstance(result, int) and result != position:
                # The same ray from its other end: its path is then forced from both ends.
                self._ray(result, position, self.selectors[position])
        self._cardinality()

    def _new(self) -> int:
        self.top += 1
        return self.top

    def _ray(self, position: int, result: Result, selector: int) -> None:
        cells = self.box.cells
        template = _ray_template(self.box.width, self.box.height, position)
        base = self.top - cells  # a template's variable cells + k is this ray's top + k
        flat = template.literals
        shifted = np.where(np.abs(flat) > cells, flat + np.sign(flat) * base, flat).tolist()
        bounds = template.bounds
        self.hard.extend(shifted[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1))
        self.top += template.variables
        ends = {key: var + base for key, var in template.ends.items()}
        shown = result if isinstance(result, str) else int(result)
        if shown not in ends:
            self.hard.append([-selector])  # a result this ray can never give
        for key, var in ends.items():
            self.hard.append([-selector, var if key == shown else -var])

    def _cardinality(self) -> None:
        CardEnc, EncType, _ = _pysat()
        cells = list(range(1, self.box.cells + 1))
        if self.atoms_min == self.atoms_max:
            parts = [CardEnc.equals(cells, self.atoms_min, top_id=self.top, encoding=EncType.seqcounter)]
        else:
            parts = []
            if self.atoms_min > 0:
                parts.append(
                    CardEnc.atleast(cells, self.atoms_min, top_id=self.top, encoding=EncType.seqcounter)
                )
                self.top = max(self.top, parts[-1].nv)
            parts.append(CardEnc.atmost(cells, self.atoms_max, top_id=self.top, encoding=EncType.seqcounter))
        for part in parts:
            self.hard.extend(part.clauses)
            self.top = max(self.top, part.nv)


@dataclass(frozen=True)
class _Template:
    """A ray's clauses from one position, the shown result left out: variables 1..W*H are the
    cells, ``W*H + k`` the ray's k-th own variable (a state or an end)."""

    literals: np.ndarray
    bounds: list[int]
    variables: int
    ends: dict[Result, int]


@lru_cache(maxsize=240)
def _ray_template(width: int, height: int, position: int) -> _Template:
    """The clauses of the ray from ``position`` (see the module), built once per box and position."""
    box = Box(width, height)
    cells = box.cells
    states: dict[tuple[Cell, Direction], int] = {}
    ends: dict[Result, int] = {}
    incoming: dict[int, set[int]] = {}
    clauses: list[list[int]] = []
    todo: list[tuple[Cell, Direction]] = []

    def new() -> int:
        return cells + len(states) + len(ends) + 1

    def state(cell: Cell, heading: Direction) -> int:
        if not box.inside(cell):
            return end(box.position_at(cell))
        key = (cell, heading)
        if key not in states:
            states[key] = new()
            todo.append(key)
        return states[key]

    def end(key: Result) -> int:
        if key not in ends:
            ends[key] = new()
        return ends[key]

    def atom(cell: Cell) -> int | None:
        return box.index(cell) + 1 if box.inside(cell) else None

    def edge(source: int | None, atoms: Iterable[tuple[int | None, bool]], target: int) -> None:
        # The state and its atoms force the target; a cell outside the box is never an atom.
        lits = []
        for var, full in atoms:
            if var is None:
                if full:
                    return  # needs an atom outside the box: never taken
                continue
            lits.append(-var if full else var)
        if source is not None:
            lits.append(-source)
        clauses.append([*lits, target])
        incoming.setdefault(target, set()).add(0 if source is None else source)

    start, heading = box.entry(position)
    ahead, left, right, _ = _ahead(start, heading)
    a, lv, rv = atom(ahead), atom(left), atom(right)
    edge(None, [(a, True)], end(ABSORBED))
    edge(None, [(a, False), (lv, True)], end(REFLECTED))
    edge(None, [(a, False), (lv, False), (rv, True)], end(REFLECTED))
    edge(None, [(a, False), (lv, False), (rv, False)], state(ahead, heading))
    while todo:
        cell, heading = todo.pop()
        source = states[(cell, heading)]
        ahead, left, right, perp = _ahead(cell, heading)
        a, lv, rv = atom(ahead), atom(left), atom(right)
        edge(source, [(a, True)], end(ABSORBED))
        edge(source, [(a, False), (lv, True), (rv, True)], end(REFLECTED))
        back = (-perp[0], -perp[1])
        edge(source, [(a, False), (lv, True), (rv, False)], state(_step(cell, back), back))
        edge(source, [(a, False), (lv, False), (rv, True)], state(_step(cell, perp), perp))
        edge(source, [(a, False), (lv, False), (rv, False)], state(_step(cell, heading), heading))
    # A state or an end is true only when a state before it is (the entry's need no support).
    for var in (*states.values(), *ends.values()):
        before = incoming.get(var, set())
        if 0 not in before:
            clauses.append([-var, *sorted(before)])
    bounds = [0]
    for clause in clauses:
        bounds.append(bounds[-1] + len(clause))
    literals = np.fromiter((lit for clause in clauses for lit in clause), dtype=np.int64, count=bounds[-1])
    return _Template(literals, bounds, len(states) + len(ends), dict(ends))


def _step(cell: Cell, heading: Direction) -> Cell:
    return cell[0] + heading[0], cell[1] + heading[1]


# -- answers --------------------------------------------------------------------------


@dataclass(frozen=True)
class Count:
    """How many placements agree: ``value`` exact, or an estimate within a factor
    ``1 + tolerance`` of the count with probability ``confidence``."""

    value: int
    exact: bool
    tolerance: float | None = None
    confidence: float | None = None
    method: str = "enumerated"

    def __str__(self) -> str:
        if self.exact:
            return f"{self.value:,}"
        return (
            f"about {self.value:,} (within x{1 + (self.tolerance or 0):g}, {self.confidence:.0%} confidence)"
        )


@dataclass(frozen=True)
class Solution:
    """The solver's answer to a game (see the module).

    ``backbone`` is (H, W): 1 certainly an atom, 0 certainly empty,
    ``UNDECIDED`` otherwise.  ``placements`` lists every agreeing placement
    (sorted cell tuples, in number order) when the count is exact by
    enumeration, else None; ``samples`` are near-uniform placements when
    not.  ``probabilities`` is (H, W); ``margin`` the largest half-width of a
    cell's 95% interval when they come from samples (0 when exact).
    """

    box: Box
    atoms_min: int
    atoms_max: int
    rays: tuple[tuple[int, Result], ...]
    consistent: bool
    core: tuple[int, ...] | None
    backbone: np.ndarray
    count: Count
    placements: list[tuple[int, ...]] | None
    samples: list[tuple[int, ...]] | None
    probabilities: np.ndarray
    margin: float
    extra: dict = field(default_factory=dict, compare=False)


def solve(
    width: int,
    height: int,
    atoms_min: int,
    atoms_max: int,
    rays: Sequence[tuple[int, Result]],
    *,
    limit: int = ENUMERATION_LIMIT,
    seconds: float | None = ENUMERATION_SECONDS,
    samples: int = SAMPLES,
    sampling: float | None = SAMPLING_SECONDS,
    stop: Stop | None = None,
    seed: int = 1,
    search: bool = True,
) -> Solution:
    """Answer a game on a ``width`` x ``height`` box with ``atoms_min``..``atoms_max`` atoms.

    ``rays`` are the shown rays, one per exit pair, as ``(position, result)``.
    Up to ``limit`` agreeing placements are listed (exact answers), for at
    most ``seconds`` (None: no time limit); past either, the count is
    estimated (ApproxMC) and the probabilities drawn from ``samples``
    near-uniform placements (UniGen), or those drawn in ``sampling``
    seconds, both in a child process that ``stop`` ends.  Raises SolverCancelled once ``stop`` is set,
    SolverMissing without the packages.
    """
    box = Box(width, height)
    rays = tuple(rays)
    if not rays:
        return _no_ray(box, atoms_min, atoms_max)
    encoding = Encoding(box, atoms_min, atoms_max, rays)
    _, _, Solver = _pysat()
    fixed = atoms_min == atoms_max
    with Solver(name=SOLVER, bootstrap_with=encoding.hard) as sat, _Interrupter(sat, stop) as guard:
        assumptions = list(encoding.selectors.values())
        if not guard.solve(assumptions):
            core = _minimal_core(guard, encoding)
            zeros = np.zeros((height, width))
            return Solution(
                box, atoms_min, atoms_max, rays, False, core, zeros.astype(np.int8), Count(0, True),
                [], None, zeros, 0.0,
            )  # fmt: skip
        backbone = None
        if search:
            first = guard.model()
            seen = [tuple(c for c in range(box.cells) if first[c] > 0)]
            backbone = _backbone(guard, box, assumptions, seen)
            exact = _CompiledPathSearch(box, atoms_min, atoms_max, rays, backbone, seconds, stop).solution(
                limit, seed
            )
            if exact is not None:
                return exact
            placements = None
        else:
            placements, seen = _enumerate(guard, encoding, assumptions, fixed, limit, seconds)
        if placements is not None:
            placements.sort(key=lambda atoms: (len(atoms), atoms))
            counts = np.zeros(box.cells)
            for atoms in placements:
                counts[list(atoms)] += 1
            backbone = np.where(counts == len(placements), 1, np.where(counts == 0, 0, UNDECIDED))
            return Solution(
                box, atoms_min, atoms_max, rays, True, None, backbone.astype(np.int8).reshape(height, width),
                Count(len(placements), True), placements, None,
                (counts / len(placements)).reshape(height, width), 0.0,
            )  # fmt: skip
        clauses = encoding.hard + [[s] for s in assumptions]
        if backbone is not None:  # the cells known certain, as units: less for ApproxMC and UniGen to do
            clauses += [
                [c + 1 if v == 1 else -(c + 1)] for c, v in enumerate(backbone.tolist()) if v != UNDECIDED
            ]
        count, drawn = _count_and_samples(clauses, box.cells, samples, seed, sampling, stop)
        for atoms in drawn:
            seen.append(atoms)
        if backbone is None:
            backbone = _backbone(guard, box, assumptions, seen)
    counts = np.zeros(box.cells)
    for atoms in drawn:
        counts[list(atoms)] += 1
    probabilities = counts / max(1, len(drawn))
    # Cells the backbone settles are certain, whatever the samples say.
    probabilities[backbone == 1], probabilities[backbone == 0] = 1.0, 0.0
    undecided = probabilities[backbone == UNDECIDED]
    # The half-width of a 95% interval of a proportion, at its widest over the undecided cells.
    draws = max(1, len(drawn))
    spread = np.maximum(undecided * (1 - undecided), 1 / draws)
    margin = float(1.96 * np.sqrt(spread / draws).max(initial=0.0))
    return Solution(
        box, atoms_min, atoms_max, rays, True, None, backbone.reshape(height, width), count, None,
        drawn, probabilities.reshape(height, width), margin,
    )  # fmt: skip


def next_shots(solution: Solution, unknown: Sequence[int], by: str = "remaining") -> list:
    """The positions ``unknown`` (not shot yet), best first, as ``bbcore.shots.next_shots`` ranks them.

    From the listed placements the figures are exact.  From samples, each
    outcome's count is the estimated count times its share of the samples;
    the expected candidates left (sum of n^2 / N) and the information (the
    entropy of the shares) are estimated the same way.
    """
    from bbcore.shots import NextShot, rank_shots, shot_figures, shot_of_counts

    listed = solution.placements if solution.placements is not None else solution.samples
    if not solution.consistent or not listed or not unknown or solution.count.value <= 1:
        return []
    box = solution.box
    grid = np.zeros((len(listed), box.cells), dtype=bool)
    for row, atoms in enumerate(listed):
        grid[row, list(atoms)] = True
    codes = trace_many(box, grid, unknown)
    width = box.positions + 2
    shots = []
    for i, position in enumerate(unknown):
        counts = np.bincount(codes[:, i] + 2, minlength=width)
        if solution.placements is not None:
            shots.append(shot_of_counts(position, counts))
            continue
        scale = solution.count.value / len(listed)
        remaining, information = shot_figures(counts)
        outcomes = sorted(
            ((result_of(code - 2), round(n * scale)) for code, n in enumerate(counts.tolist()) if n),
            key=lambda o: -o[1],
        )
        shots.append(NextShot(position, tuple(outcomes), float(remaining * scale), float(information)))
    return rank_shots(shots, by)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Judgement:
    """A guess judged against the hidden placement.

    ``ray`` is a position whose ray tells the guess from the hidden placement,
    with both results, when there is one (None when every ray agrees).
    """

    accepted: bool
    rule: Rule
    ray: tuple[int, Result, Result] | None
    misplaced: int


def judge(box: Box, hidden: Iterable[int], guess: Iterable[int], rule: Rule) -> Judgement:
    """Judge ``guess`` by Emacs' rule (the exact cells) or Tatham's (the same result on every ray).

    The first position (in order) whose results differ is named when there
    is one: under Emacs' rule a guess can be refused while no ray tells it
    apart (then ``ray`` is None and the spectrum is ambiguous).
    """
    hidden, guess = tuple(sorted(set(hidden))), tuple(sorted(set(guess)))
    ray = None
    for position in range(1, box.positions + 1):
        truth, guessed = trace_result(box, hidden, position), trace_result(box, guess, position)
        if truth != guessed:
            ray = (position, truth, guessed)
            break
    misplaced = len(set(guess) - set(hidden))
    accepted = hidden == guess if rule == "emacs" else ray is None
    return Judgement(accepted, rule, ray, misplaced)


def _no_ray(box: Box, atoms_min: int, atoms_max: int) -> Solution:
    """No ray shown: every placement agrees, counted and weighed by formula."""
    total = sum(comb(box.cells, n) for n in range(atoms_min, atoms_max + 1))
    each = sum(comb(box.cells - 1, n - 1) for n in range(max(1, atoms_min), atoms_max + 1))
    backbone = np.full(box.cells, UNDECIDED, dtype=np.int8)
    probability = each / total if total else 0.0
    if probability == 1.0:
        backbone[:] = 1
    return Solution(
        box, atoms_min, atoms_max, (), True, None, backbone.reshape(box.height, box.width),
        Count(total, True, method="formula"), None, None,
        np.full((box.height, box.width), probability), 0.0,
    )  # fmt: skip


def kernels_ready() -> bool:
    """Whether the compiled path search comes at once (compiled or cached); else the first
    decode that needs it compiles it (about 10 s), which a screen says."""
    from bbcore import solver_kernels
    from bbcore.engine import kernel_ready

    return kernel_ready(solver_kernels.path_kernel)


def _check(stop: Stop | None) -> None:
    if stop is not None and stop.is_set():
        raise SolverCancelled()


class _Interrupter:
    """Runs SAT calls that a stop event ends: each call in slices of CONFLICTS_PER_SLICE conflicts.

    python-sat's CaDiCaL has no ``interrupt`` (it raises NotImplementedError),
    but it keeps a conflict budget (``conf_budget`` and ``solve_limited``):
    a call that runs out of it returns None, keeps what it learnt, and is
    called again after the stop event is looked at.
    """

    def __init__(self, sat, stop: Stop | None) -> None:  # noqa: ANN001 - a pysat solver
        self.sat, self.stop = sat, stop

    def __enter__(self) -> _Interrupter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def solve(self, assumptions: list[int]) -> bool:
        _check(self.stop)
        if self.stop is None:
            return self.sat.solve(assumptions=assumptions)
        while True:
            self.sat.conf_budget(CONFLICTS_PER_SLICE)
            answer = self.sat.solve_limited(assumptions=assumptions)
            if answer is not None:
                return answer
            _check(self.stop)

    def model(self) -> list[int]:
        return self.sat.get_model()

    def core(self) -> list[int]:
        return self.sat.get_core() or []

    def add(self, clause: list[int]) -> None:
        self.sat.add_clause(clause)


def _minimal_core(guard: _Interrupter, encoding: Encoding) -> tuple[int, ...]:
    """The positions of a minimal unsatisfiable set of the shown rays (deletion-based)."""
    position_of = {s: p for p, s in encoding.selectors.items()}
    core = [s for s in guard.core() if s in position_of] or list(position_of)
    i = 0
    while i < len(core):
        trial = core[:i] + core[i + 1 :]
        if not guard.solve(trial):
            smaller = set(guard.core())
            core = [s for s in trial if s in smaller]  # the solver's core may be smaller still
        else:
            i += 1
    return tuple(sorted(position_of[s] for s in core))


def _backbone(
    guard: _Interrupter, box: Box, assumptions: list[int], seen: list[tuple[int, ...]]
) -> np.ndarray:
    """Each cell: 1 an atom in every agreeing placement, 0 in none, ``UNDECIDED`` otherwise.

    A cell seen both ways in the placements already found is undecided; each
    other one is settled by one solver call that asks for the other value
    (its model, when there is one, settles more cells at once).  Measured and
    left: asking for any open cell's other value at once (Janota, Lynce and
    Marques-Silva's chunks) took 66 s against these 41 s on the 20 x 12 full
    spectrum that leaves 80 cells undecided (bench/solver.py, seed 3); and
    the path search given the cells settled in the first 5 or 12 s (29, 35
    certain) did not end in 20 s.
    """
    seen_atom = np.zeros(box.cells, dtype=bool)
    seen_empty = np.zeros(box.cells, dtype=bool)
    for atoms in seen:
        value = np.zeros(box.cells, dtype=bool)
        value[list(atoms)] = True
        seen_atom |= value
        seen_empty |= ~value
    backbone = np.full(box.cells, UNDECIDED, dtype=np.int8)
    for cell in range(box.cells):
        if seen_atom[cell] and seen_empty[cell]:
            continue
        lit = cell + 1 if seen_atom[cell] else -(cell + 1)
        if guard.solve([*assumptions, -lit]):
            other = np.array([v > 0 for v in guard.model()[: box.cells]])
            seen_atom |= other
            seen_empty |= ~other
        else:
            backbone[cell] = 1 if lit > 0 else 0
            guard.add([lit])
    return backbone


def _enumerate(
    guard: _Interrupter,
    encoding: Encoding,
    assumptions: list[int],
    fixed: bool,
    limit: int,
    seconds: float | None,
) -> tuple[list[tuple[int, ...]] | None, list[tuple[int, ...]]]:
    """Every agreeing placement (blocking clauses over the cells), or None past ``limit``
    placements or ``seconds``; then the placements met so far.

    The blocking clauses hang on an activation literal, turned off when the
    listing stops past ``limit``, so that the solver is left as it was.
    """
    cells = encoding.box.cells
    active = encoding._new()
    found: list[tuple[int, ...]] = []
    deadline = None if seconds is None else time.monotonic() + seconds
    while guard.solve([*assumptions, active]):
        model = guard.model()
        atoms = tuple(c for c in range(cells) if model[c] > 0)
        found.append(atoms)
        if len(found) > limit or (deadline is not None and time.monotonic() > deadline):
            guard.add([-active])
            return None, found
        # With a fixed count, "not all these atoms" blocks exactly this placement.
        if fixed:
            guard.add([-active, *(-(c + 1) for c in atoms)])
        else:
            guard.add([-active, *(-(c + 1) if model[c] > 0 else c + 1 for c in range(cells))])
    guard.add([-active])
    return found, found


def _count_and_sample(
    pipe, clauses: list[list[int]], cells: int, samples: int, seed: int, parent: int
) -> None:  # noqa: ANN001
    """In the child: ApproxMC's estimate, then UniGen's near-uniform samples in batches of
    ``SAMPLE_BATCH``, each sent through ``pipe`` as soon as drawn (both projected on the cells).
    The child ends with ``parent``, even when it is killed (``lifeline``)."""
    from bbcore.lifeline import die_with_parent

    die_with_parent(parent)
    try:
        import pyapproxmc
        import pyunigen
    except ImportError:
        pipe.send(
            SolverMissing(
                "too many placements to list: the estimate needs pyapproxmc and pyunigen "
                "(pip install 'bbtui[solver]')"
            )
        )
        return
    projection = list(range(1, cells + 1))
    counter = pyapproxmc.Counter(seed=seed, epsilon=TOLERANCE, delta=1 - CONFIDENCE)
    counter.add_clauses(clauses)
    cell_count, hashes = counter.count(projection)
    pipe.send(Count(cell_count * 2**hashes, False, TOLERANCE, CONFIDENCE, "ApproxMC"))
    drawn = 0
    while drawn < samples:
        sampler = pyunigen.Sampler(seed=seed + drawn)
        for clause in clauses:
            sampler.add_clause(clause)
        batch = min(SAMPLE_BATCH, samples - drawn)
        _, _, found = sampler.sample(num=batch, sampling_set=projection, cell_hash_count=(hashes, cell_count))
        pipe.send([tuple(sorted(v - 1 for v in s if 0 < v <= cells)) for s in found])
        drawn += batch
    pipe.send(None)


def _count_and_samples(
    clauses: list[list[int]], cells: int, samples: int, seed: int, seconds: float | None, stop: Stop | None
) -> tuple[Count, list[tuple[int, ...]]]:
    """The estimate and the samples drawn in a child process that ``stop`` ends: every sample
    up to ``samples``, or those drawn within ``seconds`` of the estimate (the first batch waited
    for twice as long, then none)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    arguments = (send, clauses, cells, samples, seed, os.getpid())
    child = context.Process(target=_count_and_sample, args=arguments, daemon=True)
    child.start()
    send.close()
    count: Count | None = None
    drawn: list[tuple[int, ...]] = []
    deadline = None
    counting = time.monotonic() + COUNTING_SECONDS
    try:
        while True:
            if count is None and time.monotonic() > counting:
                raise SolverTimeout(
                    f"too many placements agree to count them within {COUNTING_SECONDS:.0f} s "
                    "(shoot more rays, or give a smaller box)"
                )
            if receive.poll(0.05):
                message = receive.recv()
                if isinstance(message, Exception):
                    raise message
                if message is None:
                    break
                if isinstance(message, Count):
                    count = message
                    deadline = None if seconds is None else time.monotonic() + seconds
                else:
                    drawn.extend(message)
                    if deadline is not None and time.monotonic() > deadline:
                        break
            elif deadline is not None and time.monotonic() > deadline + seconds:
                break  # not one batch in twice the time: the margin says so (no sample, no odds)
            elif stop is not None and stop.is_set():
                raise SolverCancelled()
            elif not child.is_alive() and not receive.poll():
                raise RuntimeError(f"the counter's process ended with code {child.exitcode}")
    finally:
        if child.is_alive():
            child.terminate()
        child.join()
        receive.close()
    assert count is not None
    return count, drawn


# -- exact answers by the path search ---------------------------------------------------


class _Exceeded(Exception):
    """The path search went past its budget."""


class _PathSearch:
    """The exact answer by tracing the shown rays over the cells the backbone leaves undecided.

    Each shown ray is traced from its entry, as ``bbcore.rays.trace`` does;
    where its next move depends on an undecided cell, the search branches on
    that cell (an atom, then empty), and a ray whose result is not the shown
    one ends its branch.  A *leaf* is a branch where every shown ray gives its
    result: the cells it set are what the rays looked at, and the cells still
    undecided are *free*, since no shown ray looks at them: any of them may
    hold the atoms left.  So a leaf with ``k`` atoms set and ``F`` free cells
    stands for the sum over the allowed counts ``n`` of C(F, n - k)
    placements, each exactly once (two leaves differ on a cell both set).
    The count, each cell's probability and the backbone are exact sums over
    the leaves; placements are drawn exactly uniformly from them (a leaf by
    its share, then its free atoms).
    """

    def __init__(
        self,
        box: Box,
        least: int,
        most: int,
        rays: Sequence[tuple[int, Result]],
        fixed: np.ndarray,
        seconds: float | None,
        stop: Stop | None,
    ) -> None:
        self.box, self.least, self.most, self.stop = box, least, most, stop
        # Absorbed and reflected rays first: their paths are short and they cut the most.
        self.rays = sorted(rays, key=lambda ray: isinstance(ray[1], int))
        self.starts = [box.entry(position) for position, _ in self.rays]
        self.value = [int(v) for v in fixed]
        self.placed = self.value.count(1)
        self.open = self.value.count(UNDECIDED)
        self.leaves: list[bytes] = []
        # The search's own work (its thread's processor time): on a loaded machine the same game
        # gets the same answer, exact or estimated (the 20 x 12 full spectrum with 80 cells
        # undecided took 12 s of its 25 at load 4, 27 s at load 9, and was then estimated).
        self.deadline = None if seconds is None else time.thread_time() + seconds
        self.branches = 0

    def _index(self, cell: Cell) -> int:
        line, column = cell
        if 1 <= line <= self.box.height and 1 <= column <= self.box.width:
            return (line - 1) * self.box.width + column - 1
        return -1

    def _search(self, i: int, cell: Cell, heading: Direction, started: bool) -> None:
        value, width, height = self.value, self.box.width, self.box.height

        def at(line: int, column: int) -> tuple[int, int]:
            # (index, value) of a cell; outside the box (-1, 0): never an atom.
            if 1 <= line <= height and 1 <= column <= width:
                c = (line - 1) * width + column - 1
                return c, value[c]
            return -1, 0

        while True:
            if i == len(self.rays):
                if len(self.leaves) >= PATH_LEAVES:
                    raise _Exceeded()
                self.leaves.append(bytes(v + 1 for v in value))
                return
            # As bbcore.rays.trace: the cell ahead, then its two diagonals (left, right).
            dl, dc = heading
            al, ac = cell[0] + dl, cell[1] + dc
            a, va = at(al, ac)
            if va == UNDECIDED:
                return self._branch(a, i, cell, heading, started)
            result: Result | None = None
            if va == 1:
                result = ABSORBED
            else:
                lc, vl = at(al + dc, ac + dl)
                if vl == UNDECIDED:
                    return self._branch(lc, i, cell, heading, started)
                if not started and vl == 1:
                    result = REFLECTED
                else:
                    rc, vr = at(al - dc, ac - dl)
                    if vr == UNDECIDED:
                        return self._branch(rc, i, cell, heading, started)
                    if not started:
                        if vr == 1:
                            result = REFLECTED
                        else:
                            cell, started = (al, ac), True
                            continue
                    elif vl == 1 and vr == 1:
                        result = REFLECTED
                    else:
                        if vl == 1:
                            heading = (-dc, -dl)
                        elif vr == 1:
                            heading = (dc, dl)
                        cell = (cell[0] + heading[0], cell[1] + heading[1])
                        if 1 <= cell[0] <= height and 1 <= cell[1] <= width:
                            continue
                        result = self.box.position_at(cell)
            if result != self.rays[i][1]:
                return None
            i += 1
            if i < len(self.rays):
                cell, heading = self.starts[i]
                started = False

    def _branch(self, c: int, i: int, cell: Cell, heading: Direction, started: bool) -> None:
        self.branches += 1
        if self.branches % 4096 == 0:
            _check(self.stop)
            if self.deadline is not None and time.thread_time() > self.deadline:
                raise _Exceeded()
        for v in (1, 0):
            if (v == 1 and self.placed >= self.most) or (v == 0 and self.placed + self.open - 1 < self.least):
                continue
            self.value[c], self.open, self.placed = v, self.open - 1, self.placed + v
            self._search(i, cell, heading, started)
            self.value[c], self.open, self.placed = UNDECIDED, self.open + 1, self.placed - v

    def solution(self, limit: int, seed: int) -> Solution | None:
        """The exact answer, placements listed when at most ``limit``, else drawn exactly
        uniformly (``UNIFORM_SAMPLES``); None past the budget."""
        leaves = self._leaves(limit)
        if leaves is None:
            return None
        return leaves.solution(self, limit, seed)

    def _leaves(self, limit: int) -> _Leaves | None:
        """Every leaf, kept (the reference: plain Python); None past the budget."""
        try:
            cell, heading = self.starts[0]
            self._search(0, cell, heading, False)
        except _Exceeded:
            return None
        # 0 a free cell, 1 empty, 2 an atom.
        rows = np.frombuffer(b"".join(self.leaves), dtype=np.uint8).reshape(len(self.leaves), self.box.cells)
        placed, free = (rows == 2).sum(axis=1).tolist(), (rows == 0).sum(axis=1).tolist()
        slots: dict[tuple[int, int], int] = {}
        row_group = np.array(
            [slots.setdefault(key, len(slots)) for key in zip(placed, free, strict=True)], dtype=np.int64
        )
        of = [row_group == g for g in range(len(slots))]
        atoms = np.array([(rows[rows_g] == 2).sum(axis=0) for rows_g in of], dtype=np.int64)
        empties = np.array([(rows[rows_g] == 1).sum(axis=0) for rows_g in of], dtype=np.int64)
        leaves = np.bincount(row_group, minlength=len(slots)).astype(np.int64)
        cells = self.box.cells
        return _Leaves(
            list(slots), leaves, atoms.reshape(-1, cells), empties.reshape(-1, cells), rows.astype(np.int8),
            row_group, None,
        )  # fmt: skip

    def completions(self, placed: int, free: int) -> int:
        """Placements of a leaf: the ways to put the atoms left in its free cells."""
        return sum(
            comb(free, n - placed) for n in range(max(self.least, placed), min(self.most, placed + free) + 1)
        )


@dataclass
class _Leaves:
    """The path search's leaves, by group: the leaves with ``placed`` atoms set and ``free``
    cells free (``groups[g]``, in the order the search met them), how many (``leaves``), and per
    cell how many of them set an atom there (``atoms``, (G, W*H)) or set it empty (``empties``;
    a cell the backbone settles counts as set by every leaf).  ``rows`` are the first leaves
    met, in the search's order (0 free, 1 empty, 2 an atom), ``row_group`` their groups;
    ``pick`` writes out the leaves of given ranks in their groups when ``rows`` are not all."""

    groups: list[tuple[int, int]]
    leaves: np.ndarray
    atoms: np.ndarray
    empties: np.ndarray
    rows: np.ndarray
    row_group: np.ndarray
    pick: object | None  # Callable[[list[list[int]]], list[list[np.ndarray]]]

    def solution(self, search: _PathSearch, limit: int, seed: int) -> Solution:
        """The exact answer from the leaves (see ``_PathSearch.solution``)."""
        box = search.box
        weights = [search.completions(k, f) for k, f in self.groups]
        count = sum(int(n) * w for n, w in zip(self.leaves.tolist(), weights, strict=True))
        numerators = [0] * box.cells
        for g, (k, f) in enumerate(self.groups):
            each, on_free = weights[g], search.completions(k + 1, f - 1) if f else 0
            n = int(self.leaves[g])
            atoms, empties = self.atoms[g].tolist(), self.empties[g].tolist()
            for c in range(box.cells):
                numerators[c] += atoms[c] * each + (n - atoms[c] - empties[c]) * on_free
        backbone = np.array(
            [1 if n == count else 0 if n == 0 else UNDECIDED for n in numerators], dtype=np.int8
        ).reshape(box.height, box.width)
        probabilities = np.array([n / count for n in numerators]).reshape(box.height, box.width)
        how = Count(count, True, method="path search")
        rays = tuple(sorted(search.rays, key=lambda ray: ray[0]))
        least, most = search.least, search.most
        if count <= limit:  # then every leaf is in ``rows`` (a leaf stands for one placement at least)
            placements = sorted(self._every(search, self.rows), key=lambda a: (len(a), a))
            return Solution(
                box, least, most, rays, True, None, backbone, how, placements, None, probabilities, 0.0,
            )  # fmt: skip
        drawn = self._draw(search, weights, count, UNIFORM_SAMPLES, seed)
        return Solution(
            box, least, most, rays, True, None, backbone, how, None, drawn, probabilities, 0.0,
            {"uniform": True},
        )  # fmt: skip

    @staticmethod
    def _every(search: _PathSearch, rows: np.ndarray) -> Iterable[tuple[int, ...]]:
        for row in rows:
            atoms = np.flatnonzero(row == 2).tolist()
            free = np.flatnonzero(row == 0).tolist()
            for n in range(max(search.least, len(atoms)), min(search.most, len(atoms) + len(free)) + 1):
                for extra in itertools.combinations(free, n - len(atoms)):
                    yield tuple(sorted([*atoms, *extra]))

    def _draw(
        self, search: _PathSearch, weights: list[int], count: int, samples: int, seed: int
    ) -> list[tuple[int, ...]]:
        """``samples`` placements drawn exactly uniformly: a number below the count names a
        group (by its share), a leaf of it (by its rank in the search's order), how many atoms
        (by their share of the leaf); then which free cells."""
        rng = random.Random(seed)
        shares = [int(n) * w for n, w in zip(self.leaves.tolist(), weights, strict=True)]
        cumulative = list(itertools.accumulate(shares))
        wanted: list[tuple[int, int, int]] = []  # group, rank, the pick in the leaf
        for _ in range(samples):
            r = rng.randrange(count)
            g = bisect_right(cumulative, r)
            rank, pick = divmod(r - (cumulative[g - 1] if g else 0), weights[g])
            wanted.append((g, rank, pick))
        ranks: list[list[int]] = [[] for _ in self.groups]
        for g, rank, _ in wanted:
            ranks[g].append(rank)
        if len(self.rows) == int(self.leaves.sum()):
            of_group = [np.flatnonzero(self.row_group == g) for g in range(len(self.groups))]
            found = [[self.rows[of_group[g][rank]] for rank in sorted(r)] for g, r in enumerate(ranks)]
        else:
            found = self.pick([sorted(r) for r in ranks])  # type: ignore[operator]
        by_rank = [dict(zip(sorted(ranks[g]), found[g], strict=True)) for g in range(len(self.groups))]
        drawn = []
        for g, rank, pick in wanted:
            row = by_rank[g][rank]
            atoms = np.flatnonzero(row == 2).tolist()
            free = np.flatnonzero(row == 0).tolist()
            for n in range(max(search.least, len(atoms)), search.most + 1):
                pick -= comb(len(free), n - len(atoms))
                if pick < 0:
                    break
            drawn.append(tuple(sorted([*atoms, *rng.sample(free, n - len(atoms))])))
        return drawn


class _CompiledPathSearch(_PathSearch):
    """The path search run by numba (``bbcore.solver_kernels.path_kernel``): the same search,
    the same leaves in the same order, so the same answers as the plain one (the reference),
    its leaves added up by group instead of kept.  Past ``PATH_LEAVES`` leaves or the deadline
    it gives up as the plain one does."""

    BUDGET: Final = 1 << 16
    """Branches per call of the kernel: the stop event and the deadline are looked at between."""

    ROWS_BYTES: Final = 32 << 20
    """The most bytes of leaves written out (the draws then come from them, with no second run)."""

    def _leaves(self, limit: int) -> _Leaves | None:
        from bbcore import solver_kernels as k
        from bbcore.engine import compiled

        box = self.box
        side = box.width + 2
        self.kernel = compiled(k.path_kernel)
        self.box_cell, self.exit_code = k.padded_tables(box.width, box.height)
        self.start_value = np.zeros((box.height + 2) * side, dtype=np.int8)
        self.start_value[self.box_cell] = np.array(self.value, dtype=np.int8)
        self.start_rays = np.array(
            [(line, column, dl, dc) for (line, column), (dl, dc) in self.starts], dtype=np.int64
        ).reshape(-1, 4)
        self.expected = np.array([code_of(result) for _, result in self.rays], dtype=np.int64)
        cells = box.cells
        row_limit = max(limit + 1, min(PATH_LEAVES, self.ROWS_BYTES // max(1, cells)))
        rows = np.zeros((max(0, row_limit), cells), dtype=np.int8)
        row_group = np.zeros(len(rows), dtype=np.int64)
        run = self._run(rows, row_group, None)
        if run is None:
            return None
        slot, leaves, atoms, empties, state = run
        groups = int(state[k.GROUPS])
        leaves, atoms, empties = leaves[:groups], atoms[:groups], empties[:groups]
        order = [(k_, f) for k_ in range(slot.shape[0]) for f in range(slot.shape[1]) if slot[k_, f] >= 0]
        order.sort(key=lambda key: slot[key])
        atoms, empties = atoms[:, self.box_cell], empties[:, self.box_cell]
        fixed = np.array(self.value)
        atoms[:, fixed == 1] = leaves[:, None]
        empties[:, fixed == 0] = leaves[:, None]
        stored = int(state[k.STORED])
        self.slot = slot
        return _Leaves(order, leaves, atoms, empties, rows[:stored], row_group[:stored], self._pick)

    def _run(self, rows: np.ndarray, row_group: np.ndarray, picks: tuple | None):  # noqa: ANN202
        """One whole run of the kernel: counting the leaves (``picks`` None), or writing out the
        leaves of ``picks`` (start, rank, rows); None past the budget."""
        from bbcore import solver_kernels as k

        box = self.box
        cells, padded = box.cells, len(self.start_value)
        value = self.start_value.copy()
        state = np.zeros(k.STATE_SIZE, dtype=np.int64)
        state[k.PLACED], state[k.OPEN] = self.placed, self.open
        state[k.LINE], state[k.COLUMN], state[k.DL], state[k.DC] = self.start_rays[0]
        stack_cell = np.zeros(cells + 1, dtype=np.int64)
        stack_ray = np.zeros((cells + 1, 6), dtype=np.int64)
        counting = picks is None
        if counting:
            slot = np.full((self.most + 1, cells + 1), -1, dtype=np.int64)
            groups = 16
        else:
            slot = self.slot
            groups = int((slot >= 0).sum())
        leaves = np.zeros(groups, dtype=np.int64)
        atoms = np.zeros((groups, padded), dtype=np.int64)
        empties = np.zeros((groups, padded), dtype=np.int64)
        if counting:
            pick_start = np.zeros(groups + 1, dtype=np.int64)
            pick_rank, pick_rows = np.zeros(0, dtype=np.int64), np.zeros((0, cells), dtype=np.int8)
        else:
            pick_start, pick_rank, pick_rows = picks
        pick_next = pick_start[:-1].copy()
        while True:
            status = self.kernel(
                value, box.width + 2, box.height, box.width, self.start_rays, self.expected, self.exit_code,
                self.box_cell, self.least, self.most, state, stack_cell, stack_ray, slot, leaves, atoms,
                empties, rows, row_group, pick_start, pick_rank, pick_next, pick_rows, counting, self.BUDGET,
            )  # fmt: skip
            self.branches = int(state[k.BRANCHES])
            if status == k.DONE:
                break
            if status == k.GROW:
                leaves = np.concatenate([leaves, np.zeros_like(leaves)])
                atoms = np.concatenate([atoms, np.zeros_like(atoms)])
                empties = np.concatenate([empties, np.zeros_like(empties)])
                continue
            _check(self.stop)
            if counting and self.deadline is not None and time.thread_time() > self.deadline:
                return None
            if counting and int(leaves.sum()) > PATH_LEAVES:
                return None
        if counting and int(leaves.sum()) > PATH_LEAVES:
            return None
        return slot, leaves, atoms, empties, state

    def _pick(self, ranks: list[list[int]]) -> list[list[np.ndarray]]:
        """The leaves of the given ranks (ascending) in each group, by a second run of the search."""
        pick_start = np.array([0, *itertools.accumulate(len(r) for r in ranks)], dtype=np.int64)
        pick_rank = np.array([rank for r in ranks for rank in r], dtype=np.int64)
        pick_rows = np.zeros((len(pick_rank), self.box.cells), dtype=np.int8)
        empty_rows = np.zeros((0, self.box.cells), dtype=np.int8)
        self._run(empty_rows, np.zeros(0, dtype=np.int64), (pick_start, pick_rank, pick_rows))
        return [[pick_rows[i] for i in range(pick_start[g], pick_start[g + 1])] for g in range(len(ranks))]

"""The exactly optimal seeker: the game solved by depth-first branch and bound.

The game (issue 31): the molecule is hidden uniformly at random among the
configuration's molecules; the seeker chooses each ray after seeing the
results so far.  Three objectives, each a *total* over the molecules (an
integer; the mean is the total over the number of molecules, a fraction):

- ``rays``: the seeker shoots until no ray splits the candidates left (one
  molecule, or a spectral group); the total of the rays shot;
- ``worst``: the same game; the largest number of rays any molecule needs;
- ``points``: a ray costs 1 when absorbed or reflected, 2 when it comes out
  (Emacs' scoring); the seeker may stop at any moment and guess the
  candidate that minimises the expected number of wrong atoms (an atom of
  the guess not in the hidden molecule), each wrong atom costing
  ``WRONG_ATOM`` points; the total of points and penalties.

The value of a set S of candidates depends on S alone (a shot whose result
is known already splits nothing, and a shot that splits nothing never
helps), so the state is S; ``T(S)`` below is its optimal total:

- rays: T(S) = 0 when no shot splits S, else |S| + min over shots of the
  sum of T(child) over the shot's outcomes;
- worst: 0 when no shot splits S, else 1 + min over shots of the max of
  the children's;
- points: min(stop(S), min over shots of the sum over its outcomes of
  |child| x cost(outcome) + T(child)), where stop(S) = 5 x min over the
  guesses g in S of the sum over m in S of the atoms of g not in m.

How it is searched (``Search.solve``): depth first, a set at a time, with a
*budget* β: the answer is exact when below β, and a lower bound (>= β)
otherwise.  At each set, every splitting shot gets a lower bound (its cost
plus the lower bounds of its children, below); the shots are tried from the
lowest bound, and one whose bound reaches the best total found so far is cut
off, as is a shot whose partial sum (children solved so far, plus the lower
bounds of the others) reaches it.  The root's first budget is one more than
the greedy book's total (``bbcore.strategy``, by remaining): a strategy that
good always exists.

Lower bounds (all admissible: never above the exact total; the tests check
it on every sub-problem of A3_B5), with b the most outcomes any one shot has
over S (no shot has more over a subset) and k the spectral groups in S with
sizes w_1..w_k (no strategy ever splits a group, and every group must end
alone in a leaf):

- rays, *Huffman*: any strategy is a tree whose nodes have at most b
  children and whose leaves are exactly the k groups, of total cost the sum
  of w_i x depth_i; b-ary Huffman coding gives the least such sum over all
  such trees, so the least over strategies is at least that;
- worst, *information*: a tree with at most b children per node and k
  leaves is at least ceil(log_b k) deep;
- points, *one ray or a guess*: min(stop(S), |S|) when a shot splits S (a
  strategy either stops now, or shoots at least one ray costing 1 per
  molecule), stop(S) otherwise (the value itself);
- and for every objective the *one-step* bound: the least, over the
  splitting shots, of the shot's cost plus its children's bounds above (each
  strategy starts with one of those shots), each child's with its own b (the
  most outcomes of a shot over the child); the set's bound is the better of
  the two (for points: the lesser of stop(S) and the one-step bound).

For rays and points the children of a shot are solved exactly (no budget),
the shot given up once the children solved and the bounds of the others
reach the best total; for worst a child is searched with the budget
best - 1 (the first child that reaches it rules the shot out).

Sub-problems are memoised (``Search.memo``) by the canonical form of the set
under the 8 symmetries (the lowest of the 8 images' sorted molecule indexes,
hashed to 16 bytes with BLAKE2b: a collision among 10^9 sets has a
probability under 10^-20): an exact total with the best shot (in the
canonical set's positions), or a lower bound proved by a budget that was not
met.  The memo is bounded (``memory``): past it, the lower bounds and then
the exact totals of the smallest sets are forgotten (a forgotten set is
searched again; nothing is wrong, only slower).  It persists in the store
(``OptimalRun``), so that a stopped search goes on from what it proved.

The spectra of every molecule are computed once by the engine (one trace of
the whole configuration) as codes (``bbcore.strategy.codes_of_partner``);
a candidate set is an array of molecule indexes, and the figures of every
shot over a set come from one numba kernel (``bbcore.optimal_kernels``).
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, Literal

import numpy as np

from bbcore.config import Config
from bbcore.engine import _symmetry_tables, image_numbers
from bbcore.numbering import atoms_of_numbers, binomial_table
from bbcore.optimal_kernels import canonical_kernel, evaluate_kernel, split_kernel
from bbcore.strategy import NODE_COLUMNS, Nodes, StrategyBook

OBJECTIVES: Final = ("rays", "worst", "points")
Objective = Literal["rays", "worst", "points"]
WRONG_ATOM: Final = 5
"""Points a wrong atom of the final guess costs (``points``)."""
STOP: Final = -1
"""The best 'shot' of a set where the seeker stops and guesses (``points``)."""
LEAF: Final = -2
"""No shot: a set no ray splits."""
UNBOUNDED: Final = 1 << 62
"""A budget no total reaches: the set is solved exactly."""
MEMORY_MB: Final = 1024
"""The memo's default bound, in MB (``--memory``)."""
ENTRY_BYTES: Final = 200
"""What one memo entry takes in a Python dict: a 16-byte key, a tuple of 4 small integers."""
CHECKPOINT_SECONDS: Final = 60.0
"""How often a running search stores its memo (so that a killed search loses at most this)."""
MOLECULE_LIMIT: Final = 2_000_000
"""The most molecules a configuration may have to be searched (its spectra in memory)."""


class OptimalError(ValueError):
    """A search that cannot run; the message is one line for the user."""


# ---------------------------------------------------------------------------
# The configuration's data


@dataclass
class Problem:
    """Every molecule of a configuration as the search needs it (indexes = number - 1).

    ``codes[m, p]``: molecule m's result at position p (0 reflected, 1
    absorbed, 2 + q out at q); ``group[m]``: its spectral group (equal
    spectra, equal group); ``atoms[m]``: its atom cells; ``images[m, t]``:
    the index of its image under transform t; ``source[t, P]``: the position
    of a molecule whose image's position P sees the same ray.
    """

    config: Config
    codes: np.ndarray
    group: np.ndarray
    atoms: np.ndarray
    images: np.ndarray
    source: np.ndarray
    inverse: np.ndarray

    @classmethod
    def of(cls, config: Config, codes: np.ndarray | None = None) -> Problem:
        """The data of ``config``; its spectra traced unless ``codes`` are given."""
        from bbcore.strategy import spectra_codes

        if config.nb_mol > MOLECULE_LIMIT:
            raise OptimalError(
                f"{config.name} has {config.nb_mol:,} molecules: too many to search "
                f"(the limit is {MOLECULE_LIMIT:,})"
            )
        if codes is None:
            codes = spectra_codes(config, "compute")[0]
        _, group = np.unique(codes, axis=0, return_inverse=True)
        table = binomial_table(config)
        atoms = atoms_of_numbers(config, np.arange(1, config.nb_mol + 1, dtype=np.int64), table)
        images = (image_numbers(config, atoms, table) - 1).astype(np.int32)
        _, source, inverse = _symmetry_tables(config.width)
        return cls(
            config=config,
            codes=np.ascontiguousarray(codes, dtype=np.int8),
            group=group.reshape(-1).astype(np.int64),
            atoms=np.ascontiguousarray(atoms, dtype=np.int64),
            images=images,
            source=source,
            inverse=inverse,
        )

    @property
    def everyone(self) -> np.ndarray:
        """The root's set: every molecule."""
        return np.arange(self.config.nb_mol, dtype=np.int32)

    def canonical(self, members: np.ndarray) -> tuple[bytes, int]:
        """The memo key of a set (its lowest image under the 8 symmetries, hashed) and the
        transform that gives that image."""
        form = np.empty(len(members), dtype=np.int32)
        t = canonical_kernel()(self.images, members, form)
        return hashlib.blake2b(form.byteswap().tobytes(), digest_size=16).digest(), int(t)

    def split(self, members: np.ndarray, position: int) -> list[tuple[int, np.ndarray]]:
        """The children of a shot: (outcome code, their members) in code order."""
        out = np.empty(len(members), dtype=np.int32)
        starts = np.empty(self.config.positions + 3, dtype=np.int64)
        outcome = np.empty(self.config.positions + 2, dtype=np.int64)
        k = split_kernel()(self.codes, members, position, out, starts, outcome)
        return [(int(outcome[i]), out[starts[i] : starts[i + 1]]) for i in range(k)]

    def wrong(self, members: np.ndarray) -> tuple[int, np.ndarray]:
        """The best guess over a set (the member with the fewest wrong atoms summed over the
        set, the first such) and each member's wrong atoms against it."""
        atoms = self.atoms[members]
        counts = np.bincount(atoms.ravel(), minlength=self.config.cells)
        shared = counts[atoms].sum(axis=1)
        guess = int(np.argmax(shared))
        held = np.zeros(self.config.cells, dtype=bool)
        held[atoms[guess]] = True
        return int(members[guess]), self.config.atoms - held[atoms].sum(axis=1)

    def stop_cost(self, members: np.ndarray) -> int:
        """stop(S): the penalty of the best guess over a set, summed over it."""
        return WRONG_ATOM * int(self.wrong(members)[1].sum())


# ---------------------------------------------------------------------------
# Every shot's figures over one set (the kernels: ``bbcore.optimal_kernels``)


@dataclass
class Figures:
    """What the evaluation kernel says of one set."""

    kinds: np.ndarray
    cost: np.ndarray
    bound: np.ndarray
    child_bound: np.ndarray
    groups: int
    lower: int
    stop: int


def evaluate(problem: Problem, members: np.ndarray, objective: Objective) -> Figures:
    """Every shot's figures over a set, and the set's lower bound."""
    npos = problem.config.positions
    kinds = np.zeros(npos, dtype=np.int64)
    cost = np.zeros(npos, dtype=np.int64)
    bound = np.full(npos, -1, dtype=np.int64)
    child_bound = np.zeros((npos, npos + 2), dtype=np.int64)
    own = np.zeros(4, dtype=np.int64)
    evaluate_kernel()(
        problem.codes,
        problem.group,
        problem.atoms,
        np.ascontiguousarray(members, dtype=np.int32),
        OBJECTIVES.index(objective),
        WRONG_ATOM,
        kinds,
        cost,
        bound,
        child_bound,
        own,
    )
    return Figures(kinds, cost, bound, child_bound, int(own[1]), int(own[2]), int(own[3]))


def lower_bound(problem: Problem, members: np.ndarray, objective: Objective) -> int:
    """The admissible lower bound of a set's optimal total (the module's docstring)."""
    if len(members) <= 1:
        return 0
    return evaluate(problem, members, objective).lower


# ---------------------------------------------------------------------------
# The search


Progress = Callable[["Search"], None]


class Paused(Exception):
    """The search was asked to stop (``stop`` set); the memo is kept."""


@dataclass
class Search:
    """A branch-and-bound search of one objective over one configuration.

    ``memo`` maps a canonical set's key to (total or lower bound, exact,
    best shot in the canonical set's positions, set size).
    """

    problem: Problem
    objective: Objective
    memory: int = MEMORY_MB
    memo: dict[bytes, tuple[int, bool, int, int]] = field(default_factory=dict)
    progress: Progress | None = None
    stop: Callable[[], bool] | None = None
    checkpoint: Callable[[Search], None] | None = None
    nodes: int = 0
    seconds: float = 0.0
    evicted: int = 0
    _began: float = 0.0
    _reported: float = 0.0
    _saved: float = 0.0
    _first_nodes: int = 0
    every: float = CHECKPOINT_SECONDS
    """Seconds between two calls of ``checkpoint``."""
    upper_found: int | None = None
    """The best total of a strategy the search completed at the root (a proved upper bound)."""

    @property
    def limit(self) -> int:
        """The most memo entries kept (``memory`` MB)."""
        return max(1000, self.memory * 1_000_000 // ENTRY_BYTES)

    @property
    def rate(self) -> float:
        """Sets searched a second, this run."""
        elapsed = time.perf_counter() - self._began if self._began else 0.0
        return (self.nodes - self._first_nodes) / elapsed if elapsed > 0 else 0.0

    def run(self, upper: int) -> int:
        """The optimal total of every molecule, given a strategy's total ``upper``."""
        self._began = self._reported = self._saved = time.perf_counter()
        self._first_nodes = self.nodes
        try:
            value = self.solve(self.problem.everyone, upper + 1)
        finally:
            self.seconds += time.perf_counter() - self._began
        if value > upper:  # pragma: no cover - a bug, never a result
            raise AssertionError(f"the search found no strategy as good as {upper}")
        return value

    def solve(self, members: np.ndarray, beta: int, known: int = 0) -> int:
        """The optimal total of a set when it is below ``beta``; else a lower bound >= beta.
        ``known`` is a lower bound already known (the parent's bound for this child)."""
        n = len(members)
        if n <= 1:
            return 0
        if known >= beta:
            return known
        if n == 2:
            return self._pair(members)[0]
        key, transform = self.problem.canonical(members)
        entry = self.memo.get(key)
        if entry is not None:
            value, exact, _, _ = entry
            if exact or value >= beta:
                return value
            known = max(known, value)
        self._tick()
        figures = evaluate(self.problem, members, self.objective)
        if figures.groups == 1:
            return figures.stop if self.objective == "points" else 0
        lower = max(known, figures.lower)
        if lower >= beta:
            self._remember(key, lower, False, LEAF, n)
            return lower
        best, best_shot = beta, None
        if self.objective == "points" and figures.stop < best:
            best, best_shot = figures.stop, STOP
        splitting = np.flatnonzero(figures.kinds >= 2)
        shots = sorted(splitting.tolist(), key=lambda p: (figures.bound[p], -figures.kinds[p], p))
        for p in shots:
            if figures.bound[p] >= best or best <= lower:
                break  # no shot left can do better (the bound is reached)
            total = self._through(members, p, figures, best)
            if total < best:
                best, best_shot = total, p
                if n == self.problem.config.nb_mol:
                    self.upper_found = total
        if best_shot is None:
            self._remember(key, beta, False, LEAF, n)
            return beta
        shot = best_shot if best_shot == STOP else int(self.problem.inverse[transform, best_shot])
        self._remember(key, best, True, shot, n)
        return best

    def _pair(self, members: np.ndarray) -> tuple[int, int]:
        """(optimal total, best shot) of a set of two molecules, without the memo: any
        shot that tells them apart ends the game (the cheapest one for points)."""
        a, b = self.problem.codes[members[0]], self.problem.codes[members[1]]
        apart = np.flatnonzero(a != b)
        if len(apart) == 0:
            return (self.problem.stop_cost(members) if self.objective == "points" else 0), LEAF
        if self.objective == "rays":
            return 2, int(apart[0])
        if self.objective == "worst":
            return 1, int(apart[0])
        paid = np.where(a[apart] < 2, 1, 2) + np.where(b[apart] < 2, 1, 2)
        shot = int(apart[np.argmin(paid)])
        stop = self.problem.stop_cost(members)
        return (stop, STOP) if stop <= int(paid.min()) else (int(paid.min()), shot)

    def _through(self, members: np.ndarray, p: int, figures: Figures, best: int) -> int:
        """The optimal total through shot p when below ``best``; else something >= best."""
        children = self.problem.split(members, p)
        bounds = [int(figures.child_bound[p, c]) for c, _ in children]
        if self.objective == "worst":
            order = sorted(range(len(children)), key=lambda i: (-bounds[i], -len(children[i][1])))
            deepest = 0
            for i in order:
                value = self.solve(children[i][1], best - 1, bounds[i])
                if value >= best - 1:
                    return best
                deepest = max(deepest, value)
            return 1 + deepest
        # rays, points: each child solved exactly (an exact total is never searched again,
        # where a child cut off by a budget is searched again under a larger one: on A3_B4
        # and A3_B5 this searched 7 to 30% fewer sets); the shot is still given up as soon
        # as the children solved and the others' bounds reach the best total.
        order = sorted(range(len(children)), key=lambda i: -len(children[i][1]))
        total = int(figures.cost[p])
        rest = int(figures.bound[p]) - total
        for i in order:
            rest -= bounds[i]
            total += self.solve(children[i][1], UNBOUNDED, bounds[i])
            if total + rest >= best:
                return best
        return total

    def _remember(self, key: bytes, value: int, exact: bool, shot: int, size: int) -> None:
        old = self.memo.get(key)
        if old is not None and old[1] and not exact:
            return
        if old is not None and not old[1] and not exact and old[0] >= value:
            return
        self.memo[key] = (value, exact, shot, size)
        if len(self.memo) > self.limit:
            self._evict()

    def _evict(self) -> None:
        """Forget the lower bounds, then the exact totals of the smallest sets, down to 3/4
        of the limit."""
        target = self.limit * 3 // 4
        before = len(self.memo)
        for key in [k for k, v in self.memo.items() if not v[1]]:
            del self.memo[key]
        if len(self.memo) > target:
            sizes = np.fromiter((v[3] for v in self.memo.values()), dtype=np.int64, count=len(self.memo))
            cut = np.partition(sizes, len(sizes) - target)[len(sizes) - target]
            for key in [k for k, v in self.memo.items() if v[3] < cut]:
                del self.memo[key]
        self.evicted += before - len(self.memo)

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes & 63:
            return
        if self.stop is not None and self.stop():
            raise Paused()
        now = time.perf_counter()
        if self.progress is not None and now - self._reported >= 0.5:
            self._reported = now
            self.progress(self)
        if self.checkpoint is not None and now - self._saved >= self.every:
            self._saved = now
            self.checkpoint(self)

    # -- the book ---------------------------------------------------------------

    def best_shot(self, members: np.ndarray) -> int:
        """The optimal shot of a set in its own positions (``STOP``, or ``LEAF`` when no
        shot splits it), searching it again when the memo has forgotten it."""
        if len(members) <= 1:
            return LEAF
        if len(members) == 2:
            return self._pair(members)[1]
        key, transform = self.problem.canonical(members)
        entry = self.memo.get(key)
        if entry is None or not entry[1]:
            figures = evaluate(self.problem, members, self.objective)
            if figures.groups == 1:
                return LEAF
            self.solve(members, UNBOUNDED)
            entry = self.memo.get(key)
            if entry is None or not entry[1]:
                return LEAF
        shot = entry[2]
        if shot < 0:
            return shot
        return int(self.problem.source[transform, shot])

    def value_of(self, members: np.ndarray) -> int:
        """The optimal total of a set."""
        return self.solve(members, UNBOUNDED)


# ---------------------------------------------------------------------------
# Playing a book against every molecule


@dataclass
class Played:
    """A book played against a set of molecules: each one's rays, points and wrong atoms
    (of the guess where it ended), indexed like the problem's molecules; the first shot
    (1-based, None when there is none) and the shots of every node by depth."""

    rays: np.ndarray
    points: np.ndarray
    wrong: np.ndarray
    first_shot: int | None
    tree: Tree | None = None
    """Every node of the book (``play``'s), None for the greedy book (``bbcore.strategy`` has it)."""

    def total(self, objective: Objective, members: np.ndarray) -> int:
        """The book's total over ``members`` scored by ``objective``."""
        if objective == "rays":
            return int(self.rays[members].sum())
        if objective == "worst":
            return int(self.rays[members].max())
        return int(self.points[members].sum() + WRONG_ATOM * self.wrong[members].sum())


Chooser = Callable[[np.ndarray], int]


@dataclass
class Tree:
    """Every node of a played book, in the shape of ``bbcore.strategy.Nodes`` (each node's
    molecules one segment of ``order``), so that it is browsed as a ``StrategyBook``."""

    nodes: Nodes
    order: np.ndarray


def play(problem: Problem, members: np.ndarray, choose: Chooser) -> Played:
    """Play a policy (``choose``: a set's shot, ``STOP`` or ``LEAF``) against every member,
    recording every node (``Played.tree``)."""
    size = problem.config.nb_mol
    rays = np.zeros(size, dtype=np.int16)
    points = np.zeros(size, dtype=np.int16)
    wrong = np.zeros(size, dtype=np.int16)
    order = np.array(members, dtype=np.int64)
    columns: dict[str, list[int]] = {name: [] for name in NODE_COLUMNS}

    def record(parent: int, depth: int, outcome: int, start: int, count: int, known: int, r: int, pts: int):
        for name, value in zip(
            NODE_COLUMNS, (parent, depth, LEAF, outcome, start, count, known, r, pts), strict=True
        ):
            columns[name].append(value)
        return len(columns["parent"]) - 1

    stack = [record(-1, 0, -1, 0, len(order), 0, 0, 0)]
    first = None
    while stack:
        node = stack.pop()
        start, count = columns["start"][node], columns["count"][node]
        now = order[start : start + count].astype(np.int32)
        r, pts, known = columns["rays"][node], columns["points"][node], columns["known"][node]
        shot = choose(now) if count > 1 else LEAF
        if node == 0:
            first = shot + 1 if shot >= 0 else None
        if shot < 0:
            rays[now], points[now] = r, pts
            wrong[now] = problem.wrong(now)[1]
            continue
        columns["shot"][node] = shot
        children = problem.split(now, shot)
        if len(children) < 2:  # pragma: no cover - a bug, never a result
            raise AssertionError(f"the book's shot {shot + 1} does not split its {len(now)} candidates")
        at = start
        for code, child in children:
            order[at : at + len(child)] = child
            seen = known | (1 << shot) | ((1 << (code - 2)) if code >= 2 else 0)
            cost = 1 if code < 2 else 2
            stack.append(
                record(node, columns["depth"][node] + 1, code, at, len(child), seen, r + 1, pts + cost)
            )
            at += len(child)
    nodes = Nodes(*(np.array(columns[name], dtype=np.int64) for name in NODE_COLUMNS))
    return Played(rays, points, wrong, first, Tree(nodes, order))


def greedy_shot(problem: Problem, members: np.ndarray) -> int:
    """The greedy book's shot (``bbcore.shots``' ranking by remaining), LEAF when none splits."""
    from bbcore.shots import rank_shots, shot_of_counts

    codes = problem.codes[members]
    width = problem.config.positions + 2
    shots = []
    for p in range(problem.config.positions):
        counts = np.bincount(codes[:, p], minlength=width)
        if np.count_nonzero(counts) > 1:
            shots.append(shot_of_counts(p + 1, counts))
    if not shots:
        return LEAF
    return rank_shots(shots, "remaining")[0].position - 1


def greedy_total(problem: Problem, members: np.ndarray, objective: Objective) -> int:
    """The greedy book's total over a set, scored by ``objective`` (for points, charged
    the penalty of the best guess at each spectral group where it ends)."""
    return play(problem, members, lambda s: greedy_shot(problem, s)).total(objective, members)


# ---------------------------------------------------------------------------
# Results


def fraction_text(total: int, molecules: int) -> str:
    """A total over the molecules as a reduced fraction: ``"61/20"``, ``"3"``."""
    return str(Fraction(total, molecules))


@dataclass
class Optimum:
    """The result of a search (finished or not)."""

    config: Config
    objective: Objective
    proved: bool
    lower: int
    upper: int
    greedy: int
    seconds: float
    nodes: int
    first_shot: int | None = None
    greedy_first_shot: int | None = None
    difference: dict | None = None
    played: Played | None = None

    def per(self, total: int) -> str:
        return str(total) if self.objective == "worst" else fraction_text(total, self.config.nb_mol)

    def summary(self) -> dict:
        """The ``optimum`` object of ``bbcore strategy --optimal OBJECTIVE --json``."""
        made = {
            "objective": self.objective,
            "value": self.per(self.upper) if self.proved else None,
            "proved": self.proved,
            "greedy": self.per(self.greedy),
            "first_shot": self.first_shot,
            "greedy_first_shot": self.greedy_first_shot,
            "first_difference": self.difference,
            "seconds": round(self.seconds, 3),
            "nodes": self.nodes,
        }
        if not self.proved:
            made["lower"] = self.per(self.lower)
            made["upper"] = self.per(self.upper)
            made["gap"] = self.per(self.upper - self.lower)
        return made


def first_difference(search: Search, limit: int = 2000) -> dict | None:
    """Where the greedy book first errs: the first node, breadth first in the greedy
    book's tree, whose greedy shot is worse than the optimum; None when greedy is optimal
    at every node visited (all, when the tree has at most ``limit`` inner nodes)."""
    problem = search.problem
    queue = [(problem.everyone, [])]
    visited = 0
    while queue and visited < limit:
        members, path = queue.pop(0)
        shot = greedy_shot(problem, members)
        if shot < 0:
            continue
        visited += 1
        optimum = search.value_of(members)
        through = _through_exact(search, members, shot)
        if through > optimum:
            return {
                "path": path,
                "molecules": len(members),
                "greedy_shot": shot + 1,
                "optimal_shot": _shown(search.best_shot(members)),
                "greedy_total": through,
                "optimal_total": optimum,
            }
        for code, child in problem.split(members, shot):
            queue.append((child, [*path, _step_text(shot, code)]))
    return None


def _shown(shot: int) -> int | str:
    return shot + 1 if shot >= 0 else "stop"


def _step_text(shot: int, code: int) -> str:
    from bbcore.strategy import result_of_code, shot_text

    return shot_text(shot + 1, result_of_code(code))


def _through_exact(search: Search, members: np.ndarray, p: int) -> int:
    """The optimal total of a set when its first shot is p."""
    problem = search.problem
    children = problem.split(members, p)
    if search.objective == "worst":
        return 1 + max(search.value_of(child) for _, child in children)
    if search.objective == "points":
        paid = sum(len(child) * (1 if code < 2 else 2) for code, child in children)
    else:
        paid = len(members)
    return paid + sum(search.value_of(child) for _, child in children)


def solve(
    config: Config,
    objective: Objective,
    *,
    problem: Problem | None = None,
    memo: dict | None = None,
    memory: int = MEMORY_MB,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
    checkpoint: Callable[[Search], None] | None = None,
    difference: bool = True,
) -> tuple[Optimum, Search]:
    """Search ``config``'s optimum for ``objective`` to the end (or until ``stop``: then
    ``Paused`` is raised, the memo kept in the search given to ``checkpoint``)."""
    if objective not in OBJECTIVES:
        raise OptimalError(f"unknown objective {objective!r}: expected rays, worst or points")
    problem = problem or Problem.of(config)
    search = Search(problem, objective, memory, memo if memo is not None else {}, progress, stop, checkpoint)
    return finish(search, greedy_played(problem), difference), search


def greedy_played(problem: Problem) -> Played:
    """The greedy book (``bbcore.strategy``, by remaining) played against every molecule,
    with the wrong atoms of the best guess over the spectral group where it ends."""
    from bbcore.strategy import run_policy

    order = np.arange(problem.config.nb_mol, dtype=np.int64)
    run = run_policy(problem.codes, order, "remaining", record_depth=0)
    shot = int(run.nodes.shot[0])
    wrong = np.zeros(problem.config.nb_mol, dtype=np.int16)
    by_group = np.argsort(problem.group, kind="stable")
    cuts = np.flatnonzero(np.diff(problem.group[by_group])) + 1
    for piece in np.split(by_group.astype(np.int32), cuts):
        if len(piece) > 1:
            wrong[piece] = problem.wrong(piece)[1]
    return Played(
        run.rays.astype(np.int16), run.points.astype(np.int16), wrong, shot + 1 if shot >= 0 else None
    )


def finish(search: Search, greedy: Played, difference: bool = True) -> Optimum:
    """Run a search to its end and play its book (``Paused`` when it is stopped)."""
    problem, objective = search.problem, search.objective
    everyone = problem.everyone
    greedy_total_ = greedy.total(objective, everyone)
    value = search.run(greedy_total_)
    played = play(problem, everyone, search.best_shot)
    claimed = played.total(objective, everyone)
    if claimed != value:  # pragma: no cover - a bug, never a result
        raise AssertionError(f"the optimal book plays {claimed}, not the {value} proved")
    optimum = Optimum(
        config=problem.config,
        objective=objective,
        proved=True,
        lower=value,
        upper=value,
        greedy=greedy_total_,
        seconds=search.seconds,
        nodes=search.nodes,
        first_shot=played.first_shot,
        greedy_first_shot=greedy.first_shot,
        played=played,
    )
    if difference:
        optimum.difference = first_difference(search)
    return optimum


def book_summary(config: Config, by: str, played: Played) -> dict:
    """The figures of a played book, in the shape of ``StrategyBook.summary``, with the
    wrong atoms of the guesses."""
    from bbcore.strategy import HARDEST

    def figures(values: np.ndarray) -> dict:
        counts = np.bincount(values.astype(np.int64))
        return {
            "mean": float(values.mean()),
            "max": int(values.max()),
            "histogram": {str(k): int(n) for k, n in enumerate(counts) if n},
        }

    hardest = np.lexsort((np.arange(len(played.rays)), -played.points.astype(np.int64), -played.rays))
    return {
        "config": config.name,
        "by": by,
        "molecules": config.nb_mol,
        "first_shot": played.first_shot,
        "rays": figures(played.rays),
        "points": figures(played.points),
        "wrong_atoms": figures(played.wrong),
        "hardest": [int(i) + 1 for i in hardest[:HARDEST]],
    }


def optimal(
    config: Config,
    objective: Objective,
    *,
    recompute: bool = False,
    memory: int = MEMORY_MB,
    seconds: float | None = None,
    checkpoint: float = CHECKPOINT_SECONDS,
    progress: Progress | None = None,
    store: bool = True,
    problem: Problem | None = None,
) -> tuple[dict, bool]:
    """``bbcore strategy CONFIG --optimal OBJECTIVE``'s object (the book's figures and its
    ``optimum``) and whether it was searched now.

    A finished result stored before is returned as it is (unless ``recompute``);
    otherwise the search goes on from the stored memo (``recompute``: from
    nothing) and its memo is stored every ``CHECKPOINT_SECONDS``, when it ends,
    when it is stopped after ``seconds`` (then the object gives the proved
    bounds and the greedy book's figures) and when it is interrupted
    (KeyboardInterrupt is raised again once the memo is stored).  ``store``
    False (a read-only database) reads what is stored and writes nothing.
    """
    if objective not in OBJECTIVES:
        raise OptimalError(f"unknown objective {objective!r}: expected rays, worst or points")
    stored = stored_run(config, objective)
    if stored is not None and stored[0] is not None and not recompute:
        if store and stored_book(config, objective) is None:
            book_of_memo(config, objective, stored, memory, problem)
        return stored[0], False
    problem = problem or Problem.of(config)
    search = Search(problem, objective, memory, progress=progress, every=checkpoint)
    if stored is not None and not recompute:
        search.memo, search.seconds, search.nodes = stored[1], stored[2], stored[3]
    if seconds is not None:
        deadline = time.monotonic() + seconds
        search.stop = lambda: time.monotonic() >= deadline
    if store:
        search.checkpoint = lambda s: save_run(config, objective, s, None)
    greedy = greedy_played(problem)
    try:
        optimum = finish(search, greedy)
    except Paused:
        if store:
            save_run(config, objective, search, None)
        lower, upper = bounds_now(search, greedy.total(objective, problem.everyone))
        optimum = Optimum(
            config=config,
            objective=objective,
            proved=False,
            lower=lower,
            upper=upper,
            greedy=greedy.total(objective, problem.everyone),
            seconds=search.seconds,
            nodes=search.nodes,
            greedy_first_shot=greedy.first_shot,
        )
        result = book_summary(config, "remaining", greedy)
        result["optimum"] = optimum.summary() | {"rate": round(search.rate, 1), "memo": len(search.memo)}
        return result, True
    except KeyboardInterrupt:
        if store:
            save_run(config, objective, search, None)
        raise
    result = book_summary(config, f"optimal {objective}", optimum.played)
    result["optimum"] = optimum.summary()
    if store:
        save_run(config, objective, search, result, optimum.played)
    return result, True


def book_of_memo(
    config: Config,
    objective: Objective,
    stored: tuple[dict, dict, float, int],
    memory: int = MEMORY_MB,
    problem: Problem | None = None,
) -> Played:
    """Play and store the book of a finished search stored before books were kept with the
    result: from its memo (a set it forgot is searched again), checked against the value."""
    result, memo, seconds, nodes = stored
    problem = problem or Problem.of(config)
    search = Search(problem, objective, memory, memo)
    search.seconds, search.nodes = seconds, nodes
    played = play(problem, problem.everyone, search.best_shot)
    molecules = 1 if objective == "worst" else config.nb_mol
    claimed = Fraction(played.total(objective, problem.everyone), molecules)
    if claimed != Fraction(result["optimum"]["value"]):  # pragma: no cover - a bug, never a result
        raise AssertionError(f"the stored memo plays {claimed}, not the {result['optimum']['value']} stored")
    save_run(config, objective, search, result, played)
    return played


def bounds_now(search: Search, greedy: int) -> tuple[int, int]:
    """(lower, upper) of the root's total from what a stopped search knows.

    The lower bound is the set's own, raised by what the memo proved two levels
    down (one past 20,000 molecules, where the grandchildren are many): for each
    splitting shot at the root, its cost plus, for each child, the best of the
    child's bound, its memo entry (exact or a proved lower bound) and the child's
    own one-step figure from what the memo knows of the grandchildren; the least
    over the root's shots (for points, the lesser of that and stop(S)).  The upper
    bound is the best strategy known: the greedy book's, or a better one the
    search completed at the root.
    """
    problem = search.problem
    everyone = problem.everyone
    key, _ = problem.canonical(everyone)
    entry = search.memo.get(key)
    if entry is not None and entry[1]:
        return entry[0], entry[0]
    lower = _known_lower(search, everyone, 2 if len(everyone) <= 20_000 else 1)
    if entry is not None:
        lower = max(lower, entry[0])
    return lower, min(greedy, search.upper_found) if search.upper_found is not None else greedy


def _known_lower(search: Search, members: np.ndarray, depth: int) -> int:
    """A lower bound of a set's total from its bound and the memo, ``depth`` levels down."""
    problem, objective = search.problem, search.objective
    if len(members) <= 1:
        return 0
    if len(members) == 2:
        return search._pair(members)[0]
    key, _ = problem.canonical(members)
    entry = search.memo.get(key)
    if entry is not None and entry[1]:
        return entry[0]
    figures = evaluate(problem, members, objective)
    if figures.groups == 1:
        return figures.stop if objective == "points" else 0
    lower = figures.lower
    if entry is not None:
        lower = max(lower, entry[0])
    if depth == 0:
        return lower
    step = None
    for p in np.flatnonzero(figures.kinds >= 2).tolist():
        children = [
            max(int(figures.child_bound[p, code]), _known_lower(search, child, depth - 1))
            for code, child in problem.split(members, p)
        ]
        through = int(figures.cost[p]) + (max(children) if objective == "worst" else sum(children))
        step = through if step is None else min(step, through)
    if step is None:
        return lower
    if objective == "points":
        return max(lower, min(figures.stop, step))
    return max(lower, step)


# ---------------------------------------------------------------------------
# Storage: the memo and the finished result


def memo_bytes(memo: dict[bytes, tuple[int, bool, int, int]], played: Played | None = None) -> bytes:
    """The memo as npz bytes, with the optimal book once the search is finished (``played``:
    each molecule's rays, points and wrong atoms, and every node: ``book_*``)."""
    n = len(memo)
    keys = (
        np.frombuffer(b"".join(memo.keys()), dtype=np.uint8).reshape(n, 16)
        if n
        else np.zeros((0, 16), np.uint8)
    )
    values = np.array([v for v in memo.values()], dtype=np.int64).reshape(n, 4)
    out = io.BytesIO()
    book = {}
    if played is not None and played.tree is not None:
        book = {"book_rays": played.rays, "book_points": played.points, "book_wrong": played.wrong}
        book["book_order"] = played.tree.order
        book |= {f"book_node_{name}": getattr(played.tree.nodes, name) for name in NODE_COLUMNS}
    np.savez_compressed(out, keys=keys, values=values, **book)
    return out.getvalue()


def memo_of_bytes(data: bytes) -> dict[bytes, tuple[int, bool, int, int]]:
    """The memo from ``memo_bytes``'s form."""
    with np.load(io.BytesIO(data)) as arrays:
        keys, values = arrays["keys"], arrays["values"]
    return {keys[i].tobytes(): (v[0], bool(v[1]), v[2], v[3]) for i, v in enumerate(values.tolist())}


def save_run(
    config: Config, objective: Objective, search: Search, result: dict | None, played: Played | None = None
) -> None:
    """Store a search's memo (and its result and book, once finished)."""
    from bbcore.store import OptimalRun, db, now

    db.create_tables([OptimalRun], safe=True)
    with db.atomic():
        OptimalRun.delete().where(
            (OptimalRun.config == config.name) & (OptimalRun.objective == objective)
        ).execute()
        OptimalRun.create(
            config=config.name,
            objective=objective,
            proved=bool(result and result["optimum"]["proved"]),
            seconds=search.seconds,
            nodes=search.nodes,
            result=json.dumps(result) if result else None,
            memo=memo_bytes(search.memo, played),
            dh1=now(),
        )


def stored_run(config: Config, objective: Objective) -> tuple[dict | None, dict, float, int] | None:
    """(result or None, memo, seconds, nodes) stored for a configuration and objective."""
    from bbcore.store import OptimalRun, db, is_open

    if not is_open() or not db.table_exists(OptimalRun._meta.table_name):
        return None
    row = OptimalRun.get_or_none((OptimalRun.config == config.name) & (OptimalRun.objective == objective))
    if row is None:
        return None
    try:
        memo = memo_of_bytes(bytes(row.memo))
    except (ValueError, OSError, KeyError) as error:
        print(
            f"bbcore: the stored memo of {config.name} ({objective}) is unreadable ({error}); "
            "searching from nothing",
            file=sys.stderr,
        )
        memo = {}
    return (json.loads(row.result) if row.result else None), memo, row.seconds, row.nodes


def stored_book(config: Config, objective: Objective) -> StrategyBook | None:
    """The optimal book of a finished search stored for ``config`` and ``objective``, as a
    ``StrategyBook`` holding every node (``by``: ``"optimal OBJECTIVE"``); None when no
    finished search is stored, or one stored before books were kept with the result."""
    from bbcore.store import OptimalRun, db, is_open

    if not is_open() or not db.table_exists(OptimalRun._meta.table_name):
        return None
    row = (
        OptimalRun.select(OptimalRun.memo, OptimalRun.seconds, OptimalRun.result)
        .where((OptimalRun.config == config.name) & (OptimalRun.objective == objective))
        .first()
    )
    if row is None or row.result is None:
        return None
    try:
        with np.load(io.BytesIO(bytes(row.memo))) as arrays:
            if "book_order" not in arrays.files:
                return None
            book = {name: arrays[name] for name in arrays.files if name.startswith("book_")}
    except (ValueError, OSError, KeyError):
        return None
    nodes = Nodes(*(book[f"book_node_{name}"] for name in NODE_COLUMNS))
    leaves = nodes.shot < 0
    depths = config.positions + 2
    return StrategyBook(
        config=config,
        by=f"optimal {objective}",  # type: ignore[arg-type]
        source="optimal",
        seconds=row.seconds,
        rays=book["book_rays"],
        points=book["book_points"],
        order=book["book_order"],
        nodes=nodes,
        depth_nodes=np.bincount(nodes.depth, minlength=depths).astype(np.int64),
        depth_leaves=np.bincount(nodes.depth[leaves], minlength=depths).astype(np.int64),
    )


def differences(greedy: np.ndarray, optimal: np.ndarray, limit: int = 10) -> list[tuple[int, int, int]]:
    """The molecules on which two books' rays differ most: (number, rays of the first, rays of
    the second), by the difference's size, then the greedy book's rays, then number; only
    molecules where they differ."""
    greedy, optimal = greedy.astype(np.int64), optimal.astype(np.int64)
    gap = np.abs(greedy - optimal)
    index = np.flatnonzero(gap)
    index = index[np.lexsort((index, -greedy[index], -gap[index]))][:limit]
    return [(int(i) + 1, int(greedy[i]), int(optimal[i])) for i in index]


def command_line(config: Config, objective: Objective, where: object = None) -> str:
    """The command that searches and stores a configuration's optimal book (``where``: the
    database, when it is not the default one)."""
    import shlex

    from bbcore.store import default_path

    database = (
        "" if where is None or str(where) == str(default_path()) else f" --db {shlex.quote(str(where))}"
    )
    return f"bbcore strategy {config.name} --optimal {objective}{database}"

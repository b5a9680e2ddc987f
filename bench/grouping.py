"""Benchmark: the compact grouping's kernel alone, as a compact run feeds it, one bound against another.

    python bench/grouping.py                          # A5_B8, medians of 7
    python bench/grouping.py A6_B7 --runs 9
    python bench/grouping.py --insertion-rows 0       # numba's argsort for every run (before 2026-12-02)
    python bench/grouping.py A6_B7 --asymmetric       # the asymmetric kernel against the general one

A compact run's grouping traces again the canonical molecules of each key
held twice or more, and groups their images by spectrum exactly
(``engine.families_of_runs``, whose kernel is ``_families_kernel``).  This
script takes a configuration's canonical molecules
(``engine.canonical_molecules``), their keys, and the runs of equal keys
held by two canonical molecules or more (``group_shard`` also takes lone
canonical molecules whose images may share a spectrum: left out here), traces
them once, then times the kernel alone (CPU time, one core) on those runs,
alternating the default bound of its insertion sort (``engine.INSERTION_ROWS``)
and the one given, in this process: their medians and the ratio given /
default.  Both must find the same families (checked).  The load average is
printed at the start and at the end: the machine is shared.

``--asymmetric`` times instead, on the runs whose canonical molecules are
all asymmetric (``spectrum_keys``' ``lowest``: what a compact run sends to
``_asymmetric_families_kernel``), ``families_of_runs`` whole, tracing
included, with and without ``lowest``: the general kernel against the
asymmetric one, alternating, the same families checked.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from bbcore import engine
from bbcore.config import parse_config
from bbcore.numbering import binomial_table


def runs_of_shared_keys(config, asymmetric: bool = False) -> tuple[np.ndarray, ...]:
    """The canonical molecules of keys held twice or more (all asymmetric ones, if asked), run
    after run: (atoms, numbers, runs, lowest)."""
    atoms, own = engine.canonical_molecules(config, 1, config.nb_mol + 1)
    keys, _, _, lowest = engine.spectrum_keys(config, atoms, engine.trace_batch(config, atoms)[0])
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, len(keys)])
    kept = sizes > 1
    if asymmetric:
        kept &= np.logical_and.reduceat(lowest[order] >= 0, starts)
    chosen = np.flatnonzero(kept)
    rows = np.concatenate([np.arange(starts[c], starts[c] + sizes[c]) for c in chosen])
    runs = np.r_[0, np.cumsum(sizes[chosen])].astype(np.int64)
    picked = order[rows]
    return np.ascontiguousarray(atoms[picked]), np.ascontiguousarray(own[picked]), runs, lowest[picked]


def compare_kernels(config, runs_timed: int) -> None:
    """``families_of_runs`` whole on the asymmetric runs, the general kernel against the asymmetric one."""
    atoms, own, runs, lowest = runs_of_shared_keys(config, asymmetric=True)
    kernels = {"general": None, "asymmetric": lowest}

    def run(given) -> tuple[float, engine.Families]:
        began = time.process_time()
        found = engine.families_of_runs(config, atoms, own, runs, lowest=given)
        return time.process_time() - began, found

    found = {label: run(given)[1] for label, given in kernels.items()}  # compiled, and compared
    a, b = (np.argsort(found[label].row) for label in kernels)
    general, asymmetric = found["general"], found["asymmetric"]
    for name in ("row", "size", "spectra", "max_diff", "spectrum"):
        assert (getattr(general, name)[a] == getattr(asymmetric, name)[b]).all(), (
            f"the kernels' {name} differ"
        )
    times: dict[str, list[float]] = {label: [] for label in kernels}
    for _ in range(runs_timed):
        for label, given in kernels.items():
            times[label].append(run(given)[0])
    medians = {label: statistics.median(times[label]) for label in kernels}
    print(
        f"{config.name}: {len(own):,} asymmetric canonical molecules in {len(runs) - 1:,} runs of shared keys"
    )
    for label in kernels:
        print(f"families_of_runs, {label} kernel: median {medians[label]:.3f} s CPU (tracing included)")
    print(
        f"ratio general / asymmetric: {medians['general'] / medians['asymmetric']:.2f} "
        f"(medians of {runs_timed}, alternating)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", nargs="?", default="A5_B8", help="a configuration AN_BW (default A5_B8)")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each bound (default 7)")
    parser.add_argument(
        "--insertion-rows", type=int, default=0, help="the bound timed against the default (0: argsort)"
    )
    parser.add_argument(
        "--asymmetric", action="store_true", help="time the asymmetric kernel against the general one"
    )
    args = parser.parse_args()
    config = parse_config(args.config)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.asymmetric:
        compare_kernels(config, args.runs)
        print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
    atoms, own, runs, _ = runs_of_shared_keys(config)
    partner, _, _ = engine.trace_batch(config, atoms)
    cells, source, inverse = engine._symmetry_tables(config.width)
    table = binomial_table(config)
    kernel = engine.compiled(engine._families_kernel, calls=engine._KERNEL_CALLS)
    k = len(atoms)

    def run(bound: int) -> tuple[float, list[np.ndarray]]:
        outputs = [np.empty(k, np.int64) for _ in range(5)] + [np.empty(8 * k, np.int64)]
        began = time.process_time()
        tables = (partner, cells, source, inverse, table, config.nb_mol)
        found = kernel(atoms, own, runs, *tables, *outputs, bound)
        return time.process_time() - began, [out[:found] for out in outputs[:5]]

    bounds = {"default": engine.INSERTION_ROWS, "given": args.insertion_rows}
    found = {label: run(bound)[1] for label, bound in bounds.items()}  # compiled, and compared
    same = all((a == b).all() for a, b in zip(found["default"], found["given"]))
    assert same, "the bounds' families differ"
    times: dict[str, list[float]] = {label: [] for label in bounds}
    for _ in range(args.runs):
        for label, bound in bounds.items():
            times[label].append(run(bound)[0])
    default, given = (statistics.median(times[label]) for label in bounds)
    print(
        f"{config.name}: {k:,} canonical molecules in {len(runs) - 1:,} runs of shared keys, "
        f"{len(found['default'][0]):,} families"
    )
    print(f"kernel, insertion up to {engine.INSERTION_ROWS} rows (default): median {default:.3f} s CPU")
    print(f"kernel, insertion up to {args.insertion_rows} rows (given): median {given:.3f} s CPU")
    print(f"ratio given / default: {given / default:.3f} (medians of {args.runs}, alternating)")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

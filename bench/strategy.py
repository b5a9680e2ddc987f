"""Benchmark: the strategy book over every molecule of a configuration.

    python bench/strategy.py                      # A4_B8, both policies, 3 runs
    python bench/strategy.py --config A5_B8 --runs 1 --by remaining
    python bench/strategy.py --db PATH            # also from the stored spectra of an explored file

For each policy it times, in this process after a warm-up (numba's kernels
loaded), the parts of ``bbcore.strategy.compute_book``: gathering every
molecule's spectrum (traced by the engine; read from the store with
``--db``), playing the tree (the kernel), and the whole book.  It prints
the median of ``--runs`` runs of each, beside two references timed in the
same run (the machine is shared: ratios say more than seconds): a numpy sort
of a million int64 (``bench/decode.py``'s), and tracing the spectra, the
least work any book needs.  The first call in a fresh process (loading the
kernels from numba's cache) is timed apart.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from decode import numpy_reference  # noqa: E402  (bench/decode.py, the same reference)

from bbcore.config import Config, parse_config  # noqa: E402
from bbcore.runner import keep_freed_memory  # noqa: E402
from bbcore.store import open_database  # noqa: E402
from bbcore.strategy import POLICIES, compute_book, run_policy, spectra_codes  # noqa: E402


def timed(function, runs: int) -> tuple[float, object]:
    """Median seconds of ``runs`` calls, and the last result."""
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def first_call() -> float:
    """Seconds of the first book in this process (kernels loaded from numba's cache)."""
    start = time.perf_counter()
    compute_book(Config(2, 4), source="compute")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=parse_config, default=parse_config("A4_B8"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--by", choices=POLICIES, default=None, help="one policy (default: both)")
    parser.add_argument("--db", type=Path, default=None, help="an explored database: time the store too")
    args = parser.parse_args()
    config: Config = args.config
    keep_freed_memory()
    print(f"first book in this process (loading the kernels): {first_call():.2f} s")
    reference = numpy_reference()
    print(f"reference, numpy sort of 1e6 int64: {reference:.1f} ms (median of 9)")
    trace, (codes, _) = timed(lambda: spectra_codes(config, "compute"), args.runs)
    print(
        f"{config}: {config.nb_mol:,} molecules; tracing every spectrum {trace:.2f} s (median of {args.runs})"
    )
    if args.db:
        open_database(args.db)
        read, _ = timed(lambda: spectra_codes(config, "store"), args.runs)
        print(f"reading every spectrum from the store: {read:.2f} s ({read / trace:.2f}x tracing)")
    for by in [args.by] if args.by else POLICIES:
        tree, run = timed(
            lambda by=by: run_policy(codes, np.arange(config.nb_mol, dtype=np.int64), by, record_depth=3),
            args.runs,
        )
        whole, book = timed(lambda by=by: compute_book(config, by, source="compute"), args.runs)
        print(
            f"by {by}: the tree {tree:.2f} s, the whole book {whole:.2f} s "
            f"({whole / trace:.2f}x tracing, {1000 * whole / reference:.0f}x the reference); "
            f"rays mean {book.mean('rays'):.3f} max {book.maximum('rays')}, "
            f"points mean {book.mean('points'):.3f} max {book.maximum('points')}, "
            f"first shot {book.first_shot.position if book.first_shot else '-'}"
        )


if __name__ == "__main__":
    main()

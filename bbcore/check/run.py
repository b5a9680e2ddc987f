"""``check(config)``: the phases of a configuration's store, run in order, and its report."""

from __future__ import annotations

import time

from bbcore.check.blocks import quick_phase, without_cycle_collection
from bbcore.check.compact_groups import CompactGroups
from bbcore.check.compact_judge import CompactJudge
from bbcore.check.configuration import check_configuration, check_count
from bbcore.check.full_groups import check_families, check_groups
from bbcore.check.full_judge import FullJudge
from bbcore.check.integrity import check_integrity, server_integrity, skipped_integrity
from bbcore.check.report import CheckError, CheckProgressCallback, CheckReport
from bbcore.check.samples import (
    REFERENCE_SAMPLE,
    SAMPLE,
    SEED,
    Judge,
    check_sample,
    engine_rows,
    reference_rows,
    reference_sample,
    sample_numbers,
)
from bbcore.config import Config
from bbcore.store import COMPACT, Configuration, is_server, opened


def _quiet(check: str, done: int, total: int) -> None:
    """No progress wanted."""


def check(
    config: Config,
    *,
    sample: int = SAMPLE,
    everything: bool = False,
    reference: int = REFERENCE_SAMPLE,
    seed: int = SEED,
    integrity: bool = True,
    progress: CheckProgressCallback | None = None,
) -> CheckReport:
    """Run every check on ``config`` in the open database; raises CheckError if it cannot be checked.

    ``integrity=False`` skips SQLite's check of the whole file (done once
    for a file that holds several configurations).
    """
    progress = progress or _quiet
    row = Configuration.get_or_none(Configuration.config == config.name)
    if row is None:
        raise CheckError(f"{config.name} is not in this database: nothing to check")
    if not row.complete:
        raise CheckError(
            f"{config.name} is not completely explored: check verifies complete configurations "
            f"(run 'bbcore explore {config.name}' to finish it)"
        )
    started = time.monotonic()
    numbers = sample_numbers(config, config.nb_mol if everything else sample, seed)
    reference_numbers = reference_sample(numbers, reference, seed)
    if is_server(opened.path):
        results = [server_integrity()]
    else:
        results = [check_integrity(progress) if integrity else skipped_integrity()]
    results.append(quick_phase("configuration", progress, lambda: check_configuration(config, row)))
    if row.store == COMPACT:
        judge: Judge = CompactJudge(config, everything)
        results.append(quick_phase("count", progress, judge.check_count))
        with without_cycle_collection():
            results.append(CompactGroups(config).check(progress))
    else:
        judge = FullJudge(config)
        results.append(quick_phase("count", progress, lambda: check_count(config)))
        with without_cycle_collection():
            results += [check_groups(config, progress), check_families(config, progress)]
    results.append(check_sample("engine", config, numbers, engine_rows, judge, progress))
    results.append(check_sample("reference", config, reference_numbers, reference_rows, judge, progress))
    if everything and isinstance(judge, CompactJudge):
        results[-2] = judge.every_profile(results[-2])
    return CheckReport(
        config, results, seed, len(numbers), len(reference_numbers), time.monotonic() - started
    )

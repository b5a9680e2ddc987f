"""A mutation run people can repeat: mutmut over the pure modules, with each module's own tests.

    python bench/mutation.py                        # rays, numbering, geometry (minutes)
    python bench/mutation.py game decode ranges check --children 2
    python bench/mutation.py --all                  # every module below (an hour or more)
    python bench/mutation.py rays --show            # with each surviving mutant's diff
    python bench/mutation.py --notes                # the notes of the runs (bench/mutation_notes.md)

Not part of CI.  Needs mutmut 3 (``pip install -e .[mutation]``).  mutmut
changes one operator, constant or call at a time in a module and runs the
tests that reach the changed function: a mutant the tests do not notice
*survives*.  The run happens in a copy of the checkout (``--work``, default a
fresh temporary folder): mutmut writes its ``mutants/`` tree and its own
``[tool.mutmut]`` section there, never here.  The script prints, per
module, the mutants killed, survived, timed out and not reached by any
test, the score (killed and timed out over those three), and the name of
every surviving mutant (``--show``: its diff too; ``mutmut show NAME`` in
the work folder shows one).

Each module is mutated with the tests that are about it (``MODULES``), so
that a run takes minutes on a shared machine; a mutant another module's
tests would kill still counts as surviving here, which is the point: each
module's tests should pin their module.

Notes (each module's surviving mutants, equivalent or killed since, and the runs'
figures): ``bench/mutation_notes.md``, which ``--notes`` prints.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHECK_TESTS = (
    "tests/test_check.py",
    "tests/test_check_damage.py",
    "tests/test_check_compact_groups.py",
    "tests/test_check_compact_families.py",
)
"""The tests run against each module of ``bbcore/check/``."""

COMPACT_TESTS = ("tests/test_compact.py", "tests/test_shrunk.py")
"""The tests run against ``bbcore/compact/``'s modules and families (test_shrunk.py: their batches shrunk)."""

COMPACT_STAGE_TESTS = (
    "tests/test_mut_compact.py",
    *(
        f"tests/test_shrunk.py::test_{name}"
        for name in (
            "a_compact_store_made_and_read_in_small_batches_is_the_same",
            "a_compact_store_in_many_shards_is_the_same",
            "range_profiles_summed_a_few_files_at_a_time_are_the_same",
            "the_shard_count_is_the_power_of_two_that_holds_the_records_up_to_the_cap",
        )
    ),
    *(
        f"tests/test_compact.py::test_{name}"
        for name in (
            "any_ranges_and_shards_give_the_full_groups",
            "a_started_store_cannot_change",
            "pause_and_resume_give_the_clean_result",
            "every_progress_report_of_a_compact_run_names_its_phase",
            "a_pause_asked_as_the_last_families_are_written_pauses",
            "writing_without_the_grouped_shards_says_where_they_were_looked_for",
            "the_merge_gives_every_element_once_in_order",
            "a_column_reads_what_numpy_saved",
        )
    ),
)
"""The tests run against ``compact/``'s stages, ``shards`` and ``columns`` (mutcompact, issue 33):
tests/test_mut_compact.py, the compact store made with its sizes shrunk, compact against full
on any ranges and shards, its pauses and reports.  Not the rest of ``COMPACT_TESTS``: with them
(A4_B6 killed at six points, A5_B6 with workers, every reader on A4_B6, eight configurations
compared, a file migrated, a subprocess decoding) a surviving mutant cost 3 to 5 minutes at
``nice -n 19`` on the shared machine, and they pin the readers more than the stages."""

WRITE_STAGE_TESTS = (
    "tests/test_mut_write.py",
    "tests/test_write_parts.py",
    *(
        f"tests/test_compact.py::test_{name}"
        for name in (
            "library_readers_agree_on_both_stores",
            "pause_and_resume_give_the_clean_result",
            "every_progress_report_of_a_compact_run_names_its_phase",
            "a_pause_asked_as_the_last_families_are_written_pauses",
            "writing_without_the_grouped_shards_says_where_they_were_looked_for",
        )
    ),
)
"""The tests run against ``compact/write.py`` (sixth session, mutwrite): its parts with their
sizes shrunk (tests/test_mut_write.py, tests/test_write_parts.py), and the fast compact tests
that reach the writing stage (A4_B6 read against its full store, paused and resumed, its
reports, its refusals).  Not the rest of ``COMPACT_TESTS``: a surviving mutant cost minutes
with them."""

SCREEN_TESTS = ("tests/test_tui_paging.py", "tests/test_navigation.py")
"""The pilot tests that step through molecules and groups with their keys."""
MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "rays": ("bbcore/rays.py", ("tests/test_rays.py",)),
    "numbering": ("bbcore/numbering.py", ("tests/test_numbering.py",)),
    "geometry": ("bbcore/geometry.py", ("tests/test_symmetry.py", "tests/test_rays.py")),
    "game": ("bbcore/game.py", ("tests/test_decode.py", "tests/test_play.py")),
    "decode": ("bbcore/decode.py", ("tests/test_decode.py", "tests/test_decode_edges.py")),
    "ranges": ("bbcore/ranges.py", ("tests/test_ranges.py",)),
    # bbcore/check/: each module (its __init__ defines nothing) with every check test; ``check`` runs them all
    **{
        f"check.{path.stem}": (f"bbcore/check/{path.name}", CHECK_TESTS)
        for path in sorted((ROOT / "bbcore" / "check").glob("*.py"))
        if path.name != "__init__.py"
    },
    # the modules the run did not cover before issue 33 (scores: docs/tests.md, notes:
    # bench/mutation_notes.md); store and strategy are large: run them a few functions at a
    # time with --only ('bbcore.store.x_*range*')
    "shots": ("bbcore/shots.py", ("tests/test_decode.py", "tests/test_shots.py", "tests/test_shrunk.py")),
    "queries": ("bbcore/queries.py", ("tests/test_queries_expect.py", "tests/test_queries.py")),
    # families: the compact tests that write or read its rows (not the kill and resume ones: their
    # workers run out of mutmut's sight, 18 s a mutant for nothing), so that a run takes about 30 min
    "families": (
        "bbcore/families.py",
        (
            *(
                f"tests/test_compact.py::{name}"
                for name in (
                    "test_compact_and_full_give_the_same_groups_and_members",
                    "test_every_cli_reader_says_the_same_on_both_stores",
                    "test_library_readers_agree_on_both_stores",
                    "test_every_page_of_every_listing_is_the_full_stores",
                    "test_a_typed_spectrum_has_the_key_of_its_molecules",
                    "test_a_compact_export_sorted_in_chunks_is_the_full_stores",
                    "test_a_stored_spectrum_of_a_compact_store_is_read_from_its_family",
                    "test_a_compact_file_of_the_previous_layout_is_migrated_in_place",
                    "test_a_pause_asked_as_the_last_families_are_written_pauses",
                    "test_pause_and_resume_give_the_clean_result",
                )
            ),
            "tests/test_shrunk.py::test_a_compact_store_made_and_read_in_small_batches_is_the_same",
            "tests/test_mut_families.py",
        ),
    ),
    "statistics": ("bbcore/statistics.py", ("tests/test_statistics.py", "tests/test_statistics_stores.py")),
    # copy: tests/test_mut_copy.py (seventh session, mutcopy: in this process, A3_B4 and A3_B5) first
    "copy": ("bbcore/copy.py", ("tests/test_mut_copy.py", "tests/test_copy.py")),
    # a compact store's export (computed molecules, derived spectra, merged chunks) is tested in
    # test_compact.py and test_shrunk.py
    "export": ("bbcore/export.py", ("tests/test_export.py", *COMPACT_TESTS)),
    "compact.shards": ("bbcore/compact/shards.py", COMPACT_STAGE_TESTS),
    "compact.trace": ("bbcore/compact/trace.py", COMPACT_STAGE_TESTS),
    "compact.group": ("bbcore/compact/group.py", COMPACT_STAGE_TESTS),
    "compact.write": ("bbcore/compact/write.py", WRITE_STAGE_TESTS),
    "compact.run": ("bbcore/compact/run.py", COMPACT_STAGE_TESTS),
    # store: its helpers called in this process (test_mut_store.py; the CLI's tests reach them in
    # subprocesses only), the schema and the explorations (fifth session: run a few functions at a time)
    "store": (
        "bbcore/store.py",
        ("tests/test_mut_store.py", "tests/test_schema.py", "tests/test_explore.py"),
    ),
    # small pure modules with tests of their own (issue 33, section 5)
    "config": ("bbcore/config.py", ("tests/test_config.py",)),
    "words": ("bbcore/words.py", ("tests/test_words.py",)),
    "progress": ("bbcore/progress.py", ("tests/test_progress.py",)),
    "render": ("bbcore/render.py", ("tests/test_render.py",)),
    "plot": ("bbcore/plot.py", ("tests/test_plot.py",)),
    "feasibility": ("bbcore/feasibility.py", ("tests/test_feasibility.py",)),
    # columns: its own tests (the merge and the column, in test_compact.py and test_mut_compact.py);
    # every compact run's writing stage reaches it too, which made each survivor cost minutes
    "columns": (
        "bbcore/columns.py",
        (
            "tests/test_mut_compact.py",
            "tests/test_compact.py::test_the_merge_gives_every_element_once_in_order",
            "tests/test_compact.py::test_a_column_reads_what_numpy_saved",
        ),
    ),
    "strategy": ("bbcore/strategy.py", ("tests/test_strategy.py", "tests/test_mut_strategy.py")),
    # optimal: its kernels (bbcore/optimal_kernels.py) are not mutated; tests/test_optimal.py's
    # fast tests (boxes of 2 atoms at most: A3_B4's searches and A3_B5's bounds take 30 s to 5 min
    # a mutant at load 8, its CLI tests are subprocesses) and tests/test_mut_optimal.py (fifth
    # session: in-process what the CLI tests reach, the memo, the ticks, the stored run)
    "optimal": (
        "bbcore/optimal.py",
        (
            "tests/test_mut_optimal.py",
            *(
                f"tests/test_optimal.py::test_the_solver_agrees_with_a_plain_expectimax[{config}-{objective}]"
                for config in ("A1_B3", "A2_B3", "A2_B4")
                for objective in ("rays", "worst", "points")
            ),
            *(
                "tests/test_optimal.py::test_the_book_played_against_every_molecule_gives_the_claimed_value"
                f"_and_beats_greedy[A2_B4-{objective}]"
                for objective in ("rays", "worst", "points")
            ),
            *(
                f"tests/test_optimal.py::test_{name}"
                for name in (
                    "a2_b4_rays_is_the_issue_example",
                    "the_stored_book_is_the_optimal_book_whole",
                    "a_result_stored_without_its_book_gets_it_from_its_memo",
                    "differences_lists_the_molecules_where_the_books_differ_most",
                    "the_command_line_names_the_database_unless_it_is_the_default",
                )
            ),
        ),
    ),
    # the rest of bbcore, issue 33 section 5 (notes: bench/mutation_notes.md)
    "spectra": (
        "bbcore/spectra.py",
        (
            "tests/test_mut_spectra.py",
            "tests/test_explore.py::test_spectrum_and_canonical_indexes_come_with_completion_and_go_with_reset",
        ),
    ),
    # lock: its generator ``hold`` (mutmut mutates no decorated function: ``exploration_lock`` is
    # ``contextmanager(hold)``), with the tests that take the lock (another process's: a subprocess,
    # which runs the same mutant), and the server's refusal on the test server
    "lock": (
        "bbcore/lock.py",
        (
            "tests/test_mut_lock.py",
            "tests/test_explore.py::test_a_second_explorer_is_refused_while_readers_keep_reading",
            "tests/test_server.py::test_a_second_explorer_of_the_same_configuration_is_refused",
        ),
    ),
    # lifeline's functions run in workers: its tests call them here too, so that mutmut runs them
    "lifeline": ("bbcore/lifeline.py", ("tests/test_mut_lifeline.py",)),
    "play": ("bbcore/play.py", ("tests/test_play.py", "tests/test_mut_play.py")),
    "decoder": ("bbcore/decoder.py", ("tests/test_decoder.py", "tests/test_mut_decoder.py")),
    "explore": (
        "bbcore/explore.py",
        ("tests/test_mut_explore.py", "tests/test_explore.py::test_too_large_a_configuration_is_refused"),
    ),
    # issue 33 section 5, fourth session: each statement run on a real store (sql); the runners on
    # plain tasks (runner: ``_worker_init`` runs in spawned workers only, planted by hand); the
    # full store's pipeline in one process and through the pool (full: its workers' functions
    # planted by hand); the notes say why
    "sql": ("bbcore/sql.py", ("tests/test_mut_sql.py", "tests/test_schema.py")),
    "runner": ("bbcore/runner.py", ("tests/test_mut_runner.py",)),
    "full": (
        "bbcore/full.py",
        (
            "tests/test_mut_full.py",
            "tests/test_explore.py",
            "tests/test_shrunk.py::test_a_full_store_written_in_chunks_of_a_few_rows_is_the_same",
        ),
    ),
    # the screens' actions (issue 33, section 5), with the pilot tests that press their keys:
    # run them an action at a time, ``--only 'bbtui.screens.groups.xǁGroupsScreenǁaction_*'``
    # (each mutant runs pilot tests: 20 to 60 s)
    "screens.molecule": (
        "bbtui/screens/molecule.py",
        (
            *SCREEN_TESTS,
            "tests/test_tui_browse.py::test_o_opens_the_focused_enantiomer_and_slash_jumps_to_a_number",
            "tests/test_tui_browse.py::test_molecule_of_a_configuration_past_64_bits",  # c: the canonical one
        ),
    ),
    "screens.groups": (
        "bbtui/screens/groups.py",
        (
            "tests/test_tui_paging.py",
            "tests/test_tui_newcomer.py::test_enter_before_the_groups_first_page_opens_its_first_group",
        ),
    ),
    "screens.group": ("bbtui/screens/group.py", SCREEN_TESTS),
    "widgets.tables": ("bbtui/widgets/tables.py", ("tests/test_tui_tables.py",)),
    "screens.statistics": (
        "bbtui/screens/statistics.py",
        ("tests/test_tui_paging.py", "tests/test_tui_statistics.py", "tests/test_tui_tables.py"),
    ),
    # the command line's shared parts and its decode command (seventh session, mutcli): the tests
    # that call ``bbcore.cli.main`` in this process (test_cli.py's subprocess and terminal tests
    # are out of mutmut's sight, and cost minutes), and tests/test_mut_cli.py
    "cli.common": (
        "bbcore/cli/common.py",
        (
            "tests/test_mut_cli.py",
            "tests/test_cli_progress.py",
            "tests/test_cli_decode.py",
            "tests/test_cli_options.py",
            "tests/test_cli_trials.py",
            *(
                f"tests/test_cli.py::test_{name}"
                for name in (
                    "show_prints_the_spec_worked_example",
                    "show_from_store_by_spectrum_and_range",
                    "groups_and_status",
                )
            ),
        ),
    ),
    "cli.decode": (
        "bbcore/cli/decode.py",
        (
            "tests/test_mut_cli.py",
            "tests/test_cli_decode.py",
            "tests/test_cli_options.py::test_decode_takes_a_game_after_double_dash_in_either_order",
            "tests/test_cli_trials.py::test_decode_with_no_arguments_asks_only_for_the_configuration",
        ),
    ),
}
"""Each module and the tests run against its mutants."""
DEFAULT = ("rays", "numbering", "geometry")
NOTES = ROOT / "bench" / "mutation_notes.md"
"""The notes of the runs: each module's surviving mutants, equivalent or killed since, and its figures."""


def expand(name: str) -> list[str]:
    """The modules a name asks for: itself, or a package's (``check``: every ``check.*``)."""
    if name in MODULES:
        return [name]
    return [module for module in MODULES if module.startswith(f"{name}.")]


def checkout_copy(work: Path) -> None:
    """The tracked files of this checkout (as they are now, edits included) copied to ``work``."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    # untracked new modules of the checkout (a module being written) come too
    for source in (ROOT / "bbcore").glob("*.py"):
        shutil.copy2(source, work / "bbcore" / source.name)


def mutmut_section(source: str, tests: tuple[str, ...], timeout_multiplier: float | None = None) -> str:
    """The ``[tool.mutmut]`` section for one module and its tests (and mutmut's timeout multiplier,
    when given: its default, 15, lets a mutant that loops forever burn 15 x 2 times the CPU
    seconds of every test reaching it, 20 minutes and more for the compact stages)."""
    return (
        "\n[tool.mutmut]\n"
        + (f"timeout_multiplier = {timeout_multiplier}\n" if timeout_multiplier else "")
        + f"source_paths = [{json.dumps(source)}]\n"
        'also_copy = ["bbcore", "bbtui", "tests"]\n'
        f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}\n"
        'pytest_add_cli_args = ["-p", "no:xdist", "-p", "no:cacheprovider", "-q"]\n'
        "use_git_change_detection = false\n"
    )


def run_module(
    name: str,
    work: Path,
    children: int,
    show: bool,
    only: tuple[str, ...] = (),
    timeout_multiplier: float | None = None,
) -> dict:
    """Mutate one module in its own copy of the checkout; its figures and surviving mutants.

    ``only``: mutmut's mutant names or globs (``bbcore.check.configuration.x_check_*``): those
    mutants alone are run; the others keep the result of an earlier run in the
    same ``--work`` folder, or count as not run.
    """
    source, tests = MODULES[name]
    folder = work / name
    checkout_copy(folder)
    if not (folder / source).exists():
        print(f"{name}: {source} does not exist in this checkout, skipped")
        return {}
    pyproject = folder / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + mutmut_section(source, tests, timeout_multiplier))
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "mutmut", "run", "--max-children", str(children), *only],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - started
    if run.returncode != 0:
        print(f"{name}: mutmut failed ({run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
        return {}
    return report_module(name, work, show, f"({seconds / 60:.1f} min)")


def report_module(name: str, work: Path, show: bool, note: str = "") -> dict:
    """Print the figures and surviving mutants of the run of one module in ``work`` (the last, or
    several with ``--only``); ``{}`` when it has none."""
    source, _ = MODULES[name]
    folder = work / name
    if not (folder / "mutants").is_dir():
        print(f"{name}: no run in {folder}")
        return {}
    subprocess.run([sys.executable, "-m", "mutmut", "export-cicd-stats"], cwd=folder, capture_output=True)
    stats = json.loads((folder / "mutants" / "mutmut-cicd-stats.json").read_text())
    results = subprocess.run(
        [sys.executable, "-m", "mutmut", "results"], cwd=folder, capture_output=True, text=True
    ).stdout
    survivors = [
        line.split(":")[0].strip() for line in results.splitlines() if line.strip().endswith(": survived")
    ]
    meta = json.loads((folder / "mutants" / f"{source}.meta").read_text())
    seconds = sorted(meta.get("durations_by_key", {}).values())  # wall, from the fork to the exit
    median = seconds[len(seconds) // 2] if seconds else 0.0
    tried = stats["killed"] + stats["survived"] + stats["timeout"]
    score = (stats["killed"] + stats["timeout"]) / tried if tried else 0.0
    # mutants not run yet (``--only``, or a run stopped early) are in the total and in no other count
    not_run = stats["total"] - sum(v for k, v in stats.items() if k != "total" and isinstance(v, int))
    print(
        f"{name:<10s} {source:<22s} killed {stats['killed']:4d}  survived {stats['survived']:4d}  "
        f"timeout {stats['timeout']:3d}  no tests {stats['no_tests']:4d}  score {100 * score:5.1f}%  "
        + (f"not run {not_run:4d}  " if not_run else "")
        + (f"median {median:.1f} s a mutant  " if seconds else "")
        + note
    )
    for survivor in survivors:
        print(f"    survived: {survivor}")
        if show:
            diff = subprocess.run(
                [sys.executable, "-m", "mutmut", "show", survivor], cwd=folder, capture_output=True, text=True
            ).stdout
            print("\n".join("        " + line for line in diff.splitlines()))
    return {**stats, "not_run": not_run, "score": score, "median_seconds": median, "survivors": survivors}


def main() -> int:
    """Run the modules asked for and print each one's figures, then the total."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=f"The notes of the runs (the survivors, equivalent or killed, and the figures) are in "
        f"{NOTES.relative_to(ROOT)}: --notes prints them.",
    )
    parser.add_argument(
        "modules", nargs="*", metavar="MODULE", help=", ".join(MODULES) + "; check: every check.*"
    )
    parser.add_argument(
        "--notes",
        action="store_true",
        help=f"print the notes of the runs ({NOTES.relative_to(ROOT)}) and exit",
    )
    parser.add_argument("--all", action="store_true", help="every module")
    parser.add_argument("--children", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument("--work", type=Path, help="folder for the copies (default: a temporary one, removed)")
    parser.add_argument("--show", action="store_true", help="print each surviving mutant's diff")
    parser.add_argument(
        "--report", action="store_true", help="run nothing: print the figures of the runs already in --work"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--timeout-multiplier",
        type=float,
        metavar="X",
        help="a mutant times out after X x 2 times the CPU seconds of its tests (mutmut's default: 15)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only the mutants so named (mutmut's globs: 'bbcore.check.configuration.x_check_*'); "
        "repeatable",
    )
    args = parser.parse_args()
    if args.notes:
        print(NOTES.read_text(), end="")
        return 0
    asked = list(MODULES) if args.all else (args.modules or list(DEFAULT))
    unknown = [name for name in asked if not expand(name)]
    names = [module for name in asked for module in expand(name)]
    if unknown:
        print(
            f"bench/mutation.py: error: no module {unknown[0]!r}: choose among {', '.join(MODULES)}",
            file=sys.stderr,
        )
        return 2
    if shutil.which("git") is None:
        print("bench/mutation.py: error: needs git (to copy the checkout)", file=sys.stderr)
        return 2
    try:
        import mutmut  # noqa: F401
    except ImportError:
        print("bench/mutation.py: error: needs mutmut 3: pip install mutmut", file=sys.stderr)
        return 2
    if args.report and args.work is None:
        print("bench/mutation.py: error: --report reads the runs in --work FOLDER", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="bbtui-mutation-"))
    figures = {}
    try:
        for name in names:
            if args.report:
                figures[name] = report_module(name, work, args.show)
            else:
                figures[name] = run_module(
                    name, work, args.children, args.show, tuple(args.only), args.timeout_multiplier
                )
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    done = [f for f in figures.values() if f]
    killed = sum(f["killed"] + f["timeout"] for f in done)
    tried = sum(f["killed"] + f["survived"] + f["timeout"] for f in done)
    if tried:
        print(f"total: {killed} of {tried} mutants killed, score {100 * killed / tried:.1f}%")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How responsive the app stays while it explores A4_B8.

The app runs headless (``App.run_test``) on a temporary database and
explores A4_B8 with its worker processes, exactly as when a user presses
``s``.  While the run goes on, two delays are sampled on the event loop:

- *timer lag*: a timer is set for ``--interval`` seconds; the lag is how late
  its callback runs after its due time;
- *key latency*: a key bound to an action is pressed; the latency is the time
  from sending the key to the action running.

Each run is one app session (a later run resumes the exploration where the
last one paused).  Prints the median, p95 and max of every run and of all
runs together; the issue asks for a median under 100 ms.

    python bench/tui_latency.py [--runs 3] [--samples 60] [--interval 0.05] [--db PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from textual.binding import Binding

from bbcore.config import parse_config
from bbtui.app import BlackBoxApp

CONFIG = parse_config("A4_B8")


class ProbedApp(BlackBoxApp):
    """The app with one more key, whose action notes when it runs."""

    BINDINGS = [*BlackBoxApp.BINDINGS, Binding("f12", "probe", "Probe", show=False)]

    def __init__(self, db_path: Path) -> None:
        super().__init__(db_path)
        self.probed_at = 0.0

    def action_probe(self) -> None:
        """Note the time the key press was handled."""
        self.probed_at = time.perf_counter()


def percentile(values: list[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def summary(name: str, values: list[float]) -> str:
    """Median, p95 and max in milliseconds."""
    return (
        f"{name}: median {1000 * statistics.median(values):6.1f} ms, "
        f"p95 {1000 * percentile(values, 0.95):6.1f} ms, max {1000 * max(values):6.1f} ms "
        f"({len(values)} samples)"
    )


async def timer_lag(app: BlackBoxApp, interval: float) -> float:
    """How late a timer of ``interval`` seconds fires."""
    fired = asyncio.get_running_loop().create_future()
    due = time.perf_counter() + interval
    app.set_timer(interval, lambda: fired.set_result(time.perf_counter()))
    return await fired - due


async def one_run(db_path: Path, samples: int, interval: float) -> tuple[list[float], list[float], str]:
    """One app session: explore, sample both delays during the run, pause."""
    app = ProbedApp(db_path)
    timers: list[float] = []
    keys: list[float] = []
    async with app.run_test(size=(80, 24)) as pilot:
        app.start_exploration(CONFIG)
        await pilot.pause(0.5)
        for _ in range(samples):
            if app.exploring is None:
                break  # the run ended (complete, or an error): stop sampling
            timers.append(await timer_lag(app, interval))
            sent = time.perf_counter()
            await pilot.press("f12")
            keys.append(app.probed_at - sent)
        progress = app.progress
        state = f"{progress.phase} {progress.done:,}/{progress.total:,}" if progress else "starting"
        if app.last_error:
            state += f" (stopped: {app.last_error})"
        app.pause_exploration()
        while app.exploring is not None:
            await pilot.pause(0.1)
    return timers, keys, state


async def bench(db_path: Path, runs: int, samples: int, interval: float) -> None:
    """Every run, then the totals."""
    all_timers: list[float] = []
    all_keys: list[float] = []
    for run in range(1, runs + 1):
        started = time.perf_counter()
        timers, keys, state = await one_run(db_path, samples, interval)
        print(f"run {run} ({time.perf_counter() - started:.0f} s, exploration {state})")
        if timers:
            print("  " + summary("timer lag  ", timers))
            print("  " + summary("key latency", keys))
        all_timers += timers
        all_keys += keys
    if all_timers:
        print(f"all {runs} runs")
        print("  " + summary("timer lag  ", all_timers))
        print("  " + summary("key latency", all_keys))


def main() -> None:
    """Parse the arguments and run the bench."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=60, help="samples of each delay per run")
    parser.add_argument("--interval", type=float, default=0.05, help="timer delay, seconds")
    parser.add_argument(
        "--db", type=Path, default=None, help="database (default: a temporary one, A4_B8 from scratch)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db_path = args.db or Path(folder) / "bench.sqlite"
        asyncio.run(bench(db_path, args.runs, args.samples, args.interval))


if __name__ == "__main__":
    main()

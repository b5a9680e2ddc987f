"""``bbcore.progress.RunClock``: every run's elapsed time and rate, reckoned one way."""

from __future__ import annotations

import time

from bbcore.progress import RunClock


def test_the_rate_is_the_runs_own_work_over_the_seconds_since_it_started():
    """Elapsed seconds and rate lie between what clocks read around the calls give: the rate
    counts ``own`` (what this run did), never ``done`` (what earlier runs stored too)."""
    first = time.monotonic()
    clock = RunClock("A4_B6")
    started = time.monotonic()
    time.sleep(0.001)  # so that the bounds below are no division by zero
    before = time.monotonic()
    progress = clock.progress(1_000, 58_905, "exploring", own=400)
    after = time.monotonic()
    assert (progress.config, progress.done, progress.total, progress.phase) == (
        "A4_B6",
        1_000,
        58_905,
        "exploring",
    )
    assert progress.unit == "molecules"
    assert before - started <= progress.elapsed <= after - first
    assert 400 / (after - first) <= progress.rate <= 400 / (before - started)


def test_a_phase_has_its_own_rate_and_the_runs_elapsed_time():
    """``since``: the rate over the phase's seconds; the elapsed time is still the run's."""
    clock = RunClock("A4_B6")
    phase_started = time.monotonic()
    time.sleep(0.001)
    before = time.monotonic()
    progress = clock.progress(30, 100, "spectrums", since=phase_started)
    after = time.monotonic()
    assert progress.elapsed >= before - clock.started and progress.elapsed <= after - clock.started
    assert 30 / (after - phase_started) <= progress.rate <= 30 / (before - phase_started)


def test_nothing_to_rate_is_no_rate():
    """Shards grouped, families written: ``own`` 0 is a rate of 0 (the faces then show no ETA)."""
    progress = RunClock("A4_B6").progress(3, 16, "grouping", own=0, unit="shards")
    assert progress.rate == 0.0 and progress.unit == "shards" and progress.eta is None


def test_a_phase_rate_counts_from_the_phase_start_given_not_the_clocks():
    """``since`` well before the clock started (a phase resumed by a later run, say): the rate is
    over the seconds since ``since``, not since the clock started."""
    since = time.monotonic() - 100.0
    clock = RunClock("A4_B6")
    before = time.monotonic()
    progress = clock.progress(30, 100, "spectrums", own=1_000, since=since)
    after = time.monotonic()
    assert 1_000 / (after - since) <= progress.rate <= 1_000 / (before - since)  # about 10 a second

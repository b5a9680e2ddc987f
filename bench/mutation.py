"""A mutation run people can repeat: mutmut over the pure modules, with each module's own tests.

    python bench/mutation.py                        # rays, numbering, geometry (minutes)
    python bench/mutation.py game decode ranges check --children 2
    python bench/mutation.py --all                  # every module below (an hour or more)
    python bench/mutation.py rays --show            # with each surviving mutant's diff

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

Notes: the mutants that survive are equivalent (the same behaviour whatever
the tests), as found in the last run; anything else that survives is a gap
to close with a test.

rays.py:
- ``trace``'s step bound ``2 * width * width + 1`` made ``- 1``, ``3 *`` or
  ``+ 2``, and the ``RayLoopError`` message: the bound only stops a ray that
  never ends, and none does (rays are reversible; a path crosses a cell at
  most once along each axis and never an atom's), so it is never reached;
- ``path_headings``: ``result == "out" and exit is not None`` made ``or``:
  only a ray that comes out has an exit;
- ``statistics_of_rays``: ``position <= (exit or 0)`` made ``<`` or
  ``(exit or 1)``: a ray out never exits at its own position, and always has
  an exit.

numbering.py:
- ``atoms_of``: ``x = m - 1`` made ``m + 1``, and the ``x -= 1`` after each
  atom made ``+= 1``: the ``while`` loop that follows walks ``x`` down to
  the same value (only later);
- ``fits_int64``: ``nb_mol < INT64_LIMIT`` made ``<=``: no configuration has exactly
  2^62 molecules (no C(n, k) with n up to 169 is 2^62 or 2^63);
- ``dtype=np.int64`` dropped or ``None`` (``binomial_table``, ``numbers_of``,
  ``atoms_of_numbers``, ``atoms_of_range``) and ``np.int16`` dropped in
  ``_combination_batches``: numpy's default integer is int64 on the 64-bit
  systems bbtui runs on, and the batches are cast to uint8 at the end;
- ``table if table is None`` made ``or True`` (``numbers_of``,
  ``atoms_of_numbers``): the table is built again, the same;
- ``_combination_batches``: the branch that flushes a pending group before a
  prefix too large for a batch (``yield complete(group)``, ``group, total
  = [], 0`` made ``None``, ``1``) is never taken: a prefix's count only
  falls as its cell grows, so a large one never follows a grouped one; and
  ``total = 1`` after a flush cuts a batch one molecule earlier, never
  changing which molecules come or in what order.

geometry.py, ``move_cursor``:
- ``beyond = target + side`` with one component of ``side`` negated: the
  four sides are tried in another order, and a corner has one perimeter
  neighbour besides the cursor's cell, whatever the order;
- ``side in (step, -step)`` with ``-step`` miswritten: the side skipped
  besides ``step`` points out of the box, where no corner is, so trying it
  changes nothing.

ranges.py:
- ``stored_intervals``: ``.limit(INTERVALS_PAGE)`` made ``.limit(None)``: the
  first query reads every interval and the second finds none after them, so
  the same intervals come in the same order; the page only bounds the memory
  a run holds (A10_B13), which no test's answer shows;
- ``stored_intervals``: ``.order_by(ExploredRange.start)`` dropped: the table
  is ``WITHOUT ROWID`` with the key ``(config, start)``, so SQLite reads it
  in key order, the same order (the ``order_by`` stays: SQL promises no order
  without it);
- ``missing_ranges``: ``start > cursor`` made ``>=``: when ``start ==
  cursor``, ``range(cursor, start, size)`` is empty and nothing is yielded.

game.py:
- ``Game.rays``: ``p < r`` made ``p <= r``: an exit is never at its own
  position (``with_result`` and the parsers refuse it), so ``p == r`` never
  happens;
- ``_game_from_labels``: ``waiting_ok=False`` made ``None``: both are false
  where ``_read_labels`` tests it;
- ``_parse_diagram``: the labels' first value ``""`` made ``"XXXX"``: the
  loop over the four sides sets every one of the 4W labels.

decode.py (every survivor explained; the 25 left open by the run before were
killed by tests/test_decode_edges.py and test_decode.py, or are below):
- ``_rarity`` (20 mutants: each constant, comparison and branch of the sort
  key): the key only orders the shown rays, so the molecules are filtered by
  the same rays in another order: the same candidates, only slower or faster;
- ``_computed_candidates``: ``sorted(game.rays(), key=_rarity...)`` with the
  key dropped or ``None``: the rays in position order (positions are
  distinct, so their results are never compared), the same candidates;
- ``_computed_candidates``: ``total > DIRECT_LIMIT`` made ``>=``: no C(n, k)
  equals 100,000,000 exactly (none for n up to 169), so the limit refuses
  the same decodes;
- ``_stored_candidates``: ``spectrum``, ``GLOB``, ``number`` and ``AND``
  written in another case: SQLite's keywords and column names ignore case;
  ``dtype=np.int64`` dropped or ``None`` (here and in ``_family_candidates``):
  numpy's default integer is int64 on the 64-bit systems bbtui runs on;
- ``_stored_candidates``: ``indexed=has_config_indexes(config)`` made
  ``None``: the query loses its ``INDEXED BY`` and SQLite picks its own plan,
  the same rows (only the plan, which bench/decode.py times, differs);
- ``candidates``: ``within.numbers is not None and within.atoms is not
  None`` made ``or`` (an assertion), and ``Candidates.molecules``: ``numbers
  is None or atoms is None`` made ``and``: every Candidates has both or
  neither (``candidates`` builds them so), so the two forms agree;
- ``candidates``: the ``"compute"`` the automatic choice falls back to made
  ``"XXcomputeXX"`` or ``"COMPUTE"``: only ``"store"`` is tested after it,
  anything else computes;
- ``Candidates.batches``: ``molecule_batches(config, size)`` with the size
  dropped, for candidates that are every molecule (no ray shown): the same
  molecules in the same order in batches of 32,768 instead of ``size``; the
  next shots sum the same counts (only how often they report progress, and
  the memory a batch takes, change);
- ``check_guess``: ``int(ray.exit or 0)`` made ``or 1``: a ray that comes
  out always has an exit.

check.py: its two numba kernels (``_spectrum_letters_kernel``,
``_spectrum_images_kernel``) carry ``# pragma: no mutate block``: numba
compiles them and cannot compile mutmut's trampoline (a ``**kwargs`` call:
``UnsupportedBytecodeError``), so mutmut leaves them whole; the groups check
re-traces every family through them.  check.py has about 3,200 mutants,
each run against test_check.py, test_check_damage.py,
test_check_compact_groups.py and test_check_compact_families.py (the tests
that reach the mutated function: dozens for a phase, about a hundred for
``check``, ``check_configuration`` and the samples).  A
mutant the tests kill costs about 2 s, one that survives every test 5 s to
45 s on a loaded machine: run it in parts, in a kept folder, the phases
that matter first, and read the figures of all the parts at the end::

    python bench/mutation.py check --work /tmp/mutation --only 'bbcore.check.x_check_configuration*'
    python bench/mutation.py check --work /tmp/mutation --report

Its survivors, as found (equivalent unless said otherwise):
- ``_sample_findings`` (33: each name, store and description of the
  samples' findings): it runs once, at import, to build ``FINDINGS``, before
  mutmut's forked test process picks a mutant, so none of them is ever
  active; the registry is pinned by test_check_damage.py (a planted damage
  per finding) and test_docs.py (docs/cli.md lists it);
- ``_computed_groups``: ``spectrum <= last`` made ``<`` and its CheckError's
  message made None: a guard against a changed query plan; SQLite reads the
  ambiguous molecules through the spectrum index, in spectrum order, and
  ``groupby`` gives each spectrum once, so it never fires; ``min(members,
  key=...)`` with the key dropped or None: the rows share their spectrum and
  have distinct numbers, so tuple order picks the same row;
- ``_check_family_batch``: ``dtype=np.int64`` dropped or None (11, 14, 58,
  60, 64, 66: numpy's default integer); ``image_numbers(..., None)`` (18:
  the binomial table built again); ``range(1, 8)`` made ``range(8)`` (34: t
  = 0 has no earlier transform); ``.get(name, -1)`` made ``-2`` (79: both
  mean no transform); ``at < len(expected)`` made ``<=`` (87: a number past
  every member fails the second test anyway); ``present[...] = True`` made
  None or False (100, 101: every member is then looked up among the stored
  rows and found there: the same findings, more queries);
  ``stored_rows(config, chunk, ("number",))`` without the columns, or
  ``"NUMBER"`` (115, 117: the default columns start with the number; SQLite
  ignores case);
- ``CompactGroups._unpack_damaged``: a block with no family left to
  re-trace, its empty arrays made float (96, 98, 106, 108: ``dtype`` None or
  dropped): nothing reads them (``if len(kept)``);
- ``check_groups``: ``steps += 1`` made ``-= 1`` (59): a progress report
  every ``BLOCK`` steps either way (``-k % BLOCK == 0`` exactly when
  ``k % BLOCK == 0``);
- ``check_families``: ``binomial_table(config)`` made None (28) or the table
  passed as None (67): the table is built again, the same;
  ``range(1, config.nb_mol + 2, FAMILY_BATCH)`` (53): when FAMILY_BATCH
  divides nb_mol, one more batch, from nb_mol + 1 to nb_mol + 1: it reads no
  row and names nothing (the bar gets the same figure again).

Killed since by a new test (they survived the run before it): the two gaps
the first run named, ``check_integrity`` 21 (the progress estimate made a
division: test_check.py's ``test_the_integrity_progress_follows_the_pages``
sees every tick, ``check.METER_INTERVAL`` set to 0) and
``_check_family_batch`` 168 (the ``continue`` after a stray row made
``break``: test_check_damage.py's edge ``two_stray_molecules_in_one_batch``);
``check_groups`` 49, 52, 87 (``next()`` without its default: a configuration
with no ambiguous spectrum, A1_B3, crashed), 58, 60, 88, 89, 153, 154, 157,
159 to 162, 166, 167 (the groups bar, test_check.py's
``test_the_groups_progress_counts_the_spectrums_rows_read``), 112, 116 to 118 (a Spectrums row missing in the
middle: the edge ``middle_spectrum_row_deleted``); ``check_families`` 35,
62, 93 (the families bar: ``test_the_families_progress_counts_the_rows_read``),
52, 60 (the last batch alone:
``test_a_row_moved_to_the_last_number_is_read_in_a_batch_of_its_own``, which
found a crash, below), 100 to 103 (canonical
numbers outside every batch: the edge
``molecule_canonical_numbers_outside_every_batch``).  The run found a second
crash: a families batch with no canonical number in it but a stored row
(a canonical number damaged into it: the high batches of any large
configuration) raised an IndexError; it is now named.  The numbers of
``_check_family_batch``'s mutants above are the first run's (the fix added
mutants before the later ones).

check.py, CompactGroups and FamilyRows.of (third run, 60 survivors: 36 killed by
tests/test_check_compact_groups.py since, 24 equivalent):
- ``CompactGroups.check``: ``sql.families_by(config, "position", "position >= ?")`` with either
  ``position`` made ``POSITION`` (51, 53): SQLite and PostgreSQL ignore the case of column names,
  and ``families_by`` names an index only for size_position and key;
- ``CompactGroups.block``: ``.decode("ascii")`` made ``"ASCII"`` (34): Python's codec names
  ignore case;
- ``CompactGroups.ordinals``: ``np.argsort(sizes, kind="stable")`` made ``"STABLE"`` (91): numpy
  reads a sort kind whatever its case; the first value of ``want_ordinal`` and ``want_before``,
  ``0`` made ``1`` (107, 113): a block's first family always starts a run of its size
  (``starts[0] == 0``), and the loop over ``starts`` sets that entry, so the 0 is never read;
- ``CompactGroups.unpack``, the shortcut for a block with no damage: ``_unpack_damaged`` unpacks
  a block family by family, checking every edge itself, and gives the same block for a
  well-formed one; it only costs time (1,013 ms against 12.5 ms for a block of 16,384 families
  of A6_B8, medians of 7).  So the shortcut's conditions made stricter send a well-formed block
  down that path, with the same block and findings: ``sizes >= 2`` made ``> 2`` or ``>= 3`` (42,
  43); a number ``>= 1`` made ``> 1`` or ``>= 2``, ``<= nb_mol`` made ``<`` (45, 46, 47);
  increasing ``> 0`` made ``> 1`` (51); the canonical number likewise (53, 54, 55); ``lengths %
  dtype.itemsize`` made ``/`` (16: every block with a molecule takes the slow path).  Also:
  ``later``'s first value ``False`` made ``True`` (34: only ``later[1:]`` is read);
  ``np.fromiter(..., count=len(blobs))`` without the count (10: the same array, grown);
- ``CompactGroups._unpack_damaged`` 96, 98, 106, 108: as in the run before;
- ``FamilyRows.of``: ``np.array(..., dtype=np.int64)`` with the dtype dropped or None (50, 52):
  numpy's default integer is int64, and every SQLite integer fits in it (a value of another type
  is left out before).
Killed: ``__init__`` 7, ``_differ`` 1, ``block`` 13, ``check`` 33, 81 to 83, ``size_starts`` 9 to
12 and 14 to 23, ``ordinals`` 19 to 21 and 25, ``unpack`` 20, 26, 36, 37 (20: ``astype(None)``
is float64, which rounds 2^53 + 1: A12_B13's numbers; 26: padding read as a molecule number past
1,482,184,792 molecules: A13_B6, both through ``CompactGroups.unpack`` directly), ``FamilyRows.of``
17, 20, 39 to 42, 45.

check.py, family_spectra, max_atoms_apart and CompactJudge (third run, 63 survivors: 11 killed by
tests/test_check_compact_families.py since, 36 equivalent, 16 gone with the code they mutated; the
numbers are the renumbered ones, the third run's in brackets):
- ``family_spectra`` no longer derives each image group's transform, first molecule and size, nor
  takes ``result`` None: ``ExpectedRows.canonical``, ``nb_mol`` and ``transform`` were read by
  nothing since the compact store keeps one Families row per family, and every caller passes a
  result. The 13 mutants of that code (third run's 41, 42, 110, 123, 130 to 132, 136, 139, 140,
  177, 179, 180) went with it; so did ``CompactJudge.__init__``'s 24, 26, 28 (``argsort``'s kind),
  with the sort, replaced by ``np.unique``.
- ``family_spectra``: the binomial table made None or left out (1, 9, 12, 16, 19, 63 [32]):
  ``atoms_of_numbers`` and ``image_numbers`` build it again, the same; ``decode("ASCII")`` (54, 58
  [72, 76]): Python's codec names ignore case; ``np.empty((families, 9, ...))`` (103 [146]): the
  kernel writes transforms 0 to 7 and nothing reads a ninth; ``range(8)`` for ``range(1, 8)`` (121
  [164]): t = 0 has no earlier transform. Killed: 41, 55 [59, 73] (the ``groups.member`` line's
  spectra).
- ``max_atoms_apart``: ``out`` made float (4, 6) or the minimum cast to float (95): small
  integers, exact in float64, compared with the stored int64 column by value and printed through
  ``int()``; ``boards`` in float64 (54, 56): the products count shared atoms (at most N), exact
  either way; the binomial table None or left out (12, 48, 51): built again; ``step = max(2,
  ...)`` (26): the step only sets how many families of one size one batched ``matmul`` takes, each
  family's minimum is over its own (size, size) matrix; the ``range`` without its step (38):
  batches overlap, each family computed again and the same value written; the diagonal made N - 1
  or N + 2 instead of N + 1 (91, 92): it only keeps a molecule's pair with itself out of the
  minimum, and two distinct molecules share at most N - 1 atoms, so any value >= N - 1 leaves the
  minimum as it is (test_check_compact_families.py checks the function against a brute-force count
  with ``MAX_APART_CELLS`` 1, 300 and as shipped).
- ``moved_partners``: ``take_along_axis`` without ``axis=1`` (7, 22): numpy >= 2.3 defaults it to
  -1, axis 1 of these 2-D arrays (an older numpy raises TypeError: killed there).
- ``CompactJudge.__init__``: ``dtype=np.int64`` None or dropped (21, 23 [8, 10]): the rows kept
  hold Python ints only, so numpy's default is int64; an empty table gives a float (0, 11) array,
  which ``_profile_keys`` casts and which ``judge`` never reads (``len(self.keys) == 0``);
  ``reshape(-2, ...)`` (25 [17], and ``judge`` 40): numpy infers any negative dimension; ``{} if
  everything or True`` (57 [36]): the judge also counts without ``--all``, but only
  ``every_profile`` reads the counts and ``check`` calls it only with ``--all``; ``key_index``
  None or ``index_exists(None)`` (58, 59 [37, 38]): ``groups_of`` reads the families by
  ``position``, the same rows by the same ``key IN (...)``: only the plan differs (a missing key
  index is named by the groups phase).
- ``CompactJudge.judge``: ``dtype`` None or dropped (36, 38): the statistics are Python ints,
  int64 by default; an empty batch gives a float (0, 9) array that ``_profile_keys`` casts; with
  no Profiles row, the sentinel key made two rows (51), ``+1`` (52) or ``-2`` (53): no re-traced
  profile equals any of them (statistics are never negative, and (1, ..., 1) would be 4 rays,
  never the box's 4W >= 8), and ``at`` stays 0: a non-negative int64's last byte is at most 0x7F,
  so a key sorts before the all-0xFF sentinel. Killed: 17, 25, 26 (the "a member" line), 45 to 50
  (the empty Profiles table crashed).

check.py, the fourth run (2026-11-25, every mutant not run before; code of main af4cdf9):
- ``_sample_findings`` (33), as before: never active in a test.
- ``_check_family_batch``: the first run's equivalents again, renumbered: dtype dropped or None
  (11, 14, 58, 60, 64, 66), the binomial table passed as None (18, 263, 266: built again),
  ``range(8)`` (34), ``.get(..., -1)`` made ``-2`` (79 for the transform, 309 for a canonical
  row: both filtered by ``>= 0``), ``at <= len(expected)`` (92), ``present[...]`` None or False
  (105, 106), ``stored_rows`` without its columns or ``"NUMBER"`` (120, 122), ``"ASCII"`` (376).
  209 (the computed canonical number of a ``families.canonical_number`` line made None) is killed:
  test_check_damage.py's ``molecule_canonical_number`` now expects the whole line.
- ``_computed_groups``: 19, 20, 26, 28 as before.  3 to 8 are its server branch (``ORDER BY ...
  COLLATE "C"``), reached only on a server, which the mutation run does not start: 3, 4, 5, 6
  and 7 (no ORDER BY, the statement replaced, ``-=``, XX, ``collate "c"``: no such collation)
  fail tests/test_server_readers.py's check tests (checked by hand: 3, 4, 7); 8 (``M.SPECTRUM``:
  unquoted names fold to lower case) is equivalent.
- ``server_integrity`` (9, reached by no test here): its line is asserted whole by
  test_server_readers.py (a message wrapped in XX passed the substring test before: now fails,
  checked by hand).
- ``rows_in_blocks`` 1 to 14: its server branch.  The named cursor (1, 3, 5: an unnamed or a
  client cursor; 2, 7: crash; 4, 6, 8: ``withhold`` None, dropped or False) and the execute (9
  to 14) fail test_server_readers.py's ``test_check_reads_the_servers_rows_a_block_at_a_time``
  (pg_cursors names two open cursors mid-way, none at the end) or its check tests (checked by
  hand: 1, 3, 5, 8, 10, 12, 13).
- ``findings_of`` (1, no test): it had no caller; removed.
- ``_boards`` 24, ``_as_bytes`` 6: ``"ASCII"``.  ``_canonical_text`` 11, 13, 17, ``_profile_keys``
  3, 5: dtype dropped or None, the table None (built again).  ``_by_size`` 10, 17: ``minlength``
  dropped: ``np.unique``'s inverse takes every value from 0 to ``len(values) - 1``, so bincount
  has that length anyway.  ``_compare`` 31 (``repr`` always): the values compared are text or
  integers (or None), and ``repr`` of an integer or None is its ``str``.
- ``check_families`` 28, 53, 67 and ``check_groups`` 59 as before; ``check_groups`` 162 (the bar's
  total made None mid-way) is killed: test_check.py's groups-bar test asserts each tick's total.
- ``CheckReport.summary`` (10), ``CheckResult.add`` 2, 3, 7, ``Difference.__post_init__`` 2,
  ``SqliteMeter.tick`` 4: killed by test_check.py's ``test_the_json_summary_says_what_was_checked``,
  ``test_a_result_counts_every_difference_and_lists_the_first``,
  ``test_a_finding_of_another_phase_or_none_is_refused_by_name``,
  ``test_the_integrity_progress_reports_at_most_once_an_interval``.  ``SqliteMeter.tick`` 5 (``>``
  for ``>=``): two readings of the monotonic clock (nanoseconds) a tick of ``OPS_PER_TICK``
  instructions apart are never equal.  ``SqliteMeter.__exit__`` 4 (the handler removed with
  ``n`` 1): no handler, no calls, whatever ``n``.  ``SqliteMeter.__init__`` 6 (``max(..., 2)``): the
  instructions expected are pages times ``INTEGRITY_OPS_PER_PAGE``, never under 2; 8 (``ops = 1``):
  one instruction more in an estimate of thousands a page, under a page's difference (the bar
  test allows one page); 10 (``last = 1.0``): the first tick still reports, the clock being past
  1 s.
- ``CompactJudge.groups_of`` 55, 60, 65, 99 and ``_inside`` 2 to 4 are killed by test_check.py's
  ``test_the_compact_samples_find_each_spectrums_molecules_from_its_family``; 21 (always by
  ``position``): the families are found by the same ``key IN (...)`` condition through the other
  index, the same rows (a missing key index is named by the groups phase); 24, 26 (``KEY``,
  ``POSITION``): SQLite ignores case; 98: ``"ASCII"``.
- ``partners``: 47, 48, 100 are killed by test_check.py's
  ``test_partners_reads_every_well_formed_spectrum_and_refuses_the_others``.  Equivalent: the
  keys ``r * 32 + letter`` written ``r * 33``, ``- (letter)``, ``letter + ord("a")`` or ``- ord("A")``
  (53, 55, 56, 59: each row's keys still fall in a range of their own, so a letter's two
  positions still pair within their row); the sort's ``kind`` (75, 77, 79: the two positions of
  a letter are written each to the other, in either order); ``r[1::2]`` for ``r[0::2]`` (82: a
  letter's two positions are in the same row); ``ok =`` for ``ok &=`` (99: a row with an unknown
  position is compared as all ``@``, which only an all-``@`` text matches, and that text has no
  unknown position); dtype None or dropped (5, 8, 21, 29, 32: a float text compares the same).
- ``check_configuration`` 60, 73, 74, 78, 80, 88, 89 (the ranges findings' words made None, XX
  or another case): killed, test_check_damage.py names each ranges finding by its whole line and
  has an edge for the hole at the end (``ranges_stop_a_molecule_short_of_the_last``); 41
  (``order_by(None)``): ExploredRanges is a WITHOUT ROWID table keyed ``(config, start)``, read in
  key order (ranges.py's same note).
- ``sample_numbers`` 11 to 13, 15, 29, 32 to 34, 37 and ``check_sample`` 32 to 37 are killed by
  test_check.py's ``test_a_seed_names_the_same_sample_in_every_release`` (a seed's sample pinned:
  docs/cli.md promises the same samples every time) and ``test_the_samples_progress_in_their_batches``;
  ``sample_numbers`` 1 (``size > nb_mol``): a sample of every molecule drawn without replacement
  is every molecule, sorted (a list instead of a range); 18 (``replace=None``): false, as False.
- ``check_configuration`` 90, 95, 96, 102, 112 to 114, 123, 125 to 141 (the overlap's, the range
  beyond's and the end hole's words, the end hole's condition ``expected - 1``) and 99 (``stop >
  expected + 2``): killed by the whole lines and the edges ``ranges_stop_a_molecule_short_of_the_last``
  and ``ranges_go_one_molecule_past_the_last``.
- ``check`` 1, 16, 20, 138, 139 (``everything`` True by default or never, the seed None, the
  seconds dropped or ``+ started``) and ``megabytes`` 1 to 8: killed by test_check.py's
  ``test_check_retraces_the_seeds_samples_or_every_molecule_and_times_itself`` (the two tracers
  watched, called through) and ``test_megabytes_are_whole_from_ten_on``; ``check`` 29, 30 (a
  server's integrity line: ``is_server(None)``, None) fail test_server_readers.py (checked by hand).
- ``engine_rows`` 7, 9 (dtype), 16, 19 (``"ASCII"``): equivalent.
- ``CompactJudge.judge``'s 15 survivors of this run (56 to 61, 71, 83 to 88, 94, 95: the empty
  Profiles table's path and its "no such row" line) were mutants of the code before the third
  run's fixes.  Run again on the new code, with every mutant of ``CompactJudge.judge`` and
  ``check_count`` and the ones above said killed (383 mutants, ``--only``): 370 killed, 13
  survived: ``judge`` 36, 38, 40, 51 to 53 (above); 58, 60 (the no-profile ``lowest`` made
  float: compared and printed through ``int()`` the same) and 61 (two zeros for one: only index 0
  is read when no profile is stored) equivalent; ``sample_numbers`` 1 and 18 (above); 71 (``at``
  capped at ``len + 1``: a key past every stored one read out of bounds) and ``megabytes`` 8 (the
  tenth's divisor 1,000,001) killed since, by test_check.py's
  ``test_a_missing_profile_that_sorts_last_is_named`` and 1.35 MB shown 1.4 MB (checked by hand).
  ``CompactJudge.__init__`` changed once more after these runs (Profiles rows read into int64 at
  once when numpy finds only integers, row by row otherwise): its mutant numbers above are those
  of the code before; the fallback is pinned by test_check_compact_families.py's malformed-value
  test (it fails when the fast path is taken always: checked by hand).

What makes a mutant cheap (tests/conftest.py): the check tests share one
A3_B5 per store (``a3_b5_stores``), under mutmut explored once for the whole
run (its collection, in the process that forks one per mutant, sets
``$BBTUI_TEST_A3_B5_STORES``); and rays.py's answers are remembered across
a session (``remembered_reference``): the reference sample re-traced the
same 1,000 molecules in every test, 83% of a check of A3_B5.

Last runs (2 children, a shared 2-core machine, 2026-11-25, every module
whole on the same code; ``--report`` printed): rays 97.7% (339 of 347, 8
equivalent), numbering 93.9% (293 killed and 1 timeout of 313, 19
equivalent), geometry 97.7% (214 of 219, 5 equivalent), game 99.4% (510 of
513, 3 equivalent), decode 92.6% (474 of 512, 38 equivalent), ranges 95.2%
(60 of 63, 3 equivalent), none reached by no test.  check.py, run whole in
two parts on the code of main af4cdf9 (the third run, 1,231 mutants of the
compact store's groups check; the fourth, the 1,993 others, 97 minutes at
load 3 to 13): killed 2,862, timeout 5, survived 347, no tests 10, score
89.2%.  Of the 357 survivors and untested: 136 killed by tests written
since (above), 30 reached only on a server and failing the server tests
(checked by hand), 17 gone with dead code, 15 mutants of the compact judge
before its fixes (run again: below), 159 equivalent (above).  Counting the
tests since, 95.0% (3,033 of 3,192), the rest equivalent.
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

MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "rays": ("bbcore/rays.py", ("tests/test_rays.py",)),
    "numbering": ("bbcore/numbering.py", ("tests/test_numbering.py",)),
    "geometry": ("bbcore/geometry.py", ("tests/test_symmetry.py", "tests/test_rays.py")),
    "game": ("bbcore/game.py", ("tests/test_decode.py", "tests/test_play.py")),
    "decode": ("bbcore/decode.py", ("tests/test_decode.py", "tests/test_decode_edges.py")),
    "ranges": ("bbcore/ranges.py", ("tests/test_ranges.py",)),
    "check": (
        "bbcore/check.py",
        (
            "tests/test_check.py",
            "tests/test_check_damage.py",
            "tests/test_check_compact_groups.py",
            "tests/test_check_compact_families.py",
        ),
    ),
    # the modules the run did not cover before issue 33 (scores: docs/tests.md, notes:
    # bench/mutation_notes_new.md); store and strategy are large: run them a few functions at a
    # time with --only ('bbcore.store.x_*range*')
    "shots": ("bbcore/shots.py", ("tests/test_decode.py", "tests/test_shots.py", "tests/test_shrunk.py")),
    "queries": ("bbcore/queries.py", ("tests/test_queries_expect.py", "tests/test_queries.py")),
    "families": ("bbcore/families.py", ("tests/test_compact.py",)),
    "statistics": ("bbcore/statistics.py", ("tests/test_statistics.py", "tests/test_statistics_stores.py")),
    "copy": ("bbcore/copy.py", ("tests/test_copy.py",)),
    "export": ("bbcore/export.py", ("tests/test_export.py",)),
    "compact.shards": ("bbcore/compact/shards.py", ("tests/test_compact.py",)),
    "compact.trace": ("bbcore/compact/trace.py", ("tests/test_compact.py",)),
    "compact.group": ("bbcore/compact/group.py", ("tests/test_compact.py",)),
    "compact.write": ("bbcore/compact/write.py", ("tests/test_compact.py",)),
    "compact.run": ("bbcore/compact/run.py", ("tests/test_compact.py",)),
    "store": ("bbcore/store.py", ("tests/test_schema.py", "tests/test_explore.py")),
    "strategy": ("bbcore/strategy.py", ("tests/test_strategy.py",)),
}
"""Each module and the tests run against its mutants."""
DEFAULT = ("rays", "numbering", "geometry")


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


def mutmut_section(source: str, tests: tuple[str, ...]) -> str:
    """The ``[tool.mutmut]`` section for one module and its tests."""
    return (
        "\n[tool.mutmut]\n"
        f"source_paths = [{json.dumps(source)}]\n"
        'also_copy = ["bbcore", "tests"]\n'
        f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}\n"
        'pytest_add_cli_args = ["-p", "no:xdist", "-p", "no:cacheprovider", "-q"]\n'
        "use_git_change_detection = false\n"
    )


def run_module(name: str, work: Path, children: int, show: bool, only: tuple[str, ...] = ()) -> dict:
    """Mutate one module in its own copy of the checkout; its figures and surviving mutants.

    ``only``: mutmut's mutant names or globs (``bbcore.check.x_check_*``): those
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
    pyproject.write_text(pyproject.read_text() + mutmut_section(source, tests))
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE", help=", ".join(MODULES))
    parser.add_argument("--all", action="store_true", help="every module")
    parser.add_argument("--children", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument("--work", type=Path, help="folder for the copies (default: a temporary one, removed)")
    parser.add_argument("--show", action="store_true", help="print each surviving mutant's diff")
    parser.add_argument(
        "--report", action="store_true", help="run nothing: print the figures of the runs already in --work"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="GLOB",
        help="run only the mutants so named (mutmut's globs: 'bbcore.check.x_check_*'); repeatable",
    )
    args = parser.parse_args()
    names = list(MODULES) if args.all else (args.modules or list(DEFAULT))
    unknown = [name for name in names if name not in MODULES]
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
                figures[name] = run_module(name, work, args.children, args.show, tuple(args.only))
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

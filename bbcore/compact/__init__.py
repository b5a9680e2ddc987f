"""The compact exploration: every molecule traced, only the result stored.

A full store (``bbcore.full``) writes a row per molecule.  A compact one
stores what the readers need and recomputes the rest from molecule numbers:

- the ``Configurations`` row, with ``store = 'compact'`` and its shard count;
- ``Families``: one row per family of ambiguous spectra (its canonical
  number, key, size, spectra, first spectrum and that spectrum's molecules,
  and its ordinals in the groups listing); the spec's ``Spectrums`` rows
  and each spectrum's molecules are derived from it on read
  (``bbcore.families``);
- ``Profiles``: the molecules counted by their 9 profile statistics with the
  lowest number of each (``statistics.statistics_profile`` reads it: the
  distributions and ray records follow), and ``GroupedShards.risk``: the
  spectral groups counted by atoms differing (the risk table);
- ``ExploredRanges`` rows for the traced ranges, as in a full store.

Glossary:

- *key*: a 64-bit hash that every molecule of an enantiomer group shares with
  every molecule whose spectrum is one of that group's spectra or their
  images by symmetry (``engine.spectrum_keys``: the hash of the smallest of
  the spectrum's 8 images; a run keeps its ``engine.KEYINGS``, in the file
  ``keying``: before 2026-12-02, the smallest of their hashes).  Equal
  spectra always have equal keys; unequal
  ones rarely do, so a key proposes a spectral group and the grouping checks
  it spectrum by spectrum;
- *record*: ``(key, number)`` of one canonical molecule, 16 bytes; the top
  bit of ``number`` (``SHARED``) says that two distinct images of the
  molecule have the same spectrum (with the hashed keying: may have, their
  hashes being equal), the next four (``LOWEST``) which image is the key's
  when the molecule is *asymmetric* (8 distinct images, ``SHARED`` not set:
  almost every one);
- *shard*: the records whose key ends with the same bits, in one folder of
  files, one file per traced range.

How it runs, in three stages, the first two of independent tasks (``bbcore.runner``),
one module each (``trace``, ``group``, ``write``), over what they share
(``shards``: records, folders, phases) and driven one after the other by
``run`` (the pipeline ``bbcore.explore`` picks):

1. *tracing*: the numbers are cut into ranges; ``trace_range`` traces the
   canonical molecules of a range (one in eight molecules: symmetry maps
   spectra to spectra, so each image's key is its canonical molecule's),
   writes its records to the shard folders and returns the range's profile.
   The driver writes the profile to a file and records the range in
   ``ExploredRanges``, in that order;
2. *grouping*: when every range is traced, the profiles are summed into
   ``Profiles``; then ``group_shard`` reads one shard, sorts it by key, and
   for each key held by two records or by a ``SHARED`` one traces those
   enantiomer groups again with their spectra and keeps the spectra of two
   molecules or more (a key of asymmetric molecules only: each one's
   ``LOWEST`` image alone, the other 7 neither numbered nor hashed).  It
   writes them, sorted, to the shard's result folder and returns its counts; the driver records the shard in
   ``GroupedShards`` and deletes the shard's records;
3. *writing*: the families of every shard are merged by canonical number
   into ``Families`` (``write_result``), their ordinals computed as the
   merge streams (``families.FamilyOrdinals``): rows inserted in key order
   only ever extend a B-tree at its end.  On SQLite the merged order is cut
   into parts that worker processes write into files of their own
   (``write_part``), and the driver copies each part in order, in one
   transaction; on a server the driver writes every row.  The family
   indexes are built, then the configuration is ``complete`` and its shard
   folder is deleted.

A run stopped at any moment resumes: ranges and shards that are recorded are
not done again, files of a range that was not recorded (a run killed
between writing and recording) are deleted before tracing resumes, and the
writing resumes after the last family stored (parts written but not copied
are written again).  Memory is
bounded by the shard size (``SHARD_RECORDS``) and the range size, disk by the
records (16 bytes per canonical molecule, about 2 bytes per molecule) and
the result (A7_B8: 4.2 bytes a molecule at the peak, the database and the
shards' results).

The shard files live in ``<database>.shards/<config>/`` unless told otherwise,
which every worker must see (a shared folder for a cluster).
"""

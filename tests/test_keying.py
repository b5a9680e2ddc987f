"""How a compact run keys spectra (``engine.KEYINGS``), against the reference rays.

A key names a family of spectra (a spectrum and its images by the 8
symmetries): every molecule whose spectrum is in the family has it, so the
records of one spectral group meet in one run of equal keys.  ``LEXICAL``
keys by the lexicographically smallest image, ``HASHED`` (runs begun before
2026-12-02) by the smallest of the images' hashes; a run keeps its keying
(``trace.run_keying``) and a reader tries both (``engine.stored_keys``).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from bbcore import engine, rays
from bbcore.compact import trace
from bbcore.compact.shards import CompactError
from bbcore.config import Config, parse_config
from bbcore.geometry import TRANSFORM_NAMES, transform_atoms
from bbcore.store import ExploredRange, open_database


def reference_codes(config: Config, atoms: tuple[int, ...]) -> tuple[int, ...]:
    """A molecule's spectrum as the keys compare it, from the reference rays: position by
    position 1 for a reflected ray, 2 for an absorbed one, the exit position + 2 for one out."""
    return tuple(
        {"reflected": 1, "absorbed": 2}.get(ray.result) or ray.exit + 2
        for ray in rays.trace_all(config, atoms)
    )


def canonical_traced(config: Config) -> tuple[np.ndarray, np.ndarray]:
    """Every canonical molecule of a configuration: its atoms and partner arrays."""
    atoms, _ = engine.canonical_molecules(config, 1, config.nb_mol + 1)
    return atoms, engine.trace_batch(config, atoms)[0]


@pytest.mark.parametrize("name", ["A4_B4", "A3_B5", "A4_B5"])
def test_lexical_keys_follow_the_smallest_image_of_the_reference(name):
    """For each canonical molecule, its 8 images traced by the reference: ``orbit`` counts the
    distinct images; ``shared`` is set exactly when two distinct images have the same spectrum;
    ``lowest`` is the first transform giving the smallest image spectrum when the molecule has 8
    distinct images and ``shared`` is not set; molecules whose smallest images are equal (one
    family of spectra) have one key, and here no two families share one."""
    config = parse_config(name)
    atoms, partner = canonical_traced(config)
    keys, orbit, shared, lowest = engine.spectrum_keys(config, atoms, partner, engine.LEXICAL)
    keys_of_family: dict[tuple[int, ...], set[int]] = {}
    for m, cells in enumerate(atoms.tolist()):
        images = [transform_atoms(config, tuple(cells), t) for t in TRANSFORM_NAMES]
        codes = [reference_codes(config, image) for image in images]
        alike = any(codes[t] == codes[u] and images[t] != images[u] for t, u in combinations(range(8), 2))
        assert (orbit[m], shared[m]) == (len(set(images)), alike), cells
        asymmetric = len(set(images)) == 8 and not alike
        assert lowest[m] == (codes.index(min(codes)) if asymmetric else -1), cells
        keys_of_family.setdefault(min(codes), set()).add(int(keys[m]))
    assert all(len(found) == 1 for found in keys_of_family.values())
    assert len(set().union(*keys_of_family.values())) == len(keys_of_family)
    assert shared.any() and (lowest >= 0).any() and ((lowest < 0) & ~shared).any()  # each kind crossed
    assert set(lowest.tolist()) >= {-1, 0, 7}


@pytest.mark.parametrize("keying", engine.KEYINGS)
def test_either_keying_gives_a_family_of_spectra_one_key_and_a_typed_spectrum_its_key(keying):
    """Both keyings, A4_B5: the canonical molecules of one family of spectra (their smallest images
    equal) have one key; the key of a spectrum given alone (``spectra_keys``, what a reader
    computes) is its molecule's; ``stored_keys`` holds it in the keying's column."""
    config = Config(4, 5)
    atoms, partner = canonical_traced(config)
    keys = engine.spectrum_keys(config, atoms, partner, keying).keys
    assert engine.spectra_keys(config, partner, keying).tolist() == keys.tolist()
    column = engine.KEYINGS.index(keying)
    assert engine.stored_keys(config, partner)[:, column].tolist() == keys.view(np.int64).tolist()
    family = {}
    for m, cells in enumerate(atoms.tolist()):
        smallest = min(
            reference_codes(config, transform_atoms(config, tuple(cells), t)) for t in TRANSFORM_NAMES
        )
        assert family.setdefault(smallest, int(keys[m])) == int(keys[m])


def test_the_two_keyings_differ_and_an_unknown_one_is_refused():
    """The keyings are two different functions (a run that mixed them would split its groups):
    their keys agree only where the smallest image has the smallest hash too (one spectrum in
    8, or more where images repeat); a name that is neither is a programming error, said so."""
    config = Config(3, 5)
    atoms, partner = canonical_traced(config)
    lexical, hashed = engine.stored_keys(config, partner).T
    assert 0.75 < (lexical != hashed).mean() < 0.95
    with pytest.raises(ValueError, match="unknown keying 'sorted': one of lexical, hashed"):
        engine.spectrum_keys(config, atoms, partner, "sorted")


def test_a_run_keeps_the_keying_it_began_with(tmp_path):
    """A run with nothing traced takes the lexical keys and writes them down; a run with traced
    ranges and no keying file began before the lexical keys, and keeps the hashed ones (written
    down too); the file, once there, decides, and a keying this bbtui does not know, or a file
    that is not text, stops the run in one line."""
    open_database(tmp_path / "db.sqlite")
    config = Config(3, 5)
    fresh, older, newer, broken = (tmp_path / name for name in ("fresh", "older", "newer", "broken"))
    assert trace.run_keying(fresh, config) == engine.LEXICAL
    assert (fresh / trace.KEYING).read_text() == "lexical\n"
    ExploredRange.create(config=config.name, start=1, stop=101, nb_mol=100)
    assert trace.run_keying(fresh, config) == engine.LEXICAL  # the file decides
    assert trace.run_keying(older, config) == engine.HASHED
    assert (older / trace.KEYING).read_text() == "hashed\n"
    assert not list(older.glob(".*"))  # no temporary file left
    newer.mkdir()
    (newer / trace.KEYING).write_text("sorted\n")
    with pytest.raises(CompactError, match="keyed 'sorted', which this bbtui does not know") as error:
        trace.run_keying(newer, config)
    assert "\n" not in str(error.value)
    broken.mkdir()
    (broken / trace.KEYING).write_bytes(b"\xff\xfe")
    with pytest.raises(CompactError, match="keyed 'not text'"):
        trace.run_keying(broken, config)

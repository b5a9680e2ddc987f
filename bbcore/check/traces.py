"""Spectra as arrays: strings read as partner arrays (``engine.trace_batch``'s codes) and
written back as letters, by numpy and two numba kernels, a block at a time.
"""

from __future__ import annotations

import numpy as np

from bbcore import engine
from bbcore.config import Config


def moved_partners(
    partner: np.ndarray, transform: np.ndarray, source: np.ndarray, inverse: np.ndarray
) -> np.ndarray:
    """Partner arrays (k, 4W) moved by a transform each (indexes, shape (k,)): the images' spectra."""
    moved = np.take_along_axis(partner, source[transform], axis=1)
    return np.where(moved >= 0, np.take_along_axis(inverse[transform], np.maximum(moved, 0), axis=1), moved)


def partners(config: Config, spectra: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Spectrum strings as partner arrays (``engine.trace_batch``'s codes), and which are well formed.

    A well-formed spectrum has 4W characters: ``@``, ``&``, and lowercase
    letters each at exactly two positions, given in order of first
    appearance (normalised).
    """
    npos = config.positions
    partner = np.full((len(spectra), npos), engine.UNKNOWN, dtype=np.int64)
    valid = np.array([len(s) == npos and s.isascii() for s in spectra], dtype=bool)
    rows = np.nonzero(valid)[0]
    if not len(rows):
        return partner, valid
    text = _as_bytes([spectra[i] for i in rows.tolist()], npos).astype(np.int64)
    block = np.full(text.shape, engine.UNKNOWN, dtype=np.int64)
    block[text == ord("@")] = engine.ABSORBED_CODE
    block[text == ord("&")] = engine.REFLECTED_CODE
    r, q = np.nonzero((text >= ord("a")) & (text <= ord("z")))
    key = r * 32 + (text[r, q] - ord("a"))
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    twice = counts[inverse] == 2
    r, q, key = r[twice], q[twice], key[twice]
    order = np.argsort(key, kind="stable")  # a letter's two positions, side by side
    r, q = r[order], q[order]
    block[r[0::2], q[0::2]] = q[1::2]
    block[r[1::2], q[1::2]] = q[0::2]
    ok = (block != engine.UNKNOWN).all(axis=1)
    # normalised: letters in order of first appearance (what engine.letters writes)
    ok &= (letters(np.where(ok[:, None], block, engine.ABSORBED_CODE)) == text).all(axis=1)
    partner[rows] = block
    valid[rows] = ok
    return partner, valid


def letters(partner: np.ndarray) -> np.ndarray:
    """``engine.letters`` (normalised spectra as uint8, shape (k, 4W)) by a numba kernel."""
    out = np.empty(partner.shape, dtype=np.uint8)
    engine.compiled(_spectrum_letters_kernel)(np.ascontiguousarray(partner), out)
    return out


def _as_bytes(spectra: list[str], positions: int) -> np.ndarray:
    """Spectra of ``positions`` ASCII characters each as a (k, positions) uint8 array, in one pass."""
    joined = "".join(spectra).encode("ascii")
    return np.frombuffer(joined, dtype=np.uint8).reshape(len(spectra), positions)


# numba compiles the two kernels below: mutmut leaves them whole (its wrapper is no numba code)
def _spectrum_letters_kernel(partner, out):  # pragma: no mutate block
    """``engine.letters`` row by row (numba): numpy's version made a dozen (k, 4W) arrays."""
    rows, positions = partner.shape
    for r in range(rows):
        letter = 0
        for p in range(positions):
            q = partner[r, p]
            if q == -1:  # engine.ABSORBED_CODE
                out[r, p] = 64
            elif q == -2:  # engine.REFLECTED_CODE
                out[r, p] = 38
            elif q > p:
                out[r, p] = 97 + letter
                letter += 1
            else:
                out[r, p] = out[r, q]


def _spectrum_images_kernel(partner, source, inverse, out):  # pragma: no mutate block
    """The spectra (letters) of the 8 images of each partner array: ``out[f, t]`` by transform t.

    The image by t sees at position p what the molecule saw at ``source[t, p]``,
    an exit moved by ``inverse[t]`` (``moved_partners``).
    """
    rows, positions = partner.shape
    for f in range(rows):
        for t in range(8):
            letter = 0
            for p in range(positions):
                q = partner[f, source[t, p]]
                if q == -1:
                    out[f, t, p] = 64
                elif q == -2:
                    out[f, t, p] = 38
                else:
                    q = inverse[t, q]
                    if q > p:
                        out[f, t, p] = 97 + letter
                        letter += 1
                    else:
                        out[f, t, p] = out[f, t, q]

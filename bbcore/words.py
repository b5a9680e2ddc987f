"""Numbers and words in messages, written the same way by the CLI and the TUI.

Counts have thousands separators (``635,376``) and their noun agrees
(``1 family``, ``2 families``); ``a``/``an`` agree with what follows as it
is read aloud (``an 8 x 8 box``, ``an A4_B8 molecule``).  A leaf module:
``config``, ``geometry`` and ``numbering`` use it for their messages.
"""

from __future__ import annotations


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 cell``, ``2 cells``, ``1,024 cells``; ``words`` for an irregular plural
    (``plural(n, "family", "families")``)."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def article(text: str) -> str:
    """``text`` with ``a`` or ``an`` before it, as it is read aloud: ``an 8 x 8 box``,
    ``a 4 x 4 box``, ``an 11 x 11 box``, ``an A4_B8 molecule`` (a capital spelled
    out), ``a molecule``, ``an atom``."""
    first = text[:1]
    if first.isdigit():
        number = text[: len(text) - len(text.lstrip("0123456789"))]
        vowel = number.startswith("8") or number in ("11", "18")
    elif first.isupper() and not text[1:2].islower():
        vowel = first in "AEFHILMNORSX"  # spelled out: an A4_B8, an F, a B4
    else:
        vowel = first in "aeiouAEIOU"
    return f"{'an' if vowel else 'a'} {text}"

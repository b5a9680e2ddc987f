"""The Help screen: the game, the notation, the screens and their keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown

from bbcore.config import Config
from bbcore.render import config_positions_figure, render_board

EXAMPLE = render_board(4, "O-O-------------", "@&ab@&@cbac@&@&@")

HELP = f"""\
# Black Box, and how bbtui writes it

**Black Box** is a deduction game: N *atoms* are hidden in a W x W *box*; the
seeker shoots *rays* into it from the 4W *positions* around the box and
deduces where the atoms are from where each ray comes out.  A
*configuration* `AN_BW` is N atoms in a W x W box: `A4_B8` is the standard
game.  A *molecule* is one placement of the atoms; they are numbered from 1.

## Positions

Positions 1..W are on the left side (top to bottom), then the bottom side
(left to right), the right side (bottom to top) and the top side (right to
left).  For `A4_B8`:

```
{config_positions_figure(Config(4, 8))}
```

## Rays and spectra

A ray is **absorbed** when it hits an atom (`@`, traditionally `H`),
**reflected** when it comes back where it entered (`&`, traditionally `R`),
or it comes **out** at another position: both ends get the same label (a
letter, or a number in the traditional notation).  A ray turns 90 degrees
away from an atom diagonally ahead of it.

The **spectrum** of a molecule is the results of all 4W rays, position 1
first.  Its letters are *normalised*: given in order of first appearance.
Molecule #2 of `A2_B4` and its spectrum `@&ab@&@cbac@&@&@`:

```
{EXAMPLE}
```

## Boards

`O` is an atom, `-` an empty cell, `X` an atom that is *not* common to every
molecule of a spectral group (highlighted).  On a focused board the arrow
keys move a cursor round the perimeter and draw that position's ray,
cell by cell (`─ │` straight, `┌ ┐ └ ┘` a turn); its entry and exit are
highlighted, and its length and turns written below.  The arrows along a
side follow it and turn the corner at its end (one arrow per side goes
round the box in position order); an arrow into the box turns the corner
only next to one, and never jumps across.  `#` shows the position numbers,
`x` hides the ray.  Boards side by side share the ray cursor.

## Symmetries and groups

The 8 symmetries of the square (`id`, `rot90`, `rot180`, `rot270`,
`symm-h`, `symm-v`, `diag-1`, `diag-2`) turn a molecule into its
**enantiomer group**; its lowest-numbered molecule is the **canonical**
one, and each molecule records the *transform* that makes it from there.

A **spectral group** is a spectrum shared by two or more molecules: the
seeker cannot tell them apart even after shooting every ray.  Symmetric
spectral groups form a *family*, listed once (transform `id`) unless you
ask for every group.  *diff* is the most atoms that differ between two
molecules of a group.

## Screens and keys

- **Explore** (`e`): the configurations of the database and their state;
  `s` start or resume, `p` pause, `r` restart from scratch, `n` type a new
  configuration, Enter on an explored one opens its groups.
- **Groups** (`g`): the spectral groups of the selected configuration, a
  page at a time; `n` `p` next and previous page, `f` `l` first and last,
  `o` order (canonical or size), `s` one size at a time, `a` every group or
  one per family, Enter opens the group.
- **Group**: a group's molecules side by side; `n` `p` next and previous
  group, arrows a ray, `o` the molecule of the focused board.
- **Decode** (`d`): write a game, see the molecules that agree with it
  (the *candidates*), the atom heat map and the best next shots.  Type the
  game in the game input (`@`/`H`, `&`/`R`, labels, `.` not shot; tokens
  for multi-digit labels) and Enter, paste a diagram, or build it on the
  game board: the arrows move the cursor round the box, then `H` or `@`
  absorbed, `R` or `&` reflected, a letter or digit an exit label (the
  same label at two positions pairs the two ends of one ray; digits typed
  in a row make one number, `12`); backspace erases, `del` or space clears.
  A position that holds a result is never overwritten: clear it first.
  Typing goes where the focus is: an input, or the game board, where every
  letter and digit is a label.  `escape` steps out one level, and the
  footer says where to: from an input to the board (`esc Board`), from the
  board to the screen's keys (`esc Keys`: nothing focused, every letter a
  key again, `P` plays, `g` groups), from there back (`esc Back`).  `/`
  goes to the game input from anywhere; `tab` goes configuration, game,
  guess, board, candidates.
  A label at one end only *waits* (highlighted) for the other end.  Each
  cell shows the % of candidates with an atom there; `*` marks the best
  next shot and the caption gives the cursor position's figures.  `ctrl+r`
  ranks the shots by expected candidates left (the sum of n²/N) or by
  information (bits).  Below, the candidates with the shown rays drawn
  (`ctrl+t`: only the cursor's ray), `<` `>` (or `n` `p` on a candidate)
  turn the pages, `o` opens the focused one.  Type a guess (a number or the
  molecule as `O` and `-`) to check it; `/` back to the game input.
- **Molecule** (`m`): one molecule, its statistics and its enantiomers;
  `/` another number, `n` `p` next and previous number, `c` canonical,
  `s` its spectral group.
- **Play** (`P`, shift+p: `p` pauses or turns pages elsewhere): a game
  against a hidden molecule: `n` a random one (its seed shown; type
  `seed N` in the input to replay it), `/` a number or `hard`, `h` a hard
  one.  The arrows and Enter shoot; `a` switches to placing atoms (arrows,
  Enter), `s` submits the guess (5 points a wrong atom; a molecule with the
  hidden spectrum counts as right), `r` reveals it beside the book's
  figures and shots, `c` the coach (heat map and best next shots).
- **Strategy** (`b`, the book): the best-next-shot strategy over every
  molecule as a tree: Enter opens a node (an outcome, its candidates, the
  next shot), or a leaf's molecule or spectral group (`o` too); `ctrl+r`
  the other policy (expected candidates left, or information).

Everywhere (but in an input or on the game board, where letters are
typed; `escape` first): `e` Explore, `g` Groups, `d` Decode, `m` Molecule, `t` Statistics,
`P` Play, `b` the strategy Book.  The footer shows the keys of the screen
and of the focused widget; these and the rest are here and in the command
palette.  `?` this help (in the game input, where `?` is a position not shot:
`F1`), `ctrl+p` the command palette (screens, theme),
`escape` back to the screen before (out of an input first), `ctrl+q` quit
(a running exploration is paused first and resumes where it stopped next
time).  On a board, `x` hides the ray and `#`
shows the position numbers.

Screens do not pile up: going to a screen that is already open (the same
molecule, the same spectral group, a screen's key) goes back to it, as a
browser's history does, so `escape` retraces the way you came: from a
group, `o` a molecule then `s` its group again is one `escape` from the
group's list, however many times it is repeated.
"""


class HelpScreen(Screen):
    """The notation and the keys."""

    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Close", key_display="esc"),
    ]

    def compose(self) -> ComposeResult:
        """The help text."""
        yield Header()
        with VerticalScroll(id="help-body"):
            yield Markdown(HELP)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Scroll with the keys."""
        self.title = "Help"
        self.query_one("#help-body").focus()

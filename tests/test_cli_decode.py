"""``bbcore decode``: text and JSON output, the store or not, and one-line errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from games import EMACS

from bbcore import rays
from bbcore.cli import main
from bbcore.config import Config
from bbcore.numbering import atoms_of, number_of

A3_B4 = Config(3, 4)


def decode(
    capsys, db_path: Path, *args: str, stdin: str | None = None, monkeypatch=None
) -> tuple[int, str, str]:
    """Run ``bbcore --db DB decode ARGS``; (status, stdout, stderr)."""
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    status = main(["--db", str(db_path), "decode", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def decode_json(capsys, db_path: Path, *args: str) -> dict:
    status, out, _ = decode(capsys, db_path, *args, "--json")
    assert status == 0
    return json.loads(out)


def test_the_worked_example_is_solved_without_creating_a_database(capsys, tmp_path):
    status, out, _ = decode(capsys, tmp_path / "none.sqlite", "A2_B4", "@&ab@&@cbac@&@&@")
    assert status == 0
    assert out.startswith(
        "A2_B4: 13 rays shown on 16 positions; computed: A2_B4 is not explored.\n"
        "Unique: one molecule gives this spectrum.\n"
    )
    assert "number 2\n  @ & @ &\n@ O - O - @\n& - - - - c\na - - - - a\nb - - - - b\n  @ & @ c\n" in out
    assert "Atom probabilities" not in out and "Best next shots" not in out
    assert not (tmp_path / "none.sqlite").exists()


def test_the_emacs_diagram_from_stdin_is_solved_and_the_guess_checked(capsys, tmp_path, monkeypatch):
    status, out, _ = decode(
        capsys, tmp_path / "none.sqlite", "A4_B8", "-", stdin=EMACS, monkeypatch=monkeypatch
    )
    assert status == 0
    assert f"number {number_of(Config(4, 8), (17, 28, 30, 63)):,}\n" in out
    assert ("Guess: the guess agrees with every shown ray and is the only molecule that does.") in out


def test_partial_game_prints_boards_heat_map_and_shots(capsys, tmp_path):
    config = Config(2, 4)
    absorbed = [
        k for k in range(1, config.nb_mol + 1) if rays.trace(4, atoms_of(config, k), 1).result == "absorbed"
    ]
    status, out, _ = decode(capsys, tmp_path / "none.sqlite", "A2_B4", "@", *"." * 15, "--limit", "2")
    assert status == 0
    assert "A2_B4: 1 ray shown on 1 position; computed: A2_B4 is not explored." in out
    assert f"{len(absorbed)} molecules agree with these rays." in out
    assert out.count("number ") == 2
    assert f"number {absorbed[0]:,}" in out and f"number {absorbed[1]:,}" in out
    assert f"... and {len(absorbed) - 2} more (--limit N to show more" in out
    heat = out.split("(O: an atom in every one, -: in none):\n")[1].split("\n\n")[0]
    assert heat.splitlines()[0] == ""  # no label above the box
    assert heat.splitlines()[1].split()[0] == "@" and len(heat.splitlines()[1].split()) == 5
    assert "Best next shots, by expected candidates left:" in out
    assert " pos        left    bits  results" in out


def test_heat_map_and_shots_by_hand_on_a1_b2(capsys, tmp_path):
    """A1_B2 with a hit at position 1: the atom is at (1,1) or (1,2) (see test_decode)."""
    status, out, _ = decode(capsys, tmp_path / "none.sqlite", "A1_B2", "H.......")
    assert status == 0
    assert "2 molecules agree with these rays." in out
    assert (
        "Atom probabilities, % of the 2 candidates (O: an atom in every one, -: in none):\n"
        "\n H 50 50\n    -  -\n" in out
    )
    shots = out.split("results\n")[1].splitlines()
    assert shots[0].split() == ["2", "1.00", "1.000", "2:", "R", "1,", "->3", "1"]
    assert len(shots) == 5 and [line.split()[0] for line in shots] == ["2", "3", "4", "5", "7"]


def test_json_by_hand_on_a1_b2(capsys, tmp_path):
    report = decode_json(capsys, tmp_path / "none.sqlite", "A1_B2", "H.......", "--by", "information")
    assert report["config"] == "A1_B2" and report["game"] == "@......."
    assert report["count"] == 2 and report["source"] == "computed"
    assert report["molecules"] == [{"number": 1, "molecule": "O---"}, {"number": 2, "molecule": "-O--"}]
    assert report["probabilities"] == [[0.5, 0.5], [0.0, 0.0]]
    assert report["atom_counts"] == [[1, 1], [0, 0]]
    assert [s["position"] for s in report["next_shots"]] == [2, 3, 4, 5, 7, 8, 6]
    first = report["next_shots"][0]
    assert first["remaining"] == 1.0 and first["information"] == 1.0
    assert first["outcomes"] == [
        {"result": "reflected", "count": 1},
        {"result": "out", "exit": 3, "count": 1},
    ]
    assert report["next_shots"][-1]["outcomes"] == [{"result": "absorbed", "count": 2}]
    assert report["ambiguous"] is False and report["guess"] is None


def test_no_ray_shown_says_every_molecule(capsys, tmp_path, a4_b8_first_shot):
    status, out, _ = decode(capsys, tmp_path / "none.sqlite", "A4_B8")
    assert status == 0
    assert out.startswith("No ray shot: every molecule of A4_B8 (635,376) agrees; they are not listed.\n")
    assert "number " not in out
    assert out.count("  6 6 6 6 6 6 6 6\n") == 8  # 4/64 everywhere
    # The first shot is ranked over every molecule: position 2 and its 7 images
    # by the symmetries of the square (one cell in from a corner) are the best.
    shots = out.split("results\n")[1].splitlines()
    remaining, information = a4_b8_first_shot
    assert shots[0].split()[:3] == ["2", f"{remaining:,.2f}", f"{information:.3f}"]
    report = decode_json(capsys, tmp_path / "none.sqlite", "A4_B8")
    assert report["every_molecule"] and report["count"] == 635_376 and report["molecules"] == []
    assert report["probabilities"][0][0] == 4 / 64 and report["next_shots_skipped"] is None
    best = report["next_shots"][:8]
    assert sorted(s["position"] for s in best) == [2, 7, 10, 15, 18, 23, 26, 31]
    assert len({s["remaining"] for s in best}) == 1
    assert sum(o["count"] for o in best[0]["outcomes"]) == 635_376


def test_too_many_candidates_to_rank_next_shots_says_so(capsys, tmp_path):
    status, out, _ = decode(capsys, tmp_path / "none.sqlite", "A5_B10")
    assert status == 0
    assert (
        "next shots not ranked: 75,287,520 candidates x 40 positions is too many rays "
        "to trace; shoot a ray or two first." in out
    )
    assert "Best next shots" not in out


def test_an_ambiguous_full_spectrum_names_the_atoms_in_doubt(capsys, tmp_path):
    spectrum, group = next((s, g) for s, g in _groups(A3_B4).items() if len(g) == 2)
    status, out, _ = decode(capsys, tmp_path / "none.sqlite", "A3_B4", spectrum)
    assert status == 0
    assert "Ambiguous: 2 molecules give this spectrum." in out
    assert "No ray left can tell these 2 molecules apart: the game is ambiguous. Atoms in doubt: (" in out
    report = decode_json(capsys, tmp_path / "none.sqlite", "A3_B4", spectrum)
    assert report["ambiguous"] and [m["number"] for m in report["molecules"]] == group
    first, second = (set(atoms_of(A3_B4, k)) for k in group)
    assert len(report["doubtful_cells"]) == len(first ^ second)


def _groups(config: Config) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for k in range(1, config.nb_mol + 1):
        groups.setdefault(rays.spectrum(config, atoms_of(config, k)), []).append(k)
    return groups


def test_the_store_answers_a_full_spectrum_and_partial_games_are_computed(capsys, explored, tmp_path):
    spectrum = rays.spectrum(A3_B4, atoms_of(A3_B4, 100))
    stored = decode_json(capsys, explored, "A3_B4", spectrum)
    computed = decode_json(capsys, tmp_path / "none.sqlite", "A3_B4", spectrum)
    assert stored["source"] == "store" and computed["source"] == "computed"
    assert stored["molecules"] == computed["molecules"] and stored["count"] >= 1
    status, out, _ = decode(capsys, explored, "A3_B4", spectrum)
    assert "; read from the explored A3_B4." in out
    kept = (
        {1, 6, 11}
        | {spectrum.index(spectrum[p - 1]) + 1 for p in (1, 6, 11)}
        | {spectrum.rindex(spectrum[p - 1]) + 1 for p in (1, 6, 11)}
    )
    game = "".join(ch if p in kept else "." for p, ch in enumerate(spectrum, 1))
    partial = decode_json(capsys, explored, "A3_B4", game)
    assert partial["source"] == "computed" and partial["count"] > 1
    status, out, _ = decode(capsys, explored, "A3_B4", game)
    assert "; computed: quicker than scanning the store for a partial game." in out
    unexplored = decode_json(capsys, explored, "A3_B5", "@" + "." * 19)
    assert unexplored["source"] == "computed"


def test_guess_by_number_contradiction_and_not_proved(capsys, tmp_path):
    status, out, _ = decode(capsys, tmp_path / "none.sqlite", "A2_B4", "@&ab@&@cbac@&@&@", "--guess", "1")
    assert (
        "Guess: the guess contradicts position 6: the game shows reflected (R), the guess "
        "gives absorbed (H)." in out
    )
    report = decode_json(
        capsys, tmp_path / "none.sqlite", "A2_B4", "@" + "." * 15, "--guess", "O-O-------------"
    )
    assert report["guess"]["consistent"] and report["guess"]["contradiction"] is None
    assert report["guess"]["others"] == report["count"] - 1


def test_options_may_come_before_the_game(capsys, tmp_path):
    after = decode(capsys, tmp_path / "none.sqlite", "A2_B4", "@&ab@&@cbac@&@&@", "--guess", "1")
    before = decode(capsys, tmp_path / "none.sqlite", "A2_B4", "--guess", "1", "@&ab@&@cbac@&@&@")
    assert before == after and before[0] == 0 and "contradicts position 6" in before[1]
    with pytest.raises(SystemExit) as exit_:
        decode(capsys, tmp_path / "none.sqlite", "A2_B4", "--json", "@&ab", "--nope")
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and "unrecognized arguments: --nope" in err


def test_a_diagram_with_too_few_atoms_is_decoded_and_the_guess_left_unchecked(capsys, tmp_path, monkeypatch):
    partly = EMACS.replace("- O - - - - - - 3", "- - - - - - - - 3")
    status, out, _ = decode(
        capsys, tmp_path / "none.sqlite", "A4_B8", "-", stdin=partly, monkeypatch=monkeypatch
    )
    assert status == 0
    assert "guess not checked: the diagram has 3 atoms, A4_B8 has 4." in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["A2_B4", "@&ab"], "bbcore: error: wrong number of positions: A2_B4 has 16 positions"),
        (["A2_B4", "@&ab@&@cbac@&@&d"], "bbcore: error: label 'd' appears only once (position 16)"),
        (["A2_B4", "--guess", "121"], "bbcore: error: bad guess '121': A2_B4 has molecules 1..120"),
    ],
)
def test_user_errors_are_one_line(capsys, tmp_path, args, message):
    status, out, err = decode(capsys, tmp_path / "none.sqlite", *args)
    assert status == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1


def test_a_file_that_is_not_a_database_is_an_error_and_left_alone(capsys, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n")
    status, _, err = decode(capsys, path, "A2_B4", "@" + "." * 15)
    assert status == 2 and "is not a bbtui database" in err and err.count("\n") == 1
    assert path.read_text() == "not a database\n"

"""What the outside trials of issue #33 hit on the command line (its section 3), each run as
the user ran it: the real ``bbcore`` (and ``bbtui``) in a fresh process."""

from __future__ import annotations

from pathlib import Path

import pytest
from expect import bbcore, one_line_error

from bbcore.cli import browse
from bbcore.cli import main as bbcore_main
from bbcore.config import parse_config
from bbcore.queries import group_at, group_count
from bbcore.store import open_database
from bbtui.app import main as bbtui_main

A5_B5 = parse_config("A5_B5")


def test_decode_with_no_arguments_asks_only_for_the_configuration(tmp_path: Path) -> None:
    result = bbcore("--db", str(tmp_path / "none.sqlite"), "decode")
    assert result.stderr == (
        "bbcore decode: error: the following arguments are required: CONFIG (see 'bbcore decode --help')\n"
    )
    one_line_error(result.returncode, result.stderr)
    assert result.returncode == 2
    result = bbcore("--db", str(tmp_path / "none.sqlite"), "decode", "A2_B4")  # no game: no ray shot
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No ray shot: every molecule of A2_B4 (120) agrees")


def test_a_molecule_past_the_last_is_refused_as_the_command_refuses_its_arguments(tmp_path: Path) -> None:
    result = bbcore("--db", str(tmp_path / "none.sqlite"), "show", "A4_B6", "58906")
    assert result.returncode == 2
    assert result.stderr == (
        "bbcore show: error: A4_B6 has molecules 1..58,905, not 58,906 (see 'bbcore show --help')\n"
    )
    assert not (tmp_path / "none.sqlite").exists()


@pytest.mark.parametrize("where", ["before", "after"])
def test_an_empty_db_is_refused_as_empty(tmp_path: Path, where: str) -> None:
    argv = ["--db", "", "status"] if where == "before" else ["status", "--db", ""]
    result = bbcore(*argv)
    one_line_error(result.returncode, result.stderr, "argument --db: empty")
    assert result.returncode == 2 and "directory" not in result.stderr


def test_bbtui_refuses_an_empty_db(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        bbtui_main(["--db", ""])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "bbtui: error: argument --db: empty: name a database file or a postgresql:// URL"
    )


def test_groups_numbers_have_their_commas_as_in_the_tui(a5_b5: Path) -> None:
    result = bbcore("--db", str(a5_b5), "groups", "A5_B5", "--all")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "A5_B5: 5,055 spectral groups"
    open_database(a5_b5)
    rows = lines[3:]
    assert len(rows) == 5055
    last = group_at(A5_B5, 5054, all_rows=True)
    assert last.canonical_number > 999
    assert rows[-1].split()[:2] == [str(last.nb_mol), f"#{last.canonical_number:,}"]


@pytest.mark.parametrize("rows", ["families", "all"])
def test_groups_pages_shrunk_list_every_group_once(
    a5_b5: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], rows: str
) -> None:
    """``bbcore groups`` reads 500 groups at a time: with pages of 7, the 672 families fill 96
    pages exactly (the next one is empty) and the 5,055 groups 722 and one more row; the list
    is the same as in pages of 500, each group once."""
    argv = ["--db", str(a5_b5), "groups", "A5_B5", *(["--all"] if rows == "all" else [])]
    assert bbcore_main(argv) == 0
    whole = capsys.readouterr().out.splitlines()
    monkeypatch.setattr(browse, "GROUPS_PAGE", 7)
    assert bbcore_main(argv) == 0
    paged = capsys.readouterr().out.splitlines()
    assert paged == whole
    open_database(a5_b5)
    count = group_count(A5_B5, all_rows=rows == "all", size=None)
    assert count % 7 == (0 if rows == "families" else 1)
    assert len(paged[3:]) == count and len(set(paged[3:])) == count

"""Run a command as a user who cannot write, even when the test suite runs as root.

Root ignores file permissions, so a read-only file proves nothing to root.
``run_unprivileged`` runs a command in a subprocess that drops to the
unprivileged ``nobody`` (uid and gid 65534) before ``exec``.  Where the
interpreter itself lives somewhere ``nobody`` cannot read (a root-only
``pyenv`` under ``/root``), the subprocess keeps one capability,
CAP_DAC_READ_SEARCH: it may read and list any file, as a user of an
installed Python can, and still write nothing it has no permission for.
As any other user, the command runs as that user, after ``chmod`` has
taken write permission away.  Nothing is skipped: a machine where the
drop cannot be done fails the test with the reason.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
from collections.abc import Sequence

NOBODY = 65534
CAP_DAC_READ_SEARCH = 2
PR_SET_KEEPCAPS = 8
PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE = 47, 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _drop_to_nobody() -> None:
    """In the child, before exec: become nobody, keeping only CAP_DAC_READ_SEARCH."""
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result: int, what: str) -> None:
        if result != 0:
            raise OSError(ctypes.get_errno(), f"{what} failed")

    check(libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), "prctl(PR_SET_KEEPCAPS)")
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    bit = 1 << CAP_DAC_READ_SEARCH
    data[0].effective = data[0].permitted = data[0].inheritable = bit
    check(libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")
    check(
        libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_DAC_READ_SEARCH, 0, 0), "prctl(PR_CAP_AMBIENT)"
    )


def make_unwritable(*paths: os.PathLike | str) -> None:
    """Take write permission away from files and folders (folders keep r-x)."""
    for path in paths:
        os.chmod(path, 0o555 if os.path.isdir(path) else 0o444)


def give_to_nobody(path: os.PathLike | str) -> None:
    """Let the unprivileged user write ``path`` (a home folder for the command), when root."""
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)


def run_unprivileged(
    argv: Sequence[str], *, env: dict[str, str], input: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run ``argv`` as a user who cannot write what ``make_unwritable`` protected."""
    as_root = os.geteuid() == 0
    result = subprocess.run(
        list(argv),
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_drop_to_nobody if as_root else None,
    )
    return result


def who_am_i(env: dict[str, str]) -> str:
    """The uid the commands run as, and whether it can write a root-owned folder (for assertions)."""
    probe = "import os; print(os.geteuid(), os.access('/', os.W_OK))"
    return run_unprivileged([env.get("PYTHON", "python3"), "-c", probe], env=env).stdout.strip()

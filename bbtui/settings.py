"""What bbtui remembers between launches, in ``$XDG_CONFIG_HOME/bbtui/settings.json``
(``~/.config/bbtui/settings.json`` when unset).

- ``theme``: the theme last chosen (command palette, "Change theme");
- ``resume``: the exploration under way when the app was quit, by database
  file (``{"/path/to/blackbox.sqlite": "A4_B8"}``): the next launch on the
  same file resumes it.  A run paused with ``p``, finished, or failing is
  not in it.

The file is small JSON, written to a temporary name and renamed.  A file
that cannot be read is taken as empty, and one that cannot be written is
left alone: settings are a convenience, never a reason to fail.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def settings_path() -> Path:
    """The settings file (it may not exist)."""
    config_home = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config_home) / "bbtui" / "settings.json"


def load_settings() -> dict[str, Any]:
    """The settings saved, or ``{}`` (no file, or a file that is not a JSON object)."""
    try:
        data = json.loads(settings_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_settings(**changes: Any) -> bool:
    """Merge ``changes`` into the saved settings (a value of None removes its key);
    False when the file cannot be written."""
    settings = load_settings()
    for key, value in changes.items():
        if value is None:
            settings.pop(key, None)
        else:
            settings[key] = value
    path = settings_path()
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)
        return False
    return True


def resume_target(db_path: Path) -> str | None:
    """The configuration to resume on ``db_path`` at launch, if the app was quit during its run."""
    resume = load_settings().get("resume")
    if not isinstance(resume, dict):
        return None
    name = resume.get(str(db_path))
    return name if isinstance(name, str) else None


def set_resume(db_path: Path, config: str | None) -> None:
    """Remember (or forget, with None) the run to resume on ``db_path`` at the next launch."""
    resume = load_settings().get("resume")
    resume = dict(resume) if isinstance(resume, dict) else {}
    if config is None:
        if str(db_path) not in resume:
            return
        resume.pop(str(db_path))
    else:
        resume[str(db_path)] = config
    save_settings(resume=resume or None)

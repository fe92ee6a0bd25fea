# SPDX-License-Identifier: MIT
"""docs/settings.md must match the settings tables behind the parsers (src/common,
src/malloc and src/shmem settings.def)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_settings_doc_is_current() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen-settings-doc"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_every_setting_is_documented() -> None:
    text = (ROOT / "docs" / "settings.md").read_text()
    for lib in ("common", "malloc", "shmem"):
        for line in (ROOT / "src" / lib / "settings.def").read_text().splitlines():
            if line.startswith("X("):
                env = line.split(",")[1].strip()
                assert f"`{env}`" in text, env

# SPDX-License-Identifier: MIT
"""docs/settings.md must match src/common/settings.def, the table behind the parser."""
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
    for line in (ROOT / "src" / "common" / "settings.def").read_text().splitlines():
        if line.startswith("X("):
            env = line.split(",")[1].strip()
            assert f"`{env}`" in text, env

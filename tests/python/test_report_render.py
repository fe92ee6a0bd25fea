# SPDX-License-Identifier: MIT
"""The report renders in a real browser: headless Chromium loads every inline
figure of a report built from canned data, and a screenshot of the page is not
blank.

Chromium is a test dependency (`scripts/install-deps --test` installs Debian's
`chromium`); when it is missing these tests fail, they do not skip. Chromium
never touches the network: the page is a local, self-contained file:// URL and
every host name resolves to nothing. `make report-check` runs just this file.
"""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from hpsync import report
from test_characterize import run_of, write_run

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60                                  # seconds, per chromium call
WIDTH, HEIGHT = 1280, 4000                    # screenshot window
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars",
         "--force-device-scale-factor=1"]
IMG_RE = re.compile(r"<img [^>]*src='data:image/png;base64,([A-Za-z0-9+/=]+)'")

# After load, count the images and those the browser decoded, and leave the
# counts (and each decoded size) on an element that --dump-dom prints.
PROBE_JS = """<script>
window.addEventListener('load', function () {
  var im = Array.prototype.slice.call(document.images);
  var ok = im.filter(function (i) { return i.complete && i.naturalWidth > 0; });
  var d = document.createElement('div');
  d.id = 'render-check';
  d.setAttribute('data-total', im.length);
  d.setAttribute('data-loaded', ok.length);
  d.setAttribute('data-sizes', im.map(function (i) {
    return i.naturalWidth + 'x' + i.naturalHeight; }).join(' '));
  document.body.appendChild(d);
});
</script>"""
CHECK_RE = re.compile(r'<div id="render-check" data-total="(\d+)" data-loaded="(\d+)" '
                      r'data-sizes="([^"]*)"')


def chromium() -> str:
    exe = os.environ.get("HPSYNC_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser")
    if not exe:
        pytest.fail("chromium not found: the report render test needs headless Chromium; "
                    "run `scripts/install-deps --test` (Debian package 'chromium')", pytrace=False)
    return exe


def run_chromium(tmp: Path, *args: str) -> str:
    """One headless chromium call with a fresh profile and a hard timeout;
    returns stdout. The whole process group dies on timeout."""
    profile = Path(tempfile.mkdtemp(prefix="chromium-profile-", dir=tmp))
    env = dict(os.environ, HOME=str(profile), XDG_CONFIG_HOME=str(profile / "config"),
               XDG_CACHE_HOME=str(profile / "cache"))
    env.pop("http_proxy", None)
    env.pop("https_proxy", None)
    cmd = [chromium(), *FLAGS, f"--user-data-dir={profile}", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"chromium did not finish within {TIMEOUT} s: {' '.join(cmd)}")
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert proc.returncode == 0, f"chromium exited {proc.returncode}:\n{err[-3000:]}"
    return out


@pytest.fixture(scope="module")
def built_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`./hpsync report` of canned machine A: the page, its path, and the
    number of figures the report says it drew."""
    try:
        import matplotlib  # noqa: F401  (draws the report; decodes the screenshot)
    except ImportError:
        pytest.fail("matplotlib missing: run `scripts/install-deps --test`", pytrace=False)
    tmp = tmp_path_factory.mktemp("report-render")
    run = run_of("a")
    src = write_run(tmp, "a.json", run)
    page = tmp / "report.html"
    r = subprocess.run(["./hpsync", "report", str(src), "-o", str(page)], cwd=REPO,
                       capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert r.returncode == 0, r.stderr
    said = re.search(r"report of .*: (\d+) figures", r.stdout + r.stderr)
    assert said, f"report did not say how many figures it drew:\n{r.stdout}{r.stderr}"
    figures = int(said.group(1))
    assert figures == len(report.figure_plan(run)) == 17
    html = page.read_text()
    assert len(IMG_RE.findall(html)) == html.count("<img ") == figures   # all inline PNG
    return {"tmp": tmp, "page": page, "html": html, "figures": figures}


def render_check(tmp: Path, html: str, name: str) -> tuple[int, int, list[str]]:
    """Load `html` (with the probe script added) and return (total, loaded, sizes)."""
    path = tmp / name
    path.write_text(html.replace("</body>", PROBE_JS + "</body>", 1))
    dom = run_chromium(tmp, "--virtual-time-budget=5000", "--dump-dom", path.as_uri())
    m = CHECK_RE.search(dom)
    assert m, f"the probe script did not run (no #render-check in the dumped DOM of {path})"
    return int(m.group(1)), int(m.group(2)), m.group(3).split()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    w, h = struct.unpack(">II", data[16:24])
    return w, h


def test_every_figure_renders(built_report: dict[str, Any]) -> None:
    import matplotlib.image as mpimg
    tmp, html, figures = built_report["tmp"], built_report["html"], built_report["figures"]
    total, loaded, sizes = render_check(tmp, html, "check.html")
    assert total == figures, f"browser sees {total} images, the report drew {figures}"
    assert loaded == total, f"only {loaded} of {total} figures rendered"
    # The browser decoded each figure at the size of its PNG, and each PNG
    # decodes completely (the browser shows truncated or damaged image data
    # partially, so that is checked here).
    for i, (b64, seen) in enumerate(zip(IMG_RE.findall(html), sizes)):
        data = base64.b64decode(b64, validate=True)
        w, h = png_size(data)
        assert seen == f"{w}x{h}", f"figure {i}: browser {seen}, PNG {w}x{h}"
        pixels = mpimg.imread(io.BytesIO(data), format="png")
        assert pixels.shape[:2] == (h, w), f"figure {i} does not decode completely"
    # The check itself notices a broken figure: damage one image's header.
    first = html.index("base64,") + len("base64,")
    broken = html[:first] + "AAAAAAAA" + html[first + 8:]
    total_b, loaded_b, _ = render_check(tmp, broken, "broken.html")
    assert (total_b, loaded_b) == (figures, figures - 1), "a broken image went unnoticed"


def test_screenshot_not_blank(built_report: dict[str, Any]) -> None:
    import matplotlib.image as mpimg
    import numpy as np
    tmp, page = built_report["tmp"], built_report["page"]
    shot = tmp / "report.png"
    run_chromium(tmp, f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}",
                 "--virtual-time-budget=5000", page.as_uri())
    print(f"report screenshot: {shot}")
    assert shot.is_file() and shot.stat().st_size > 0, f"no screenshot at {shot}"
    assert png_size(shot.read_bytes()) == (WIDTH, HEIGHT)
    rgb = (mpimg.imread(str(shot))[..., :3] * 255).round().astype(np.int32).reshape(-1, 3)
    colours = len(np.unique(rgb[:, 0] * 65536 + rgb[:, 1] * 256 + rgb[:, 2]))
    ink = float((rgb.min(axis=1) < 250).mean())
    assert colours > 100, f"screenshot {shot} looks blank: {colours} distinct colours"
    assert ink > 0.02, f"screenshot {shot} looks blank: {ink:.1%} non-white pixels"
    # The first figure (timer CDF + histogram) is on screen: matplotlib's
    # default blue (C0, #1f77b4) lines are painted.
    c0 = int((np.abs(rgb - (0x1F, 0x77, 0xB4)).max(axis=1) <= 8).sum())
    assert c0 > 100, f"no plot visible in screenshot {shot} ({c0} C0-blue pixels)"

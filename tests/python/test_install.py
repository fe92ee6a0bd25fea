# SPDX-License-Identifier: MIT
"""`make install PREFIX=...` gives a usable tree: headers + pkg-config for C (the STAMP
header included), the CLI."""
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROGRAM = r"""
#include <hpsync/lock.h>
#include <stdio.h>
int main(void)
{
    hps_lock_t l;
    if (hps_lock_init(&l, HPS_LOCK_MCS) != 0)
        return 1;
    hps_lock_lock(&l);
    int busy = hps_lock_trylock(&l);
    hps_lock_unlock(&l);
    printf("%d %d\n", busy == EBUSY, hps_lock_trylock(&l) == 0);
    return 0;
}
"""


def test_installed_tree_works(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(REPO / "build"), "--prefix", str(prefix)],
                   check=True, capture_output=True)
    subprocess.run([str(REPO / "scripts" / "install-cli"), str(prefix)], check=True,
                   capture_output=True, cwd=REPO)
    pcdirs = list(prefix.glob("lib*/**/pkgconfig"))
    assert pcdirs, "no pkgconfig directory installed"
    env = dict(os.environ, PKG_CONFIG_PATH=str(pcdirs[0]))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "hpsync"], env=env,
                           check=True, capture_output=True, text=True).stdout.split()
    src = tmp_path / "use.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "use"
    libdir = next(f[2:] for f in flags if f.startswith("-L"))
    subprocess.run(["cc", str(src), "-o", str(exe), *flags, f"-Wl,-rpath,{libdir}"],
                   check=True, capture_output=True)
    assert subprocess.run([str(exe)], check=True, capture_output=True,
                          text=True).stdout == "1 1\n"
    # The STAMP header is installed, and a STAMP-style program builds against
    # the installed tree as a STAMP application would: its "tm.h" is ours.
    stamp = tmp_path / "stamp_app"
    subprocess.run(["cc", str(REPO / "tests" / "c" / "tm" / "stamp_app.c"), "-o", str(stamp),
                    f"-I{prefix}/include/hpsync/stamp", *flags, "-pthread",
                    f"-Wl,-rpath,{libdir}"], check=True, capture_output=True)
    r = subprocess.run([str(stamp), "4", "500"], env=dict(os.environ, HPSYNC_TM="norec"),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "norec, 4 threads x 500 items: every check passed" in r.stdout
    # The installed CLI runs a program on the installed interposer.
    r = subprocess.run([str(prefix / "bin" / "hpsync"), "run", "--lock", "ticket", "--stats",
                        "--", "python3", "-c", "import threading; print('ok')"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "ok\n"
    assert "lock ticket" in r.stderr

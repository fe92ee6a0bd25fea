# SPDX-License-Identifier: MIT
"""Building OpenSHMEM programs against libhpsync-shmem: build/bin/oshcc and oshc++
from the build tree, the installed wrappers and pkg-config file, and the same
install moved elsewhere (the wrappers and the .pc file find their prefix from
where they are).  Each program runs as a singleton (no launcher) and, when
build/bin/oshrun exists, as 2 PEs; the library exports the OpenSHMEM API only."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("HPSYNC_BUILD", REPO / "build"))
OSHRUN = BUILD / "bin" / "oshrun"

C_PROGRAM = r"""
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
static long counter;
int main(void)
{
    shmem_init();
    shmem_long_atomic_add(&counter, 1, 0);
    int *x = shmem_malloc(sizeof *x);
    *x = 0;
    shmem_barrier_all();
    shmem_p(x, 42, (shmem_my_pe() + 1) % shmem_n_pes());    /* C11 generic */
    shmem_barrier_all();
    if (shmem_my_pe() == 0)
        printf("%ld %d\n", counter, *x);
    shmem_free(x);
    shmem_finalize();
    return 0;
}
"""

CXX_PROGRAM = r"""
#include <shmem.h>
#include <cstdio>
#include <vector>
int main()
{
    shmem_init();
    std::vector<int> v(4, shmem_my_pe());
    int *x = static_cast<int *>(shmem_malloc(4 * sizeof(int)));
    shmem_int_put(x, v.data(), 4, shmem_my_pe());
    shmem_quiet();
    if (shmem_my_pe() == 0)
        std::printf("%d\n", x[3] + shmem_n_pes());
    shmem_free(x);
    shmem_finalize();
    return 0;
}
"""


def clean_env() -> dict[str, str]:
    """No inherited job: a plain run is a singleton."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("HPSYNC_SHMEM_", "PMIX_", "OMPI_"))}


# Every peer through libfabric: the library must find its transport module
# (libhpsync-shmem-ofi.so, loaded at run time) beside itself.
OFI_ENV = {"HPSYNC_SHMEM_TRANSPORT": "ofi", "HPSYNC_SHMEM_PROVIDER": "shm"}


def build_and_run(cmd: list[str], exe: Path, expect: str, env: dict[str, str],
                  ofi: bool = False) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    for extra in ({}, OFI_ENV) if ofi else ({},):
        r = subprocess.run([str(exe)], capture_output=True, text=True, env={**env, **extra},
                           timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout == expect


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("src")
    (d / "prog.c").write_text(C_PROGRAM)
    (d / "prog.cpp").write_text(CXX_PROGRAM)
    return d / "prog.c", d / "prog.cpp"


def test_build_tree_wrappers(sources: tuple[Path, Path], tmp_path: Path) -> None:
    c, cxx = sources
    env = clean_env()
    build_and_run([str(BUILD / "bin" / "oshcc"), "-O2", str(c), "-o", str(tmp_path / "c")],
                  tmp_path / "c", "1 42\n", env)
    build_and_run([str(BUILD / "bin" / "oshc++"), "-O2", str(cxx), "-o", str(tmp_path / "x")],
                  tmp_path / "x", "1\n", env)
    # Compile only, then link: no link flags while compiling.
    r = subprocess.run([str(BUILD / "bin" / "oshcc"), "-c", str(c), "-o", str(tmp_path / "c.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    build_and_run([str(BUILD / "bin" / "oshcc"), str(tmp_path / "c.o"), "-o", str(tmp_path / "c2")],
                  tmp_path / "c2", "1 42\n", env)
    if OSHRUN.is_file():
        r = subprocess.run([str(OSHRUN), "-np", "2", str(tmp_path / "c")], capture_output=True,
                           text=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "2 42\n"
    shown = subprocess.run([str(BUILD / "bin" / "oshcc"), "-showme", "x.c"], capture_output=True,
                           text=True, check=True).stdout
    assert "-lhpsync-shmem" in shown and "x.c" in shown and "-showme" not in shown


def test_only_the_api_is_exported() -> None:
    out = subprocess.run(["nm", "-D", "--defined-only", str(BUILD / "lib" / "libhpsync-shmem.so")],
                         capture_output=True, text=True, check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    allowed = ("shmem_", "shmemx_", "hps_shmem_ctx_default", "hps_shmem_team_",
               "start_pes", "_my_pe", "_num_pes", "shmalloc", "shfree", "shmemalign", "shrealloc")
    stray = [n for n in names if not n.startswith(allowed)]
    assert not stray, stray
    assert "shmem_int_p" in names and "shmem_ctx_double_atomic_swap_nbi" in names
    # The libfabric transport is a module with one entry point, and only it
    # links libfabric (loading libfabric costs ~0.2 s before main).
    module = BUILD / "lib" / "libhpsync-shmem-ofi.so"
    out = subprocess.run(["nm", "-D", "--defined-only", str(module)], capture_output=True,
                         text=True, check=True).stdout
    assert [line.split()[-1] for line in out.splitlines() if line.strip()] == ["hps_shmem_ofi_module"]
    for lib, links in ((BUILD / "lib" / "libhpsync-shmem.so", False), (module, True)):
        needed = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True,
                                check=True).stdout
        assert ("libfabric" in needed) == links, (lib, needed)


def test_installed_and_moved(sources: tuple[Path, Path], tmp_path: Path) -> None:
    c, cxx = sources
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], check=True,
                   capture_output=True)
    env = clean_env()
    for where in ("installed", "moved"):
        if where == "moved":
            moved = tmp_path / "elsewhere"
            shutil.move(str(prefix), str(moved))
            prefix = moved
        build_and_run([str(prefix / "bin" / "oshcc"), str(c), "-o", str(tmp_path / f"c-{where}")],
                      tmp_path / f"c-{where}", "1 42\n", env, ofi=True)
        build_and_run([str(prefix / "bin" / "oshc++"), str(cxx), "-o", str(tmp_path / f"x-{where}")],
                      tmp_path / f"x-{where}", "1\n", env)
        pcdir = next(prefix.glob("lib*/pkgconfig"))
        pcenv = dict(env, PKG_CONFIG_PATH=str(pcdir))
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "hpsync-shmem"], env=pcenv,
                               check=True, capture_output=True, text=True).stdout.split()
        assert any(f.startswith("-I" + str(prefix)) for f in flags), flags
        libdir = next(f[2:] for f in flags if f.startswith("-L"))
        exe = tmp_path / f"pc-{where}"
        build_and_run(["cc", str(c), "-o", str(exe), *flags, f"-Wl,-rpath,{libdir}"], exe,
                      "1 42\n", env, ofi=True)

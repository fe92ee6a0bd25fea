# SPDX-License-Identifier: MIT
"""Building OpenSHMEM programs against libhpsync-shmem: build/bin/oshcc and oshc++
from the build tree, the installed wrappers and pkg-config file, and the same
install moved elsewhere (the wrappers and the .pc file find their prefix from
where they are).  Each program runs as a singleton (no launcher) and, when
build/bin/oshrun exists, as 2 PEs; the library exports the OpenSHMEM API and
its profiling twins only.  Among the programs, a profiling tool in C and one
in C++ (pshmem.h, installed beside shmem.h): each replaces a routine, counts
its calls and forwards them to the pshmem_ twin."""

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


# A tool in the program: the C11 generic shmem_atomic_add selects
# shmem_long_atomic_add, which the tool sees like a direct call.
PROF_PROGRAM = r"""
#include <pshmem.h>
#include <stdio.h>
static long counter, seen;
void shmem_long_atomic_add(long *dest, long value, int pe)
{
    seen++;
    pshmem_long_atomic_add(dest, value, pe);
}
int main(void)
{
    shmem_init();
    shmem_long_atomic_add(&counter, 1, 0);
    shmem_atomic_add(&counter, 2L, 0);
    shmem_barrier_all();
    if (shmem_my_pe() == 0)
        printf("%ld %ld\n", seen, counter);
    shmem_finalize();
    return 0;
}
"""

CXX_PROF_PROGRAM = r"""
#include <pshmem.h>
#include <cstdio>
static long seen, target;
extern "C" void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    seen++;
    pshmem_putmem(dest, source, nelems, pe);
}
int main()
{
    shmem_init();
    long v = 5;
    shmem_putmem(&target, &v, sizeof v, shmem_my_pe());
    shmem_quiet();
    if (shmem_my_pe() == 0)
        std::printf("%ld %ld\n", seen, target);
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


def write_pair(factory: pytest.TempPathFactory, stem: str, c: str, cxx: str) -> tuple[Path, Path]:
    d = factory.mktemp(stem)
    (d / f"{stem}.c").write_text(c)
    (d / f"{stem}.cpp").write_text(cxx)
    return d / f"{stem}.c", d / f"{stem}.cpp"


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_pair(tmp_path_factory, "prog", C_PROGRAM, CXX_PROGRAM)


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_pair(tmp_path_factory, "prof", PROF_PROGRAM, CXX_PROF_PROGRAM)


def test_build_tree_wrappers(sources: tuple[Path, Path], tools: tuple[Path, Path],
                             tmp_path: Path) -> None:
    c, cxx = sources
    env = clean_env()
    build_and_run([str(BUILD / "bin" / "oshcc"), str(tools[0]), "-o", str(tmp_path / "p")],
                  tmp_path / "p", "2 3\n", env)
    build_and_run([str(BUILD / "bin" / "oshc++"), str(tools[1]), "-o", str(tmp_path / "px")],
                  tmp_path / "px", "1 5\n", env)
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
        # Each PE's tool counts its own 2 calls; PE 0 got both PEs' adds.
        r = subprocess.run([str(OSHRUN), "-np", "2", str(tmp_path / "p")], capture_output=True,
                           text=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "2 6\n"
    shown = subprocess.run([str(BUILD / "bin" / "oshcc"), "-showme", "x.c"], capture_output=True,
                           text=True, check=True).stdout
    assert "-lhpsync-shmem" in shown and "x.c" in shown and "-showme" not in shown


def test_only_the_api_is_exported() -> None:
    out = subprocess.run(["nm", "-D", "--defined-only", str(BUILD / "lib" / "libhpsync-shmem.so")],
                         capture_output=True, text=True, check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    api = ("shmem_", "start_pes", "_my_pe", "_num_pes", "shmalloc", "shfree", "shmemalign",
           "shrealloc")
    allowed = api + ("shmemx_", "hps_shmem_ctx_default", "hps_shmem_team_")
    # The profiling interface's twins: "p" + the routine's name.
    stray = [n for n in names if not n.startswith(allowed)
             and not (n.startswith("p") and n[1:].startswith(api) and n[1:] in names)]
    assert not stray, stray
    for n in ("shmem_int_p", "shmem_ctx_double_atomic_swap_nbi", "pshmem_int_p", "p_my_pe",
              "pshmalloc"):
        assert n in names, n
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


def test_installed_and_moved(sources: tuple[Path, Path], tools: tuple[Path, Path],
                             tmp_path: Path) -> None:
    c, cxx = sources
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], check=True,
                   capture_output=True)
    # pshmem.h beside shmem.h, and the same file as the tree's.
    assert (prefix / "include" / "pshmem.h").read_text() == (REPO / "include" / "pshmem.h").read_text()
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
        build_and_run([str(prefix / "bin" / "oshcc"), str(tools[0]), "-o",
                       str(tmp_path / f"p-{where}")], tmp_path / f"p-{where}", "2 3\n", env,
                      ofi=True)
        build_and_run([str(prefix / "bin" / "oshc++"), str(tools[1]), "-o",
                       str(tmp_path / f"px-{where}")], tmp_path / f"px-{where}", "1 5\n", env)
        pcdir = next(prefix.glob("lib*/pkgconfig"))
        pcenv = dict(env, PKG_CONFIG_PATH=str(pcdir))
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "hpsync-shmem"], env=pcenv,
                               check=True, capture_output=True, text=True).stdout.split()
        assert any(f.startswith("-I" + str(prefix)) for f in flags), flags
        libdir = next(f[2:] for f in flags if f.startswith("-L"))
        exe = tmp_path / f"pc-{where}"
        build_and_run(["cc", str(c), "-o", str(exe), *flags, f"-Wl,-rpath,{libdir}"], exe,
                      "1 42\n", env, ofi=True)
        build_and_run(["cc", str(tools[0]), "-o", str(exe), *flags, f"-Wl,-rpath,{libdir}"],
                      exe, "2 3\n", env)

# SPDX-License-Identifier: MIT
"""Names say their library, and no two libraries define the same symbol.

What is checked is what a linker sees: every global symbol an installed
static library defines (hidden ones too: a static link ignores visibility),
and every dynamic symbol an installed shared library exports.  The
libraries are those `cmake --install` puts in a fresh prefix, so a library
added to the install without a naming rule below fails here.  Each symbol
must be the standard API the library implements or start with the
library's prefix (the rule is written down in docs/architecture.md,
"Conventions"); and no symbol may be defined by two different libraries,
apart from the documented overlaps in SHARED.  The internal names of the
libraries installed only as shared objects (the interposer, the allocator,
the fabric module) are checked on their object files in the build tree,
since a linked shared object no longer tells hidden symbols from static
ones."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("HPSYNC_BUILD", REPO / "build"))

# libhpsync's modules: the lock dispatcher and one prefix per public lock
# header (an algorithm, or wait.h's wait policy), the queued lock's words
# (lock/queued.h), wait.h's deadline and fork tag, lockset elision, elision, TM, the CPU
# probes of src/prim and the settings of src/common.
LOCK_HEADERS = sorted(p.stem for p in (REPO / "include" / "hpsync" / "lock").glob("*.h"))
HPSYNC_MODULES = ["lock", "lockset", *LOCK_HEADERS, "word", "qword", "deadline", "fork", "elide", "tm",
                  "cpu", "settings", "env"]

PTHREAD_API = r"pthread_|sem_|cnd_|mtx_"
# The malloc family with glibc's __libc_ aliases, and C++ operators new and
# delete (_Znw, _Zna, _Zdl, _Zda).
MALLOC_API = (r"(malloc|calloc|realloc|reallocarray|free|free_sized|free_aligned_sized|"
              r"aligned_alloc|posix_memalign|memalign|valloc|pvalloc|malloc_usable_size|"
              r"malloc_trim|malloc_stats|malloc_info|mallinfo2?|mallopt)$|__libc_|"
              r"__posix_memalign$|_Z(nw|na|dl|da)")
# OpenSHMEM 1.5 and its profiling twins, the extensions (shmemx.h) and the
# deprecated names the specification still lists (start_pes, shmalloc, ...).
SHMEM_API = (r"p?shmemx?_|p?(start_pes|_my_pe|_num_pes|shmalloc|shfree|shrealloc|"
             r"shmemalign)$|p_(my_pe|num_pes)$")

# Library (file name without lib and suffix) -> what its symbols may be:
# its own prefixes, then the standard APIs it implements.
RULES: dict[str, str] = {
    # The GCC TM ABI (_ITM_*) is the standard API of src/tm/itm/.
    "hpsync": rf"hps_({'|'.join(HPSYNC_MODULES)})(_|$)|_ITM_",
    # The GCC TM ABI under libitm's names (and C++'s transactional clones of
    # operator new and delete, _ZGTt...), and the version nodes LIBITM_1.x
    # that nm lists as symbols; the TM core inside is local.
    "hpsync-itm": r"_ITM_|_ZGTt(nw|na|dl|da)|LIBITM_1\.[0-9]+$",
    # The interposer carries libhpsync's lock objects and exports their API
    # (see SHARED); its own names are hps_preload_*.
    "hpsync-preload": rf"hps_preload_|{PTHREAD_API}|hps_({'|'.join(HPSYNC_MODULES)})(_|$)",
    # hps_malloc itself is the allocator's own entry, beside hps_malloc_*.
    "hpsync-malloc": rf"hps_malloc(_|$)|{MALLOC_API}",
    "hpsync-malloc-rand": rf"hps_malloc_rand_|{MALLOC_API}",
    # hps_ofi_ (the libfabric transport) and hps_rt_ (the job runtime) are
    # sub-prefixes of the OpenSHMEM library, reserved to it.
    "hpsync-shmem": rf"hps_shmem_|hps_(ofi|rt)(_|$)|{SHMEM_API}",
    # The transport module is part of the OpenSHMEM library (it reaches the
    # runtime through hps_rt_ shims); it exports hps_shmem_ofi_module only.
    "hpsync-shmem-ofi": r"hps_shmem_|hps_(ofi|rt)(_|$)",
}

# Symbols two libraries may both define, and why.
SHARED: list[tuple[str, str, str, str]] = [
    # (library, library, symbols matching, why)
    ("hpsync", "hpsync-preload", rf"hps_({'|'.join(HPSYNC_MODULES)})(_|$)",
     "the interposer is built from libhpsync's lock objects: a preloaded program "
     "that also links libhpsync gets one copy of each, the preloaded one"),
    ("hpsync-malloc", "hpsync-malloc-rand", MALLOC_API,
     "two allocators, used one at a time (preload or link one of them)"),
]


def library_name(path: Path) -> str:
    name = path.name.split(".")[0]
    return name[3:] if name.startswith("lib") else name


def defined_globals(path: Path, dynamic: bool) -> set[str]:
    args = ["nm", "--defined-only", "-D" if dynamic else "-g", str(path)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        # "address type name"; archive member headers ("x.o:") and blank
        # lines have fewer fields.
        if len(f) == 3 and f[1] not in "Nn":
            syms.add(f[2])
    return syms


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, set[str]]]:
    """Library name -> {"static"/"shared": its global symbols} of an install."""
    prefix = tmp_path_factory.mktemp("prefix")
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)],
                   check=True, capture_output=True)
    libs: dict[str, dict[str, set[str]]] = {}
    for path in sorted(prefix.glob("lib*/**/lib*")):
        if path.is_symlink() or not path.is_file():
            continue
        if path.name.endswith(".a"):
            libs.setdefault(library_name(path), {})["static"] = defined_globals(path, False)
        elif ".so" in path.name:
            libs.setdefault(library_name(path), {})["shared"] = defined_globals(path, True)
    assert {"hpsync", "hpsync-shmem"} <= {n for n, k in libs.items() if "static" in k}, libs.keys()
    return libs


def misnamed(lib: str, syms: set[str]) -> list[str]:
    rule = re.compile(RULES[lib])
    return sorted(s for s in syms if not rule.match(s))


def test_every_installed_library_has_a_rule(installed: dict) -> None:
    assert sorted(set(installed) - set(RULES)) == []


def test_installed_names_say_their_library(installed: dict) -> None:
    bad = {f"lib{lib}.{'a' if kind == 'static' else 'so'}": misnamed(lib, syms)
           for lib, kinds in installed.items() for kind, syms in kinds.items()}
    assert {k: v for k, v in bad.items() if v} == {}


def overlap_allowed(a: str, b: str, sym: str) -> bool:
    return any({a, b} == {x, y} and re.match(pat, sym) for x, y, pat, _ in SHARED)


def test_no_symbol_in_two_libraries(installed: dict) -> None:
    owner: dict[str, str] = {}
    clashes = []
    for lib in sorted(installed):
        for sym in sorted(set().union(*installed[lib].values())):
            other = owner.setdefault(sym, lib)
            if other != lib and not overlap_allowed(other, lib, sym):
                clashes.append(f"{sym}: lib{other} and lib{lib}")
    assert clashes == []


def object_globals(target_dir: Path) -> set[str]:
    objs = sorted(target_dir.rglob("*.o"))
    assert objs, f"no objects under {target_dir}: build first"
    syms: set[str] = set()
    for o in objs:
        syms |= defined_globals(o, False)
    return syms


# The objects of each library installed only as a shared object, with what
# they may define: the library's own prefix (the interposer's objects do not
# include libhpsync's lock objects, which it links beside them) and its API.
@pytest.mark.parametrize("target,rule", [
    ("src/CMakeFiles/hpsync-preload.dir", rf"hps_preload_|{PTHREAD_API}"),
    ("src/CMakeFiles/hpsync-itm.dir", r"hps_itm_|_ITM_|_ZGTt(nw|na|dl|da)"),
    ("src/shmem/CMakeFiles/hpsync-shmem-ofi.dir", RULES["hpsync-shmem-ofi"]),
    ("src/malloc/CMakeFiles/hpsync-malloc-rand.dir", RULES["hpsync-malloc-rand"]),
    ("src/malloc/CMakeFiles/hps_malloc_obj.dir", RULES["hpsync-malloc"]),
])
def test_internal_names_say_their_library(target: str, rule: str) -> None:
    pattern = re.compile(rule)
    assert sorted(s for s in object_globals(BUILD / target) if not pattern.match(s)) == []

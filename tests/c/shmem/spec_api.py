#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""spec_api.py [--shmemx] CC INCLUDE_DIR LIBRARY

Every routine and library constant of OpenSHMEM 1.5 for C, deprecated ones
included, checked against libhpsync-shmem: each routine must be exported by
LIBRARY (nm -D) and declared by <shmem.h> (a program taking every routine's
address must compile with CC, as C99 and as C11), each constant must be
defined.  The typed families are expanded with the specification's type
tables (section 9), written out here from the specification rather than
read from the header, so the header and library are checked against the
specification and not against themselves.  One line per missing name on
stderr and exit status 1; a summary line and 0 when nothing is missing.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

# ---- type tables (TYPENAMEs) ------------------------------------------------
FIXED = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "size"]
RMA = ["float", "double", "longdouble", "char", "schar", "short", "int", "long", "longlong",
       "uchar", "ushort", "uint", "ulong", "ulonglong"] + FIXED + ["ptrdiff"]
AMO_STD = ["int", "long", "longlong", "uint", "ulong", "ulonglong",
           "int32", "int64", "uint32", "uint64", "size", "ptrdiff"]
AMO_EXT = ["float", "double"] + AMO_STD
AMO_BIT = ["uint", "ulong", "ulonglong", "int32", "int64", "uint32", "uint64"]
SYNC = ["short", "int", "long", "longlong", "ushort", "uint", "ulong", "ulonglong",
        "int32", "int64", "uint32", "uint64", "size", "ptrdiff"]
RED_BIT = ["uchar", "ushort", "uint", "ulong", "ulonglong"] + FIXED
RED_ORD = ["char", "schar", "short", "int", "long", "longlong", "ptrdiff"] + RED_BIT + \
          ["float", "double", "longdouble"]
RED_ARITH = RED_ORD + ["complexd", "complexf"]
# Active-set (deprecated) reductions, and the deprecated AMO and wait names.
TOALL_BIT = ["short", "int", "long", "longlong"]
TOALL_ORD = TOALL_BIT + ["float", "double", "longdouble"]
OLD_AMO = ["int", "long", "longlong"]
OLD_AMO_EXT = OLD_AMO + ["float", "double"]
SIZES = ["8", "16", "32", "64", "128"]

# ---- routines ------------------------------------------------------------------
PLAIN = """
shmem_init shmem_init_thread shmem_query_thread shmem_finalize shmem_global_exit
shmem_my_pe shmem_n_pes shmem_pe_accessible shmem_addr_accessible shmem_ptr shmem_team_ptr
shmem_info_get_version shmem_info_get_name start_pes _my_pe _num_pes
shmem_malloc shmem_free shmem_realloc shmem_align shmem_malloc_with_hints shmem_calloc
shmalloc shfree shrealloc shmemalign
shmem_team_my_pe shmem_team_n_pes shmem_team_get_config shmem_team_translate_pe
shmem_team_split_strided shmem_team_split_2d shmem_team_destroy
shmem_ctx_create shmem_team_create_ctx shmem_ctx_destroy shmem_ctx_get_team
shmem_signal_fetch shmem_signal_wait_until
shmem_barrier_all shmem_barrier shmem_sync_all shmem_team_sync shmem_sync
shmem_broadcastmem shmem_collectmem shmem_fcollectmem shmem_alltoallmem shmem_alltoallsmem
shmem_set_lock shmem_test_lock shmem_clear_lock
shmem_clear_cache_inv shmem_set_cache_inv shmem_clear_cache_line_inv shmem_set_cache_line_inv
shmem_udcflush shmem_udcflush_line
shmem_pcontrol
""".split()
# Routines with a context twin shmem_ctx_<name>.
CTX_PLAIN = ["fence", "quiet", "putmem", "getmem", "putmem_nbi", "getmem_nbi",
             "putmem_signal", "putmem_signal_nbi"]
# (pattern, TYPENAMEs or sizes, has a context twin); {} is the TYPENAME or SIZE.
FAMILIES = [
    # 9.6 RMA, 9.7 signaling
    (["{}_put", "{}_get", "{}_put_nbi", "{}_get_nbi", "{}_p", "{}_g", "{}_iput", "{}_iget",
      "{}_put_signal", "{}_put_signal_nbi"], RMA, True),
    (["put{}", "get{}", "put{}_nbi", "get{}_nbi", "iput{}", "iget{}", "put{}_signal",
      "put{}_signal_nbi"], SIZES, True),
    # 9.8 AMOs
    (["{}_atomic_fetch", "{}_atomic_set", "{}_atomic_swap", "{}_atomic_fetch_nbi",
      "{}_atomic_swap_nbi"], AMO_EXT, True),
    (["{}_atomic_compare_swap", "{}_atomic_fetch_inc", "{}_atomic_inc", "{}_atomic_fetch_add",
      "{}_atomic_add", "{}_atomic_compare_swap_nbi", "{}_atomic_fetch_inc_nbi",
      "{}_atomic_fetch_add_nbi"], AMO_STD, True),
    ([f"{{}}_atomic_{f}{op}{nbi}" for op in ("and", "or", "xor") for f, nbi in
      (("", ""), ("fetch_", ""), ("fetch_", "_nbi"))], AMO_BIT, True),
    (["{}_fetch", "{}_set", "{}_swap"], OLD_AMO_EXT, False),
    (["{}_cswap", "{}_finc", "{}_inc", "{}_fadd", "{}_add"], OLD_AMO, False),
    # 9.9 collectives
    (["{}_broadcast", "{}_collect", "{}_fcollect", "{}_alltoall", "{}_alltoalls"], RMA, False),
    (["broadcast{}", "collect{}", "fcollect{}", "alltoall{}", "alltoalls{}"], ["32", "64"], False),
    (["{}_and_reduce", "{}_or_reduce", "{}_xor_reduce"], RED_BIT, False),
    (["{}_min_reduce", "{}_max_reduce"], RED_ORD, False),
    (["{}_sum_reduce", "{}_prod_reduce"], RED_ARITH, False),
    (["{}_and_to_all", "{}_or_to_all", "{}_xor_to_all"], TOALL_BIT, False),
    (["{}_min_to_all", "{}_max_to_all", "{}_sum_to_all", "{}_prod_to_all"], TOALL_ORD, False),
    (["{}_sum_to_all", "{}_prod_to_all"], ["complexd", "complexf"], False),
    # 9.10 point-to-point synchronization
    ([f"{{}}_{w}{form}" for w in ("wait_until", "test") for form in
      ("", "_all", "_any", "_some", "_all_vector", "_any_vector", "_some_vector")], SYNC, False),
    (["{}_wait"], ["short", "int", "long", "longlong"], False),
]

CONSTANTS = """
SHMEM_MAJOR_VERSION SHMEM_MINOR_VERSION SHMEM_MAX_NAME_LEN SHMEM_VENDOR_STRING
SHMEM_THREAD_SINGLE SHMEM_THREAD_FUNNELED SHMEM_THREAD_SERIALIZED SHMEM_THREAD_MULTIPLE
SHMEM_CTX_SERIALIZED SHMEM_CTX_PRIVATE SHMEM_CTX_NOSTORE SHMEM_TEAM_NUM_CONTEXTS
SHMEM_SIGNAL_SET SHMEM_SIGNAL_ADD SHMEM_MALLOC_ATOMICS_REMOTE SHMEM_MALLOC_SIGNAL_REMOTE
SHMEM_CMP_EQ SHMEM_CMP_NE SHMEM_CMP_GT SHMEM_CMP_GE SHMEM_CMP_LT SHMEM_CMP_LE
SHMEM_SYNC_VALUE SHMEM_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
SHMEM_REDUCE_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
_SHMEM_MAJOR_VERSION _SHMEM_MINOR_VERSION _SHMEM_MAX_NAME_LEN _SHMEM_VENDOR_STRING
_SHMEM_SYNC_VALUE _SHMEM_BCAST_SYNC_SIZE _SHMEM_BARRIER_SYNC_SIZE _SHMEM_REDUCE_SYNC_SIZE
_SHMEM_COLLECT_SYNC_SIZE _SHMEM_REDUCE_MIN_WRKDATA_SIZE
_SHMEM_CMP_EQ _SHMEM_CMP_NE _SHMEM_CMP_GT _SHMEM_CMP_GE _SHMEM_CMP_LT _SHMEM_CMP_LE
""".split()
# Handles and types: expressions rather than macros (an implementation may
# define them either way).
HANDLES = ["SHMEM_CTX_DEFAULT", "SHMEM_CTX_INVALID", "SHMEM_TEAM_WORLD", "SHMEM_TEAM_SHARED",
           "SHMEM_TEAM_INVALID"]
TYPES = ["shmem_ctx_t", "shmem_team_t", "shmem_team_config_t"]


def profiling_name(name: str) -> str:
    """The profiling interface's name-shifted entry point for routine name:
    pshmem_X for shmem_X, and for the 1.2 names the same "p" in front
    (pstart_pes, p_my_pe, pshmalloc), as OSHMEM and Sandia OpenSHMEM spell
    them; the specification says only "the prefix pshmem_"."""
    return "p" + name


def routines() -> list[str]:
    names = list(PLAIN)
    for n in CTX_PLAIN:
        names += [f"shmem_{n}", f"shmem_ctx_{n}"]
    for patterns, rows, ctx in FAMILIES:
        for p in patterns:
            for r in rows:
                n = p.format(r)
                names.append(f"shmem_{n}")
                if ctx:
                    names.append(f"shmem_ctx_{n}")
    return sorted(set(names))


def program(names: list[str]) -> str:
    lines = ["#include <shmem.h>"]
    for c in CONSTANTS:
        lines += [f"#ifndef {c}", f"#error missing constant {c}", "#endif"]
    lines.append("typedef void (*fn_t)(void);")
    lines.append("static const fn_t routines[] = {")
    lines += [f"    (fn_t){n}," for n in names]
    lines.append("};")
    lines.append("int main(void)")
    lines.append("{")
    for t in TYPES:
        lines.append(f"    {t} v_{t};")
        lines.append(f"    (void)v_{t};")
    for h in HANDLES:
        lines.append(f"    (void){h};")
    lines.append("    return sizeof routines / sizeof routines[0] == 0;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def exports(lib: str) -> set[str] | None:
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    if nm.returncode != 0:
        print(f"spec_api: nm {lib}: {nm.stderr.strip()}", file=sys.stderr)
        return None
    return {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}


def preprocess(cc: str, inc: str, header: str, macros: bool) -> str:
    r = subprocess.run([cc, "-E", "-std=c11", "-I", inc] + (["-dM"] if macros else []) + ["-"],
                       input=f"#include <{header}>\n", capture_output=True, text=True, check=True)
    return r.stdout


def check_shmemx(cc: str, inc: str, lib: str) -> int:
    """HAVE_SHMEMX_<NAME> for exactly the declared shmemx_<name>, all exported."""
    exported = exports(lib)
    if exported is None:
        return 1
    have = set(re.findall(r"^#define (HAVE_SHMEMX_\w+)", preprocess(cc, inc, "shmemx.h", True), re.M))
    have -= set(re.findall(r"^#define (HAVE_SHMEMX_\w+)", preprocess(cc, inc, "shmem.h", True), re.M))
    declared = set(re.findall(r"\b(shmemx_\w+)\s*\(", preprocess(cc, inc, "shmemx.h", False)))
    offered = {n for n in exported if n.startswith("shmemx_")}
    bad = []
    for d in sorted(declared):
        if "HAVE_" + d.upper() not in have:
            bad.append(f"{d} is declared without a HAVE_{d.upper()} macro")
    for h in sorted(have):
        if h[len("HAVE_"):].lower() not in declared:
            bad.append(f"{h} is defined but shmemx.h declares no {h[len('HAVE_'):].lower()}")
    for n in sorted(declared ^ offered):
        bad.append(f"{n} is {'declared but not exported' if n in declared else 'exported but not declared'}")
    if not declared:
        bad.append("shmemx.h declares no extension")
    # Each macro guards a use of its routine, as a program would write it.
    prog = ["#include <shmemx.h>", "typedef void (*fn_t)(void);",
            "static const fn_t guarded[] = {", "    (fn_t)0,"]
    for d in sorted(declared):
        prog += [f"#ifdef HAVE_{d.upper()}", f"    (fn_t){d},", "#endif"]
    prog += ["};", "int main(void)", "{",
             f"    return sizeof guarded / sizeof guarded[0] != {len(declared) + 1};", "}"]
    with tempfile.TemporaryDirectory() as t:
        src, exe = Path(t) / "shmemx_api.c", Path(t) / "shmemx_api"
        src.write_text("\n".join(prog) + "\n")
        r = subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-I", inc, str(src), lib, "-o",
                            str(exe), f"-Wl,-rpath,{Path(lib).resolve().parent}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad += [l for l in r.stderr.splitlines() if "error" in l][:20] or ["does not build"]
        elif subprocess.run([str(exe)]).returncode != 0:
            bad.append("a HAVE_SHMEMX_ macro did not guard its routine")
    for b in bad:
        print(f"spec_api: shmemx: {b}", file=sys.stderr)
    if bad:
        return 1
    print(f"spec_api: shmemx.h: {len(declared)} extensions, each with its HAVE_SHMEMX_ macro "
          f"and exported: {', '.join(sorted(declared))}")
    return 0


def main(argv: list[str]) -> int:
    shmemx = len(argv) > 1 and argv[1] == "--shmemx"
    if shmemx:
        argv = argv[:1] + argv[2:]
    if len(argv) != 4:
        print("usage: spec_api.py [--shmemx] CC INCLUDE_DIR LIBRARY", file=sys.stderr)
        return 2
    cc, inc, lib = argv[1], argv[2], argv[3]
    if shmemx:
        return check_shmemx(cc, inc, lib)
    names = routines()
    bad = 0
    exported = exports(lib)
    if exported is None:
        return 1
    for n in names:
        if n not in exported:
            print(f"spec_api: {n} is not exported by {Path(lib).name}", file=sys.stderr)
            bad += 1
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "spec_api.c"
        src.write_text(program(names))
        for std in ("c99", "c11"):
            r = subprocess.run([cc, f"-std={std}", "-Wall", "-Werror", "-I", inc, str(src), lib,
                                "-o", str(Path(d) / f"spec_api_{std}")],
                               capture_output=True, text=True)
            if r.returncode != 0:
                errors = [l for l in r.stderr.splitlines() if "error" in l]
                for l in errors[:50]:
                    print(f"spec_api: -std={std}: {l}", file=sys.stderr)
                bad += max(1, len(errors))
    if bad:
        print(f"spec_api: FAIL: {bad} problems in {len(names)} routines and "
              f"{len(CONSTANTS)} constants of OpenSHMEM 1.5", file=sys.stderr)
        return 1
    print(f"spec_api: all {len(names)} routines of OpenSHMEM 1.5 exported and declared, "
          f"{len(CONSTANTS)} constants, {len(HANDLES)} handles and {len(TYPES)} types defined")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

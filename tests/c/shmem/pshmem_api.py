#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pshmem_api.py CC CXX INCLUDE_DIR SHARED_LIBRARY STATIC_LIBRARY

The OpenSHMEM profiling interface, for every routine of OpenSHMEM 1.5 (the
list of spec_api.py):

- both libraries define its name-shifted twin (spec_api.profiling_name) as
  an alias: the same address (nm -D for the shared library, the same member
  and offset in the archive), the twin global and the shmem_ name weak, so
  that a tool may replace the shmem_ name, statically linked too;
- no object of the archive and no dynamic relocation of the shared library
  refers to a routine by either name: the library's own calls stay inside
  it and a tool sees only the program's;
- <pshmem.h> declares each twin with its routine's type (a C11 and a C++
  static assertion per pair), in C99, C11 and C++, and a program linked
  with the shared library finds each twin at its routine's address.

One line per problem on stderr and exit status 1; a summary line and 0.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from spec_api import preprocess, profiling_name, routines  # noqa: E402


def symbols(cmd: list[str]) -> dict[tuple[str, str], tuple[str, str]]:
    """(member, name) -> (value, nm type letter) from `nm -A --defined-only`."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    table: dict[tuple[str, str], tuple[str, str]] = {}
    for line in out.splitlines():
        parts = line.split()     # FILE[:MEMBER]:VALUE TYPE NAME
        if len(parts) != 3 or ":" not in parts[0]:
            continue
        where, value = parts[0].rsplit(":", 1)
        table[(where, parts[2])] = (value, parts[1])
    return table


def check_aliases(names: list[str], table: dict[tuple[str, str], tuple[str, str]],
                  what: str) -> list[str]:
    """Each routine and its twin: defined together, same value, twin global
    (T), routine weak (W)."""
    where = {name: member for member, name in table}
    bad = []
    for n in names:
        p = profiling_name(n)
        if n not in where or p not in where:
            bad.append(f"{what}: {n if n not in where else p} is not defined")
            continue
        if where[n] != where[p]:
            bad.append(f"{what}: {n} is in {where[n]} but {p} in {where[p]}")
            continue
        (nv, nk), (pv, pk) = table[(where[n], n)], table[(where[p], p)]
        if nv != pv:
            bad.append(f"{what}: {n} is at {nv} but {p} at {pv}")
        if (nk, pk) != ("W", "T"):
            bad.append(f"{what}: {n} is {nk} and {p} {pk} (nm), expected W and T: the "
                       f"shmem_ name weak, so a tool may replace it")
    twins = {profiling_name(n) for n in names}
    for (member, name), (_value, kind) in table.items():
        if kind.isupper() and name.startswith("p") and name[1:] in where and name not in twins:
            bad.append(f"{what}: {name} is exported but is no OpenSHMEM routine's twin")
    return bad


def internal_references(names: list[str], archive: str, shared: str) -> list[str]:
    """Relocations naming a routine or its twin: in the archive's objects
    (the library calling its own API, which a statically linked tool would
    intercept) and among the shared library's dynamic relocations (the same
    through the PLT or GOT)."""
    api = set(names) | {profiling_name(n) for n in names}
    bad = []
    for lib, what in ((archive, "archive"), (shared, "shared library")):
        out = subprocess.run(["readelf", "-rW", lib], capture_output=True, text=True,
                             check=True).stdout
        member = lib
        for line in out.splitlines():
            m = re.match(r"^File: .*\((.+)\)$", line)
            if m:
                member = m.group(1)
                continue
            fields = line.split()
            if len(fields) >= 5 and fields[4].split("@")[0] in api:
                bad.append(f"{what}: {member} refers to {fields[4]} ({fields[2]}): the library "
                           f"calls its own API through an interposable name")
    return bad


def program(names: list[str], noreturn: list[str], cxx: bool) -> str:
    lines = ["#include <pshmem.h>", "#include <stdio.h>"]
    if cxx:
        lines.append("#include <type_traits>")
    lines.append("typedef void (*fn_t)(void);")
    lines.append("static const struct pair { fn_t api, twin; const char *name; } pairs[] = {")
    lines += [f'    {{(fn_t){n}, (fn_t){profiling_name(n)}, "{n}"}},' for n in names]
    lines.append("};")
    for n in names:
        p = profiling_name(n)
        if cxx:
            lines.append(f"static_assert(std::is_same<decltype({n}), decltype({p})>::value, "
                         f'"{p}");')
        else:
            lines += ["#if __STDC_VERSION__ >= 201112L",
                      f"_Static_assert(__builtin_types_compatible_p(__typeof__({n}), "
                      f'__typeof__({p})), "{p}");', "#endif"]
    # A twin of a noreturn routine keeps the attribute (-Werror turns
    # "noreturn function does return" into a failure).
    for i, n in enumerate(noreturn):
        lines += [f"void hps_nr{i}(void) __attribute__((noreturn));",
                  f"void hps_nr{i}(void) {{ {profiling_name(n)}(0); }}"]
    lines += ["int main(void)", "{", "    int bad = 0;",
              "    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)",
              "        if (pairs[i].api != pairs[i].twin) {",
              '            printf("%s and its twin are at different addresses\\n", pairs[i].name);',
              "            bad++;", "        }", "    return bad != 0;", "}"]
    return "\n".join(lines) + "\n"


def check_header(cc: str, cxx: str, inc: str, lib: str, names: list[str]) -> list[str]:
    api = preprocess(cc, inc, "shmem.h", False)
    noreturn = [n for n in names
                if re.search(rf"\b{n}\s*\([^;]*\)\s*__attribute__\s*\(\(\s*noreturn", api)]
    bad = []
    with tempfile.TemporaryDirectory() as d:
        for lang, compiler, std in (("c", cc, "-std=c99"), ("c", cc, "-std=c11"),
                                    ("cpp", cxx, "-std=c++17")):
            src = Path(d) / f"pshmem_api_{std[5:]}.{lang}"
            exe = src.with_suffix("")
            src.write_text(program(names, noreturn, lang == "cpp"))
            r = subprocess.run([compiler, std, "-Wall", "-Wextra", "-Werror", "-I", inc, str(src),
                                lib, "-o", str(exe), f"-Wl,-rpath,{Path(lib).resolve().parent}"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                errors = [l for l in r.stderr.splitlines() if "error" in l]
                bad += [f"pshmem.h {std}: {l}" for l in errors[:30]] or [f"{std}: does not build"]
                continue
            run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
            if run.returncode != 0:
                bad += [f"{std}: {l}" for l in run.stdout.splitlines()] or [f"{std}: failed"]
    return bad


def main(argv: list[str]) -> int:
    if len(argv) != 6:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    cc, cxx, inc, shared, archive = argv[1:]
    names = routines()
    bad = check_aliases(names, symbols(["nm", "-A", "-D", "--defined-only", shared]),
                        Path(shared).name)
    bad += check_aliases(names, symbols(["nm", "-A", "--defined-only", archive]),
                         Path(archive).name)
    bad += internal_references(names, archive, shared)
    bad += check_header(cc, cxx, inc, shared, names)
    for b in bad:
        print(f"pshmem_api: {b}", file=sys.stderr)
    if bad:
        print(f"pshmem_api: FAIL: {len(bad)} problems in the profiling interface of "
              f"{len(names)} routines", file=sys.stderr)
        return 1
    print(f"pshmem_api: all {len(names)} routines of OpenSHMEM 1.5 have their name-shifted "
          f"twin in both libraries (same address, twin strong, routine weak) and in pshmem.h "
          f"(C99, C11, C++); the library calls none of them itself")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

# SPDX-License-Identifier: MIT
"""House rule: atomics go through include/hpsync/pr.h, CPU specifics live in
src/prim/.  A C file under src/ (outside src/prim/) that spells an atomic
itself (GCC's __atomic_/__sync_ builtins, <stdatomic.h>, or a bare C11
atomic_*() call or memory_order_*) fails here, so an ordering cannot hide
from a grep for pr.h's names."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BUILTINS = re.compile(r"__atomic_|__sync_")
C11 = re.compile(r"(?<![A-Za-z0-9_])(atomic_[a-z_]+\s*\(|memory_order_[a-z_]+)")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')



def code_of(text: str) -> str:
    """The text without comments and string literals (which may name
    atomics, e.g. OpenSHMEM's shmem_*_atomic_* symbols); line breaks are
    kept, so line numbers stay those of the file."""
    blank = COMMENT.sub(lambda m: " " + "\n" * m.group(0).count("\n"), text)
    return STRING.sub('""', blank)


def offenders(root: Path) -> list[str]:
    """Every `path:line: text` under root/src that spells an atomic outside
    src/prim/."""
    found = []
    for path in sorted((root / "src").rglob("*")):
        if path.suffix not in (".c", ".h", ".def") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel.startswith("src/prim/"):
            continue
        text = path.read_text(errors="replace")
        # <stdatomic.h> sits in an #include, not in code, so check it on the raw text.
        for m in re.finditer(r"#\s*include\s*<stdatomic\.h>", text):
            found.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: #include <stdatomic.h>")
        code = code_of(text)
        pats = [BUILTINS, C11]
        for no, line in enumerate(code.splitlines(), 1):
            if any(p.search(line) for p in pats):
                found.append(f"{rel}:{no}: {line.strip()}")
    return found


def test_no_atomics_outside_pr_h() -> None:
    bad = offenders(ROOT)
    assert not bad, ("atomics spelled outside hpsync/pr.h (use its hps_* operations, "
                     "adding what is missing there):\n" + "\n".join(bad))


def test_guard_catches_each_spelling(tmp_path: Path) -> None:
    """The scan itself: every banned spelling is caught, in src/ and not in
    src/prim/ or in comments and strings."""
    src = tmp_path / "src"
    (src / "prim").mkdir(parents=True)
    (src / "malloc").mkdir()
    (src / "prim" / "ok.h").write_text("#include <stdatomic.h>\nint x = __atomic_load_n(&y, 0);\n")
    (src / "a.c").write_text("/* __atomic_load_n in a comment */\nconst char *s = \"atomic_load(\";\n"
                             "int v = __atomic_load_n(&y, __ATOMIC_RELAXED);\n")
    (src / "b.h").write_text("#include <stdatomic.h>\n")
    (src / "c.c").write_text("void f(void) { __sync_synchronize(); }\n")
    (src / "d.c").write_text("int g(void) { return atomic_load(&z); }\n")
    (src / "e.c").write_text("int h(void) { return hps_load_relaxed(&z); }\n")
    (src / "malloc" / "m.c").write_text("int k(void) { return atomic_load_explicit(&z, memory_order_relaxed); }\n")
    got = offenders(tmp_path)
    assert [g.split(":")[0] for g in got] == ["src/a.c", "src/b.h", "src/c.c", "src/d.c",
                                              "src/malloc/m.c"], got

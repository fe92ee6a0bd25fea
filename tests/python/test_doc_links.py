# SPDX-License-Identifier: MIT
"""Every relative link in README.md and docs/ must resolve: the file (or directory) it
names exists, and an anchor (#section) names a heading of that Markdown file, spelled as
GitHub spells heading anchors.  External links (http, https, mailto) are not fetched."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code spans removed."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def anchor_of(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, inline markup dropped, punctuation other
    than '-' and '_' dropped, spaces to '-'."""
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    h = h.replace("`", "").lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        a = anchor_of(m.group(1))
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else f"{a}-{n}")
    return out


def broken_links() -> list[str]:
    bad = []
    for md in markdown_files():
        for lineno, line in enumerate(prose_lines(md.read_text()), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue
                path, _, frag = target.partition("#")
                dest = (md.parent / path).resolve() if path else md
                where = f"{md.relative_to(ROOT)}: ({target})"
                if not dest.exists():
                    bad.append(f"{where}: no such file")
                elif frag and dest.suffix == ".md" and frag not in anchors(dest):
                    bad.append(f"{where}: no heading #{frag}")
    return bad


def test_anchor_spelling() -> None:
    assert anchor_of("Launching: oshrun and PMIx") == "launching-oshrun-and-pmix"
    assert anchor_of("Benchmark: `hpsync bench malloc`") == "benchmark-hpsync-bench-malloc"
    assert anchor_of("Allocator settings (libhpsync-malloc)") == "allocator-settings-libhpsync-malloc"


def test_checker_finds_a_broken_link(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# Title\n\n[ok](#title) [gone](b.md) [bad](#nope)\n")
    found = []
    for target in LINK.findall(prose_lines(doc.read_text())[2]):
        path, _, frag = target.partition("#")
        dest = (doc.parent / path) if path else doc
        found.append(dest.exists() and (not frag or frag in anchors(dest)))
    assert found == [True, False, False]


def test_every_relative_link_resolves() -> None:
    bad = broken_links()
    assert not bad, "broken links:\n" + "\n".join(bad)

# SPDX-License-Identifier: MIT
"""`hpsync doctor`: hps-doctor's JSON plus which peer libraries are installed.

Peer libraries are found by looking for their shared objects in the
dynamic linker's directories (read from /etc/ld.so.conf, not from the
free-text output of `ldconfig -p`).  libfabric's providers come from
hps-fabric-info, which asks fi_getinfo and prints JSON: no program's text
output is parsed.

The lock algorithms are published by the build ("locks" in hps-doctor's
document, generated from include/hpsync/lock/algorithms.def);
lock_algorithms() is the one place the CLI learns them.
"""

from __future__ import annotations

import functools
import glob
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import runner
from .errors import CliError

# Library -> shared-object name patterns.
PEER_LIBRARIES: dict[str, tuple[str, ...]] = {
    "jemalloc": ("libjemalloc.so*",),
    "mimalloc": ("libmimalloc.so*", "libmimalloc-secure.so*"),
    "tcmalloc": ("libtcmalloc.so*", "libtcmalloc_minimal.so*"),
    "libfabric": ("libfabric.so*",),
}



@dataclass(frozen=True)
class LockAlgorithms:
    """The lock algorithms of the build, in the order tables show them."""
    names: tuple[str, ...]
    aliases: Mapping[str, str]          # alias -> algorithm name
    default: str
    descriptions: Mapping[str, str]

    def accepted(self) -> list[str]:
        """Every name HPSYNC_LOCK and `--lock` take: the algorithms, then the aliases."""
        return list(self.names) + list(self.aliases)

    def resolve(self, name: str) -> str:
        return self.aliases.get(name, name)


def parse_locks(locks: Mapping[str, Any]) -> LockAlgorithms:
    """The "locks" object of hps-doctor's document (pure)."""
    algos = list(locks.get("algorithms", []))
    names = tuple(str(a["name"]) for a in algos)
    default = str(locks.get("default", ""))
    if not names or default not in names:
        raise CliError("hps-doctor published no lock algorithms (or a default not among them)")
    return LockAlgorithms(names, {str(al): str(a["name"]) for a in algos for al in a.get("aliases", [])},
                          default, {str(a["name"]): str(a.get("description", "")) for a in algos})


@functools.lru_cache(maxsize=None)
def _names() -> Mapping[str, Any]:
    """`hps-doctor --locks`: the names the library takes (lock algorithms,
    TM backends), measured nothing, asked once per process."""
    return runner.run_json([str(runner.program("hps-doctor")), "--locks"], timeout=60)


def lock_algorithms() -> LockAlgorithms:
    """The build's lock algorithms (the "locks" of `hpsync doctor --json`)."""
    return parse_locks(_names().get("locks", {}))


def parse_tm_backends(backends: Any) -> tuple[str, ...]:
    """The "tm_backends" array of hps-doctor's document, the default first (pure)."""
    names = tuple(str(b) for b in backends or ())
    if not names:
        raise CliError("hps-doctor published no TM backends")
    return names


def tm_backends() -> tuple[str, ...]:
    """What HPSYNC_TM takes (the "tm_backends" of `hpsync doctor --json`)."""
    return parse_tm_backends(_names().get("tm_backends"))


DEFAULT_LIB_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib")


def _ld_conf_dirs(conf: Path, seen: set[Path] | None = None) -> list[str]:
    """Directories listed in ld.so.conf and the files it includes."""
    seen = seen if seen is not None else set()
    if conf in seen or not conf.is_file():
        return []
    seen.add(conf)
    dirs: list[str] = []
    try:
        lines = conf.read_text(errors="replace").splitlines()
    except OSError:
        return []
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("include "):
            pattern = line.split(None, 1)[1]
            if not os.path.isabs(pattern):
                pattern = str(conf.parent / pattern)
            for inc in sorted(glob.glob(pattern)):
                dirs += _ld_conf_dirs(Path(inc), seen)
        elif line.startswith("/"):
            dirs.append(line)
    return dirs


def library_dirs() -> list[str]:
    """LD_LIBRARY_PATH, ld.so.conf's directories, then the defaults; existing, deduplicated."""
    cand: list[str] = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    cand += _ld_conf_dirs(Path("/etc/ld.so.conf"))
    cand += list(DEFAULT_LIB_DIRS)
    out: list[str] = []
    for d in cand:
        if d not in out and os.path.isdir(d):
            out.append(d)
    return out


def find_shared_objects(patterns: Iterable[str], dirs: Iterable[str]) -> list[str]:
    """Real paths of matching shared objects (symlink chains collapsed)."""
    found: list[str] = []
    for d in dirs:
        for pat in patterns:
            for p in sorted(glob.glob(os.path.join(d, pat))):
                real = os.path.realpath(p)
                if real not in found and os.path.isfile(real):
                    found.append(real)
    return found


def fabric_info() -> dict[str, Any]:
    """hps-fabric-info's document (fi_getinfo's providers), or {"available":
    False, "error": why} when it is not built or fails."""
    path = runner.build_dir() / "bin" / "hps-fabric-info"
    if not path.is_file():
        return {"available": False, "providers": [],
                "error": "hps-fabric-info not built (libfabric missing at build time)"}
    try:
        return runner.run_json([str(path)], timeout=60)
    except CliError as exc:
        return {"available": False, "providers": [], "error": str(exc)}


def provider_names(info: dict[str, Any]) -> list[str]:
    """Providers able to carry OpenSHMEM (reliable datagrams with RMA and
    atomics), each once, in fi_getinfo's order of preference."""
    names: list[str] = []
    for p in info.get("providers", []):
        if p.get("rdm_rma_atomic") and p["name"] not in names:
            names.append(p["name"])
    return names


def provider_objects(dirs: Iterable[str]) -> list[str]:
    """libfabric's loadable provider DSOs (<libdir>/libfabric/lib<name>-fi.so)."""
    return find_shared_objects(["lib*-fi.so"], [os.path.join(d, "libfabric") for d in dirs])


def peers() -> dict[str, Any]:
    dirs = library_dirs()
    libs = {}
    for name, pats in PEER_LIBRARIES.items():
        paths = find_shared_objects(pats, dirs)
        libs[name] = {"found": bool(paths), "paths": paths}
    info = fabric_info()
    return {
        "library_dirs": dirs,
        "libraries": libs,
        "fabric": info,
        "fabric_providers": provider_names(info),
        "fabric_provider_objects": provider_objects(dirs),
    }


def collect() -> dict[str, Any]:
    """The full doctor document: the C probe's JSON with a "peers" section."""
    doc = runner.run_json([str(runner.program("hps-doctor"))])
    doc["peers"] = peers()
    doc["build"] = {
        "dir": str(runner.build_dir()),
        "preload": str(runner.build_dir() / "lib" / runner.PRELOAD_NAME),
        "preload_present": (runner.build_dir() / "lib" / runner.PRELOAD_NAME).is_file(),
    }
    return doc

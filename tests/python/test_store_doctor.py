# SPDX-License-Identifier: MIT
"""The SQLite store and doctor's peer-library helpers, without running programs."""

from __future__ import annotations

from pathlib import Path

from hpsync import doctor, store

DATA = Path(__file__).resolve().parents[1] / "data"


def test_store_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "results.db"
    assert store.list_runs(db) == []
    a = store.save_run(db, "bench-locks", "h1", {"x": 1}, created="2024-01-01T00:00:00+00:00")
    b = store.save_run(db, "bench-locks", "h2", {"x": 2})
    runs = store.list_runs(db)
    assert [r.id for r in runs] == [b, a]
    assert runs[1].host == "h1" and runs[1].created.startswith("2024-01-01")
    assert store.load_run(db, a) == {"x": 1}
    assert len(store.list_runs(db, limit=1)) == 1


def test_provider_names_from_fabric_info() -> None:
    """Only providers that offer RDM endpoints with RMA and atomics, each once
    (fi_getinfo lists a provider per domain and endpoint type)."""
    info = {"available": True, "providers": [
        {"name": "tcp;ofi_rxm", "domain": "eth0", "ep_type": "rdm", "rdm_rma_atomic": True},
        {"name": "tcp;ofi_rxm", "domain": "lo", "ep_type": "rdm", "rdm_rma_atomic": True},
        {"name": "udp", "domain": "lo", "ep_type": "dgram", "rdm_rma_atomic": False},
        {"name": "shm", "domain": "shm", "ep_type": "rdm", "rdm_rma_atomic": True},
    ]}
    assert doctor.provider_names(info) == ["tcp;ofi_rxm", "shm"]
    assert doctor.provider_names({"available": False, "providers": []}) == []


def test_ld_conf_includes(tmp_path: Path) -> None:
    libdir = tmp_path / "libs"
    libdir.mkdir()
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "conf.d" / "x.conf").write_text(f"# comment\n{libdir}\n")
    conf = tmp_path / "ld.so.conf"
    conf.write_text("include conf.d/*.conf\n/nonexistent\n")
    assert doctor._ld_conf_dirs(conf) == [str(libdir), "/nonexistent"]


def test_find_shared_objects_collapses_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "libjemalloc.so.2"
    real.write_bytes(b"\x7fELF")
    (tmp_path / "libjemalloc.so").symlink_to(real.name)
    found = doctor.find_shared_objects(["libjemalloc.so*"], [str(tmp_path)])
    assert found == [str(real)]

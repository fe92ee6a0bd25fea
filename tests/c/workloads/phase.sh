#!/bin/sh
# SPDX-License-Identifier: MIT
# phase.sh PROGRAM: the histogram's b1m-b16 row (conflict rate changing
# mid-run) validates on the mutex, a static k and tm-dyn, and tm-dyn's entry
# shows the controller at the change: "k_phase" (a power of 2 per thread)
# beside "k_end", and "k_phase_reps" ([k at the change, k at the end] per
# thread, per repetition); the rows without a change carry no k_phase.
# The row with a change runs whole in every repetition, each from a fresh
# site ("fresh_reps" all 1); a row without one is sliced, its site living
# through the repetitions (only the first fresh).
prog=$1
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
timeout 100 "$prog" --rows b1m-b16,b16 --scale 0.05 --reps 2 --threads 1,3 --k 4 \
  --variants mutex,tm-dyn >"$out" || { echo "FAIL: the run failed"; exit 1; }
python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
seen = 0
for row in doc["rows"]:
    for v in row["variants"]:
        tm = v.get("tm") or {}
        if v["variant"] != "tm-dyn":
            assert "k_phase" not in tm, (row["row"], v["variant"])
            continue
        fresh = tm["fresh_reps"]
        assert len(fresh) == doc["reps"], tm
        if row["row"] != "b1m-b16":
            assert "k_phase" not in tm, ("no phase change in", row["row"])
            assert fresh == [1] + [0] * (doc["reps"] - 1), ("a sliced row's site lives on", fresh)
            continue
        assert fresh == [1] * doc["reps"], ("each run of a changing row starts afresh", fresh)
        n = row["threads"]
        ks = tm["k_phase"]
        assert len(ks) == n and len(tm["k_end"]) == n, tm
        assert all(k >= 1 and k & (k - 1) == 0 for k in ks + tm["k_end"]), tm
        reps = tm["k_phase_reps"]
        assert len(reps) == doc["reps"] and all(len(r) == n for r in reps), reps
        assert reps[-1] == [[a, b] for a, b in zip(ks, tm["k_end"])], (reps, ks)
        seen += 1
assert seen == 2, f"tm-dyn rows with a phase change: {seen}, want 2 (1 and 3 threads)"
print("ok: k_phase, k_phase_reps and fresh sites on b1m-b16 at 1 and 3 threads; b16 sliced")
PY

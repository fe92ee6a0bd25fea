#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A test double of a workload program (build/bin/hps-workload-fake): the
contract of docs/workloads.md without the work.  Its figures follow a
fixed model, so the runner's analysis can be checked exactly:

  ops_per_sec = BASE[variant] * threads ** SCALE[variant] * (1 + round/100)
  seconds     = 1000 / ops_per_sec                    (lower is better)

where the round comes from FAKE_ROUND_FILE (a counter the double bumps per
run).  Settings (environment): FAKE_WRONG=VARIANT fails that variant's
validation; FAKE_LOG=FILE appends each invocation (argv, HPSYNC_TM,
LD_PRELOAD) as a JSON line; FAKE_SLEEP=S makes each run take S seconds;
FAKE_SCALABLE=1 says it takes --scale.
"""
import json
import os
import sys
import time

NAME = os.path.basename(sys.argv[0]).replace("hps-workload-", "")
BASE = {"mutex": 100.0, "tts": 110.0, "elide-r0": 90.0, "elide-r3": 120.0, "stm": 80.0,
        "norec": 95.0, "htm": 200.0, "k1": 50.0, "k4": 150.0, "k16": 120.0, "ctl": 140.0}
SCALE = {"mutex": 0.0, "tts": 0.0, "elide-r0": 0.2, "elide-r3": 0.5, "stm": 1.0, "norec": 0.8,
         "htm": 1.0, "k1": 1.0, "k4": 0.9, "k16": 0.5, "ctl": 0.9}
SIZES = (64, 1024)

DESCRIBE = {
    "workload": NAME,
    "title": "a test double",
    "variants": [
        {"name": "mutex", "kind": "lock", "baseline": True},
        {"name": "tts", "kind": "lock", "quick": False},
        {"name": "elide-r0", "kind": "elide", "restarts": 0},
        {"name": "elide-r3", "kind": "elide", "restarts": 3},
        {"name": "stm", "kind": "tm", "env": {"HPSYNC_TM": "stm"}},
        {"name": "norec", "kind": "tm", "env": {"HPSYNC_TM": "norec"}},
        {"name": "htm", "kind": "tm", "env": {"HPSYNC_TM": "htm"}, "needs": ["rtm"]},
        {"name": "k1", "kind": "tm", "granularity": 1, "default": False, "quick": False},
        {"name": "k4", "kind": "tm", "granularity": 4, "default": False, "quick": False},
        {"name": "k16", "kind": "tm", "granularity": 16, "default": False, "quick": False},
        {"name": "ctl", "kind": "tm", "controller": True, "default": False, "quick": False},
    ],
    "metrics": [{"name": "ops_per_sec", "unit": "ops/s", "better": "higher"},
                {"name": "seconds", "unit": "s", "better": "lower"}],
    "dims": ["size"],
    "allocators": NAME.endswith("alloc"),
    "threads": {"default": [1, 2], "quick": [1, 2]},
    "args": {"default": ["--size-list", "64,1024"], "quick": ["--quick"]},
    "seconds": {"default": 0.01, "quick": 0.01},
    "scale": os.environ.get("FAKE_SCALABLE") == "1",
    "figures": [{"shape": "curve", "x": "size", "metric": "ops_per_sec", "series": "allocator"},
                {"shape": "restarts", "metric": "ops_per_sec"},
                {"shape": "granularity", "metric": "ops_per_sec"}],
}


def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def next_round():
    path = os.environ.get("FAKE_ROUND_FILE")
    if not path:
        return 0
    n = int(open(path).read()) if os.path.exists(path) else 0
    with open(path, "w") as f:
        f.write(str(n + 1))
    return n


def main():
    if "--describe" in sys.argv:
        json.dump(DESCRIBE, sys.stdout)
        return 0
    if os.environ.get("FAKE_LOG"):
        with open(os.environ["FAKE_LOG"], "a") as f:
            f.write(json.dumps({"argv": sys.argv[1:], "tm": os.environ.get("HPSYNC_TM"),
                                "preload": os.environ.get("LD_PRELOAD")}) + "\n")
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    variants = arg("--variants").split(",")
    threads = [int(t) for t in arg("--threads").split(",")]
    rnd = next_round()
    rows = []
    for t in threads:
        for v in variants:
            for size in SIZES:
                if os.environ.get("FAKE_WRONG") == v:
                    print(f"{NAME}: {v} (size {size}, {t} threads): wrong result: sum 7, expected 8",
                          file=sys.stderr)
                    return 1
                ops = BASE[v] * t ** SCALE[v] * (1 + rnd / 100)
                row = {"variant": v, "threads": t, "size": size, "reps": 1,
                       "ops_per_sec_reps": [ops], "seconds_reps": [1000 / ops],
                       "tm": None, "elision": None, "check": "sums agree"}
                if v in ("stm", "norec"):
                    row["tm"] = {"backend": v, "commits": 1000, "solo": 1000 // t,
                                 "aborts_by_cause": {"conflict": 10 * t, "capacity": 5}}
                if v.startswith("elide"):
                    row["elision"] = {"commits": 500, "aborts_by_cause": {"busy": 50, "conflict": 0}}
                if v == "ctl":
                    row["granularity"] = 4
                rows.append(row)
    preload = os.environ.get("LD_PRELOAD")
    doc = {"context": {"host": "fakehost", "cpu_model": "fake"}, "workload": NAME,
           "malloc_provider": preload or "/lib/x86_64-linux-gnu/libc.so.6", "rows": rows}
    json.dump(doc, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())

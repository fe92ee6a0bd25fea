# SPDX-License-Identifier: MIT
"""An allocation-heavy threaded Python workload with deterministic output.

Worker threads build dicts, lists, strings and bytes of every size, and
hand them to a merging thread through a queue, so objects are allocated by
one thread and freed by another; big lists and strings reach the
allocator's large-block path.  Run bare and under an hpsync allocator, its
stdout must be identical.
"""
import hashlib
import json
import queue
import random
import threading

N_WORKERS = 4
N_CHUNKS = 24
WORDS_PER_CHUNK = 2500

chunks: "queue.Queue[int | None]" = queue.Queue()
results: "queue.Queue[tuple[int, dict[str, list[int]], str, bytes]]" = queue.Queue(maxsize=4)


def build(chunk: int) -> tuple[int, dict[str, list[int]], str, bytes]:
    rng = random.Random(chunk)            # per chunk: the same whatever thread runs it
    index: dict[str, list[int]] = {}
    parts = []
    for pos in range(WORDS_PER_CHUNK):
        word = "".join(chr(97 + rng.randrange(26)) for _ in range(1 + rng.randrange(12)))
        index.setdefault(word, []).append(pos)
        parts.append(word * (1 + pos % 7))
    text = "-".join(parts)                 # a large string
    blob = rng.randbytes(1 + rng.randrange(400000))
    return chunk, index, text, blob


def worker() -> None:
    while (chunk := chunks.get()) is not None:
        results.put(build(chunk))


def main() -> None:
    for c in range(N_CHUNKS):
        chunks.put(c)
    for _ in range(N_WORKERS):
        chunks.put(None)
    threads = [threading.Thread(target=worker) for _ in range(N_WORKERS)]
    for t in threads:
        t.start()
    merged: dict[str, int] = {}
    digests: dict[int, str] = {}
    for _ in range(N_CHUNKS):
        chunk, index, text, blob = results.get()
        for word, positions in index.items():
            merged[word] = merged.get(word, 0) + len(positions)
        h = hashlib.sha256(text.encode())
        h.update(blob)
        h.update(json.dumps(index, sort_keys=True).encode())
        digests[chunk] = h.hexdigest()[:16]
    for t in threads:
        t.join()
    for chunk in sorted(digests):
        print(f"chunk {chunk:2d}: {digests[chunk]}")
    top = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    print(f"{len(merged)} distinct words; most frequent: {top}")


if __name__ == "__main__":
    main()

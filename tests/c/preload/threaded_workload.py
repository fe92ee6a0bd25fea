# SPDX-License-Identifier: MIT
"""A threaded Python workload with deterministic output.

Run bare and under libhpsync-preload.so, its stdout must be identical: the
interpreter's GIL (a pthread mutex + condvar), threading.Lock/RLock,
Condition, Event, Semaphore and queue.Queue all sit on the interposed calls.
"""
import queue
import threading

N_WORKERS = 4
N_TASKS = 200
SPAN = 5000

tasks: "queue.Queue[tuple[int, int] | None]" = queue.Queue(maxsize=8)
results: dict[int, int] = {}
results_lock = threading.Lock()
counter_lock = threading.RLock()
counter = 0
done = threading.Condition()
finished = 0
gate = threading.Semaphore(2)
start = threading.Event()


def worker() -> None:
    global counter, finished
    start.wait()
    while True:
        item = tasks.get()
        if item is None:
            tasks.task_done()
            break
        idx, lo = item
        with gate:
            total = sum(i * i % 7919 for i in range(lo, lo + SPAN))
        with results_lock:
            results[idx] = total
        with counter_lock:
            with counter_lock:          # RLock: re-entered on purpose
                counter += 1
        tasks.task_done()
    with done:
        finished += 1
        done.notify_all()


def main() -> None:
    threads = [threading.Thread(target=worker) for _ in range(N_WORKERS)]
    for t in threads:
        t.start()
    start.set()
    for i in range(N_TASKS):
        tasks.put((i, i * SPAN))
    for _ in threads:
        tasks.put(None)
    tasks.join()
    with done:
        while finished < N_WORKERS:
            done.wait(timeout=30)
    for t in threads:
        t.join()
    for i in range(N_TASKS):
        print(f"range {i:3d} [{i * SPAN}, {(i + 1) * SPAN}): {results[i]}")
    print(f"tasks {counter}, grand total {sum(results.values())}")


if __name__ == "__main__":
    main()

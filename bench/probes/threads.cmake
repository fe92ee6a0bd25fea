# SPDX-License-Identifier: MIT
# Threads, locks, condition variables, atomics: one program per probe, each
# printing one JSON document (see docs/characterize.md).  The uncontended
# lock cost ("mutex") is hps-bench-locks --probe (bench/locks/), so it is
# measured once.  handoff links the static library, so hps_lock_t's
# out-of-line slow paths are there, and shares the lock table in
# bench/common/probe_locks.c with hps-bench-locks.
foreach(probe create handoff condvar cas)
  add_executable(hps-probe-${probe} ${CMAKE_CURRENT_SOURCE_DIR}/${probe}.c)
  target_link_libraries(hps-probe-${probe} PRIVATE hps_bench_common Threads::Threads)
endforeach()
target_sources(hps-probe-handoff PRIVATE ${CMAKE_SOURCE_DIR}/bench/common/probe_locks.c)
target_link_libraries(hps-probe-handoff PRIVATE hpsync_static)

# SPDX-License-Identifier: MIT
# Threads, locks, condition variables, atomics: one program per probe, each
# printing one JSON document (see docs/characterize.md).  mutex and handoff
# link the static library, so hps_lock_t's out-of-line slow paths are there,
# and share the lock table in bench/common/probe_locks.c.
foreach(probe create mutex handoff condvar cas)
  add_executable(hps-probe-${probe} ${CMAKE_CURRENT_SOURCE_DIR}/${probe}.c)
  target_link_libraries(hps-probe-${probe} PRIVATE hps_bench_common Threads::Threads)
endforeach()
foreach(probe mutex handoff)
  target_sources(hps-probe-${probe} PRIVATE ${CMAKE_SOURCE_DIR}/bench/common/probe_locks.c)
  target_link_libraries(hps-probe-${probe} PRIVATE hpsync_static)
endforeach()

# SPDX-License-Identifier: MIT
# Threads, locks, condition variables, atomics: one program per probe, each
# printing one JSON document (see docs/characterize.md).  mutex and handoff
# link the static library, so hps_lock_t's out-of-line slow paths are there.
foreach(probe create mutex handoff condvar cas)
  add_executable(hps-probe-${probe} ${CMAKE_CURRENT_SOURCE_DIR}/${probe}.c)
  target_link_libraries(hps-probe-${probe} PRIVATE hps_bench_common Threads::Threads)
endforeach()
target_link_libraries(hps-probe-mutex PRIVATE hpsync_static)
target_link_libraries(hps-probe-handoff PRIVATE hpsync_static)

# SPDX-License-Identifier: MIT
# Topology probes: core-to-core latency and the thread-pool experiment.
# (Included from bench/probes/CMakeLists.txt; paths relative to this dir.)
add_executable(hps-probe-c2c ${CMAKE_CURRENT_LIST_DIR}/c2c.c)
target_include_directories(hps-probe-c2c PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(hps-probe-c2c PRIVATE hps_bench_common Threads::Threads m)

add_executable(hps-probe-pools
  ${CMAKE_CURRENT_LIST_DIR}/pools/main.c
  ${CMAKE_CURRENT_LIST_DIR}/pools/pool.c
  ${CMAKE_CURRENT_LIST_DIR}/pools/pool_mutex.c
  ${CMAKE_CURRENT_LIST_DIR}/pools/pool_lockfree.c
  ${CMAKE_CURRENT_LIST_DIR}/pools/pool_stealing.c
  ${CMAKE_CURRENT_LIST_DIR}/pools/work.c
  ${CMAKE_CURRENT_LIST_DIR}/pools/work_fft.c
  ${CMAKE_CURRENT_LIST_DIR}/pools/work_matmul.c)
target_include_directories(hps-probe-pools PRIVATE
  ${CMAKE_SOURCE_DIR}/include ${CMAKE_CURRENT_LIST_DIR}/pools)
target_link_libraries(hps-probe-pools PRIVATE hps_bench_common Threads::Threads m)

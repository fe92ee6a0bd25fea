# SPDX-License-Identifier: MIT
# Compute, memory bandwidth, timer and TLB probes (docs/characterize.md).  Each
# prints one JSON document in the characterization schema.
foreach(_hps_probe compute membw timer tlb)
  add_executable(hps-probe-${_hps_probe} ${CMAKE_CURRENT_LIST_DIR}/${_hps_probe}.c)
  target_link_libraries(hps-probe-${_hps_probe} PRIVATE hps_bench_common Threads::Threads)
endforeach()

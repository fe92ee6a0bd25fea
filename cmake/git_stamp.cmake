# SPDX-License-Identifier: MIT
# Run at every build (bench/CMakeLists.txt, hps_git_stamp): writes OUT with
# HPS_GIT_COMMIT, HEAD's short hash, "-dirty" when tracked files differ
# from it.  The header is replaced only when that changes, so an unchanged
# stamp rebuilds nothing; a commit, a checkout or the first edit after
# them rebuilds the bench programs' context block.  (A configure-time hash
# named the commit before the edits a build was made from.)
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit)
  set(commit "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE changed ERROR_QUIET)
  if(changed)
    string(APPEND commit "-dirty")
  endif()
endif()
file(WRITE ${OUT}.tmp "#define HPS_GIT_COMMIT \"${commit}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)

#!/bin/sh
# SPDX-License-Identifier: MIT
# no_module.sh absent|broken LIBRARY RUN_JOB ARGS...
# Runs RUN_JOB ARGS (run_job.sh and its arguments) with a copy of
# libhpsync-shmem (LIBRARY) alone in a directory that LD_LIBRARY_PATH puts
# first, so the library looks for its libfabric transport module there:
# "absent" leaves the module out, "broken" puts a file there that is no
# shared object.  run_job.sh checks the one error line and the status.
mode=$1 lib=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$lib" "$dir/" || exit 1
[ "$mode" = broken ] && echo "not a shared object" >"$dir/libhpsync-shmem-ofi.so"
LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"

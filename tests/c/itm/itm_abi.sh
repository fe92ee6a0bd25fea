#!/bin/sh
# SPDX-License-Identifier: MIT
# itm_abi.sh LIB: LIB exports every symbol the installed libitm.so.1 exports,
# with the same symbol version, and nothing else.
set -u
ref=$(gcc -print-file-name=libitm.so.1)
case $ref in
/*) ;;
*) echo "itm_abi: no libitm.so.1 installed: skipped"; exit 77 ;;
esac
syms() { objdump -T "$1" | awk 'NF >= 6 && $0 !~ /\*UND\*/ && $NF !~ /^LIBITM/ { print $(NF-1), $NF }' | sort; }
tmp=${TMPDIR:-/tmp}/itm_abi.$$
trap 'rm -f "$tmp".*' EXIT
syms "$ref" >"$tmp.want"
syms "$1" >"$tmp.have"
if ! cmp -s "$tmp.want" "$tmp.have"; then
    echo "itm_abi: FAIL: exports differ from $ref (< libitm, > ours):"
    diff "$tmp.want" "$tmp.have"
    exit 1
fi
echo "itm_abi: $(wc -l <"$tmp.have") symbols, as $ref"

#!/bin/sh
# SPDX-License-Identifier: MIT
# if_provider.sh PROVIDER COMMAND...: run COMMAND when libfabric offers
# PROVIDER here, else exit 77 (the tests' "skipped").
prov=$1
shift
fi_info -p "$prov" >/dev/null 2>&1 || exit 77
exec "$@"

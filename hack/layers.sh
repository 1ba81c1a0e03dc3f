#!/usr/bin/env bash
# The pure layers (src/plan, src/desired) decide; they do no I/O and include no
# header of the clients, the reconcilers or the agents (docs/internals.md, "Layers").
# Prints what breaks the rule and exits 1; silent and 0 when the rule holds.
set -u
cd "$(dirname "$0")/.."
out=$(
	grep -rn '#include "\(kube\|controller\|obs\|agent\|plugin\)/' src/plan src/desired
	grep -rn '#include "etcd/' src/plan src/desired | grep -v 'etcd/types.h'
	grep -rn '#include "snapshot/' src/plan src/desired | grep -v 'snapshot/contract.h'
	grep -rn 'time(NULL)\|clock_gettime\|fopen\|curl_' src/plan src/desired
)
if [ -n "$out" ]; then
	echo "hack/layers.sh: the pure layers must not do this (docs/internals.md, Layers):" >&2
	echo "$out" >&2
	exit 1
fi

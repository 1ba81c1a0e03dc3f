#!/usr/bin/env bash
# Build every pinned third-party tool (cached; see hack/tools/build.sh) and link
# the binaries the developer uses into .local-cluster/bin.
#
#   hack/tools.sh all          build everything the local cluster and tests use
#   hack/tools.sh <tool>...    build only these
#
# The builds run in parallel, TOOLS_JOBS at a time (default 3): a Go build
# spends much of its time downloading modules and linking on one core, so
# overlapping them shortens a cold start even on two cores. Each build's output
# goes to .local-cluster/tools-<tool>.log; a failure prints that log.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TOOLS="kubernetes cert-manager kube-rbac-proxy etcd-3.6.16 etcd-3.6.11 etcd-3.5.35 etcd-3.7.3 coredns helm chainsaw minio registry kube-router lincheck prometheus prometheus-server prometheus-operator"
if [ "${1:-all}" = all ]; then set -- $ALL_TOOLS; fi
jobs=${TOOLS_JOBS:-3}

mkdir -p .local-cluster/bin
declare -A pids=()
fail=0
reap() { # reap <tool>: wait for its build, report a failure
	if ! wait "${pids[$1]}"; then
		echo "tools.sh: building $1 failed:" >&2
		tail -n 40 ".local-cluster/tools-$1.log" >&2 || true
		fail=1
	fi
	unset "pids[$1]"
}
for t in "$@"; do
	while [ "${#pids[@]}" -ge "$jobs" ]; do
		wait -n || true
		for p in "${!pids[@]}"; do
			kill -0 "${pids[$p]}" 2>/dev/null || reap "$p"
		done
	done
	hack/tools/build.sh "$t" >".local-cluster/tools-$t.log" 2>&1 &
	pids[$t]=$!
done
for p in "${!pids[@]}"; do reap "$p"; done
[ "$fail" = 0 ] || exit 1

for t in "$@"; do
	bin=$(hack/tools/build.sh "$t")
	case $t in
	kubernetes) ln -sf "$bin/kubectl" .local-cluster/bin/kubectl ;;
	etcd-3.6.16) for b in etcd etcdctl etcdutl; do ln -sf "$bin/$b" .local-cluster/bin/$b; done ;;
	helm | chainsaw | coredns | minio | registry) ln -sf "$bin/$t" .local-cluster/bin/$t ;;
	prometheus) ln -sf "$bin/promtool" .local-cluster/bin/promtool ;;
	esac
done

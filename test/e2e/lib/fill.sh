#!/usr/bin/env bash
# fill.sh <cluster> <MiB>: writes <MiB> keys big-<i> of 1 MiB each (random base64 text, so
# the database does not compress) into the first member of <cluster>, through a
# kubectl port-forward to its client port and the host's etcdctl (hack/tools/build.sh), then
# prints the member's database size in bytes. Keeps etcd's 1.5 MiB request limit.
#
# fill.sh <cluster> <MiB> overwrite <bytes>: overwrites the one key big-0 instead (the old
# values stay as history, which a compaction frees), at most <MiB> times, and stops as soon as
# the member's database size reaches <bytes>.
#
# fill.sh <cluster> <n> live <bytes>: writes up to <n> distinct keys live-<i> of 256 KiB each
# (live data, which no compaction frees), stopping as soon as the database size reaches
# <bytes>: the small values land just past a threshold without jumping to the quota.
set -euo pipefail

ns=${NAMESPACE:?NAMESPACE must be set (Chainsaw sets it)}
cluster=$1
mib=$2
mode=${3:-}
stop=${4:-0}
root=$(cd "$(dirname "$0")/../../.." && pwd)
etcdctl=$("$root/hack/tools/build.sh" etcd-3.6.11)/etcdctl
pod=$(kubectl -n "$ns" get pods -l "etcd-operator.cozystack.io/cluster=$cluster" -o jsonpath='{.items[0].metadata.name}')
value=$(mktemp)
# shellcheck source=forward.sh
. "$(dirname "$0")/forward.sh"
etcd_ready() { "$etcdctl" --endpoints "$FWD_URL" endpoint health; }
trap 'forward_stop; rm -f "$value"' EXIT
forward_start "$ns" "pod/$pod" 2379 etcd_ready
ep=$FWD_URL
if [ "$mode" = live ]; then
	head -c $((192 * 1024)) /dev/urandom | base64 -w0 >"$value"
else
	head -c $((768 * 1024)) /dev/urandom | base64 -w0 >"$value"
fi
db_size() { "$etcdctl" --endpoints "$ep" endpoint status -w json | jq '.[0].Status.dbSize'; }
for ((i = 1; i <= mib; i++)); do
	if [ "$mode" = live ]; then
		"$etcdctl" --endpoints "$ep" --command-timeout 30s put "live-$i" <"$value" >/dev/null
		[ "$(db_size)" -lt "$stop" ] || break
	elif [ "$mode" = overwrite ]; then
		"$etcdctl" --endpoints "$ep" --command-timeout 30s put big-0 <"$value" >/dev/null
		[ "$(db_size)" -lt "$stop" ] || break
	else
		"$etcdctl" --endpoints "$ep" --command-timeout 30s put "big-$i" <"$value" >/dev/null
	fi
done
"$etcdctl" --endpoints "$ep" endpoint status -w json | jq '.[0].Status.dbSize'

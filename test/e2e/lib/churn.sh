#!/usr/bin/env bash
# churn.sh <cluster> <MiB> [fill]: through a kubectl port-forward to the first member of
# <cluster> and the host's etcdctl (hack/tools/build.sh):
#   default  writes <MiB> keys churn-<i> of about 1 MiB each, deletes them all and compacts
#            to the current revision, leaving <MiB> of reclaimable space on every member;
#   fill     overwrites the one key churn-fill with 1 MiB values until etcd refuses the write
#            (NOSPACE; at most <MiB> writes) and prints "nospace after <n> writes".
# Keeps etcd's 1.5 MiB request limit.
set -euo pipefail

ns=${NAMESPACE:?NAMESPACE must be set (Chainsaw sets it)}
cluster=$1
mib=$2
mode=${3:-churn}
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
head -c $((768 * 1024)) /dev/urandom | base64 -w0 >"$value"
if [ "$mode" = fill ]; then
	for ((i = 1; i <= mib; i++)); do
		if ! out=$("$etcdctl" --endpoints "$ep" --command-timeout 30s put churn-fill <"$value" 2>&1); then
			echo "$out" >&2
			case "$out" in *"database space exceeded"*) echo "nospace after $i writes"; exit 0 ;; esac
			exit 1
		fi
	done
	echo "no NOSPACE after $mib writes"
	exit 1
fi
for ((i = 1; i <= mib; i++)); do
	"$etcdctl" --endpoints "$ep" --command-timeout 30s put "churn-$i" <"$value" >/dev/null
done
"$etcdctl" --endpoints "$ep" del --prefix churn- >/dev/null
rev=$("$etcdctl" --endpoints "$ep" endpoint status -w json | jq '.[0].Status.header.revision')
"$etcdctl" --endpoints "$ep" compact --physical "$rev" >/dev/null
echo "churned $mib MiB, compacted at $rev"

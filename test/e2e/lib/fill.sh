#!/usr/bin/env bash
# fill.sh <cluster> <MiB>: writes <MiB> keys big-<i> of 1 MiB each (random base64 text, so
# the database does not compress) into the first member of <cluster>, through a
# kubectl port-forward to its client port and the host's etcdctl (hack/tools/build.sh), then
# prints the member's database size in bytes. Keeps etcd's 1.5 MiB request limit.
set -euo pipefail

ns=${NAMESPACE:?NAMESPACE must be set (Chainsaw sets it)}
cluster=$1
mib=$2
root=$(cd "$(dirname "$0")/../../.." && pwd)
etcdctl=$("$root/hack/tools/build.sh" etcd-3.6.11)/etcdctl
pod=$(kubectl -n "$ns" get pods -l "etcd-operator.cozystack.io/cluster=$cluster" -o jsonpath='{.items[0].metadata.name}')
port=$((20000 + RANDOM % 20000))
value=$(mktemp)
kubectl -n "$ns" port-forward --address 127.0.0.1 "pod/$pod" "$port:2379" >/dev/null 2>&1 &
pf=$!
trap 'kill $pf 2>/dev/null || true; rm -f "$value"' EXIT
ep=http://127.0.0.1:$port
for _ in $(seq 1 50); do
	"$etcdctl" --endpoints "$ep" endpoint health >/dev/null 2>&1 && break
	sleep 0.2
done
head -c $((768 * 1024)) /dev/urandom | base64 -w0 >"$value"
for ((i = 1; i <= mib; i++)); do
	"$etcdctl" --endpoints "$ep" --command-timeout 30s put "big-$i" <"$value" >/dev/null
done
"$etcdctl" --endpoints "$ep" endpoint status -w json | jq '.[0].Status.dbSize'

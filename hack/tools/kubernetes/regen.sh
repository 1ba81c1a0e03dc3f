#!/usr/bin/env bash
# Regenerate this module for another Kubernetes release:
#   hack/tools/kubernetes/regen.sh 1.34.12
# The published k8s.io/kubernetes go.mod requires its staging modules at
# v0.0.0 and maps them to ./staging, which only works inside its own repo; a
# consumer must pin each staging module to v0.<minor>.<patch> instead. The
# list and the go/godebug lines are taken from the published go.mod itself.
set -euo pipefail
V=${1:?usage: regen.sh <version, e.g. 1.34.12>}
cd "$(dirname "$0")"
export GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GOSUMDB=off
gomod=$(cd /tmp && go mod download -json "k8s.io/kubernetes@v$V" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
[ -f "$gomod" ] || { echo "cannot download k8s.io/kubernetes@v$V" >&2; exit 1; }
rm -f go.mod go.sum
go mod init etcd-operator.local/hack/tools/kubernetes >/dev/null 2>&1
sed -i "1i // version: v$V" go.mod
go mod edit -go="$(sed -n 's/^go //p' "$gomod")" -require="k8s.io/kubernetes@v$V"
godebug=$(sed -n 's/^godebug //p' "$gomod")
[ -n "$godebug" ] && go mod edit -godebug="$godebug"
for m in $(sed -n 's|^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/.*|\1|p' "$gomod"); do
	go mod edit -replace="$m=$m@v0.${V#1.}"
done
go mod tidy
echo "pinned k8s.io/kubernetes v$V with $(grep -c '=> k8s.io' go.mod) staging replaces"

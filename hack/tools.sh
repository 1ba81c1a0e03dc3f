#!/usr/bin/env bash
# Build every pinned third-party tool (cached; see hack/tools/build.sh) and link
# the binaries the developer uses into .local-cluster/bin.
#
#   hack/tools.sh all          build everything the local cluster and tests use
#   hack/tools.sh <tool>...    build only these
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_TOOLS="kubernetes etcd-3.6.16 etcd-3.6.11 etcd-3.5.35 coredns helm chainsaw minio"
if [ "${1:-all}" = all ]; then set -- $ALL_TOOLS; fi

mkdir -p .local-cluster/bin
for t in "$@"; do
	bin=$(hack/tools/build.sh "$t")
	case $t in
	kubernetes) ln -sf "$bin/kubectl" .local-cluster/bin/kubectl ;;
	etcd-3.6.16) for b in etcd etcdctl etcdutl; do ln -sf "$bin/$b" .local-cluster/bin/$b; done ;;
	helm | chainsaw | coredns | minio) ln -sf "$bin/$t" .local-cluster/bin/$t ;;
	esac
done

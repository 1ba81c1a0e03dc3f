#!/usr/bin/env bash
# The README's first command (make demo): a local Kubernetes, the operator from
# its own chart and image, and an example EtcdCluster, printed once Available.
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

EXAMPLE=${EXAMPLE:-$REPO/examples/etcdcluster-1.yaml}
K8S_BIN=$(tool_bin kubernetes)
cluster_lock

"$REPO/hack/cluster.sh" up
"$REPO/hack/images.sh" etcd
"$REPO/hack/deploy-operator.sh"

ns=$(kc create --dry-run=client -o jsonpath='{.metadata.namespace}' -f "$EXAMPLE")
name=$(kc create --dry-run=client -o jsonpath='{.metadata.name}' -f "$EXAMPLE")
ns=${ns:-default}
log "applying $EXAMPLE ($ns/$name)"
kc apply -f "$EXAMPLE" >/dev/null
log "waiting for EtcdCluster $ns/$name to be Available"
kc -n "$ns" wait "etcdcluster/$name" --for=condition=Available --timeout=5m >/dev/null ||
	die "EtcdCluster $ns/$name is not Available; see: kubectl -n $ns describe etcdcluster $name"
kc -n "$ns" get etcdcluster "$name" -o wide
pod=$(kc -n "$ns" get pods -l "etcd-operator.cozystack.io/cluster=$name" -o jsonpath='{.items[0].metadata.name}')
kc -n "$ns" exec "$pod" -- etcdctl member list -w table
cat <<MSG

The local cluster is up. Try:
  export KUBECONFIG=$KUBECONFIG_FILE PATH=$LC/bin:\$PATH
  kubectl get etcdclusters -A
  kubectl -n $ns exec $pod -- etcdctl put hello world
MSG

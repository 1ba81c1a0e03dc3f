#!/usr/bin/env bash
# Install (or upgrade) the operator on the local cluster from its own chart and
# its own image, built from the Dockerfile (hack/operator-image.sh).
#
#   hack/deploy-operator.sh            build + import the image, helm upgrade --install
#   hack/deploy-operator.sh uninstall  helm uninstall (the CRDs stay)
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KUBECONFIG_FILE" ] || die "no local cluster; run 'make cluster-up'"
# IMG=<repo>:<tag> installs an image that is already in the cluster's
# containerd instead of building one.
REF=${IMG:-$(operator_image_ref)}
IMAGE_REPO=${REF%:*}
TAG=${REF##*:}
NAMESPACE=${OPERATOR_NAMESPACE:-etcd-operator-system}
HELM=$(tool_bin helm)/helm
K8S_BIN=$(tool_bin kubernetes)
cluster_lock

if [ "${1:-}" = uninstall ]; then
	"$HELM" --kubeconfig "$KUBECONFIG_FILE" uninstall etcd-operator --namespace "$NAMESPACE"
	exit 0
fi
[ -n "${IMG:-}" ] || "$REPO/hack/operator-image.sh" "$REF"
# The chart's defaults, kube-rbac-proxy included: its image is built from the
# pinned module and imported under the chart's reference (a cache hit after the
# first time), so the kubelet finds it without a pull.
"$REPO/hack/images.sh" kube-rbac-proxy

log "helm upgrade --install etcd-operator ($IMAGE_REPO:$TAG) in $NAMESPACE"
"$HELM" --kubeconfig "$KUBECONFIG_FILE" upgrade --install etcd-operator "$REPO/charts/etcd-operator" \
	--namespace "$NAMESPACE" --create-namespace \
	--set image.repository="$IMAGE_REPO" --set image.tag="$TAG" --set image.pullPolicy=Never \
	--wait --timeout 3m "$@" >/dev/null ||
	{
		kc -n "$NAMESPACE" get pods -o wide >&2 || true
		kc -n "$NAMESPACE" logs deploy/etcd-operator --tail 50 >&2 || true
		die "the operator did not become ready"
	}
kc -n "$NAMESPACE" rollout status deploy/etcd-operator --timeout 2m >/dev/null
log "operator ready: $(kc -n "$NAMESPACE" get deploy etcd-operator -o jsonpath='{.spec.template.spec.containers[0].image}')"

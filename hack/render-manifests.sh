#!/usr/bin/env bash
# Render the Helm chart into plain manifests for `kubectl apply` users:
#   deploy/manifests.yaml   everything (Namespace, CRDs, RBAC, Deployment, Service)
#
#   hack/render-manifests.sh [--check] [helm template flags...]
#
# The helm binary comes from $HELM, else from hack/tools/build.sh helm (pinned, cached).
# --check renders to a temporary file and fails when deploy/manifests.yaml is stale.
# Extra flags go to `helm template`, e.g. --set image.tag=v0.2.0.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
check=false
if [ "${1:-}" = --check ]; then
	check=true
	shift
fi

if [ -z "${HELM:-}" ]; then
	HELM=$("$root/hack/tools/build.sh" helm)/helm
fi

release=${RELEASE:-etcd-operator}
namespace=${NAMESPACE:-etcd-operator-system}
out=$root/deploy/manifests.yaml
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

"$root/hack/sync-crds.sh" --check

{
	echo "# Rendered from charts/etcd-operator by hack/render-manifests.sh; do not edit."
	echo "# Apply with: kubectl apply --server-side -f deploy/manifests.yaml"
	"$HELM" template "$release" "$root/charts/etcd-operator" \
		--namespace "$namespace" --set namespace.create=true "$@"
} >"$tmp"

# The chart must also render with every monitoring object on (docs/monitoring.md); that
# rendering is not written anywhere, only checked (hack/rules-test.sh tests its rules).
"$HELM" template "$release" "$root/charts/etcd-operator" --namespace "$namespace" \
	--set monitoring.podMonitor.enabled=true,monitoring.prometheusRule.enabled=true \
	--set monitoring.dashboard.enabled=true,metrics.serviceMonitor.enabled=true \
	--set kubeRbacProxy.tls.certManager.enabled=true \
	--set kubeRbacProxy.tls.certManager.issuerRef.name=metrics-issuer "$@" >/dev/null

if $check; then
	if ! cmp -s "$tmp" "$out"; then
		echo "deploy/manifests.yaml is stale: run hack/render-manifests.sh" >&2
		exit 1
	fi
	exit 0
fi
mkdir -p "$(dirname "$out")"
cp "$tmp" "$out"
echo "wrote deploy/manifests.yaml"

#!/usr/bin/env bash
# Install cert-manager (controller, webhook, cainjector) in the local cluster,
# as Pods from images built here out of the pinned module hack/tools/cert-manager
# and its own Helm chart and CRDs (from the same module). Idempotent: when the
# pinned version already runs and its webhook answers, it only says so.
#
#   hack/cert-manager.sh           install or check (called by `cluster.sh up`)
#   hack/cert-manager.sh status    what runs
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KUBECONFIG_FILE" ] || die "no local cluster; run 'make cluster-up'"
K8S_BIN=$(tool_bin kubernetes)
CM_NS=cert-manager
CM_DEPLOYS="cert-manager cert-manager-webhook cert-manager-cainjector"
CM_VERSION=$(sed -n 's,^// version: ,,p' "$REPO/hack/tools/cert-manager/go.mod" | head -n1)

running_version() {
	kc -n "$CM_NS" get deploy cert-manager -o jsonpath='{.spec.template.spec.containers[0].image}' 2>/dev/null |
		sed 's/.*://'
}

all_available() {
	local d
	for d in $CM_DEPLOYS; do
		[ "$(kc -n "$CM_NS" get deploy "$d" -o jsonpath='{.status.availableReplicas}' 2>/dev/null)" = 1 ] || return 1
	done
}

# Every CRD of the chart is there (a test or a hand may have deleted one: Helm puts it back).
crds_present() {
	local f name
	for f in "$(tool_bin cert-manager)"/../deploy/crds/crd-*.yaml; do
		name=$(sed -n 's/^  name: //p' "$f" | head -n1)
		kc get crd "$name" >/dev/null 2>&1 || return 1
	done
}

# The webhook answers and its CA bundle is injected: a server-side dry run of an
# Issuer passes the validating and mutating webhooks.
webhook_answers() {
	kc create --dry-run=server -o name -f - >/dev/null 2>&1 <<YAML
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: webhook-probe, namespace: $CM_NS}
spec: {selfSigned: {}}
YAML
}

# The chart as cert-manager's release process assembles it (make/manifests.mk):
# Chart.yaml from its template with the version set, the CRDs concatenated into
# templates/crds.yaml behind installCRDs.
assemble_chart() {
	local src=$1 out=$2 f
	cp -r "$src/charts/cert-manager" "$out"
	chmod -R u+w "$out"
	sed -e "s/^version: .*/version: $CM_VERSION/" -e "s/^appVersion: .*/appVersion: $CM_VERSION/" \
		-e 's/"{{IS_PRERELEASE}}"/"false"/' "$out/Chart.template.yaml" >"$out/Chart.yaml"
	rm -f "$out/Chart.template.yaml" "$out/README.template.md"
	{
		echo '{{- if .Values.installCRDs }}'
		for f in "$src"/crds/crd-*.yaml; do
			echo '---'
			cat "$f"
		done
		echo '{{- end }}'
	} >"$out/templates/crds.yaml"
}

install() {
	local bin dir helm
	if [ "$(running_version)" = "$CM_VERSION" ] && all_available && crds_present && webhook_answers; then
		log "cert-manager $CM_VERSION already runs in namespace $CM_NS"
		return 0
	fi
	bin=$(tool_bin cert-manager)
	helm=$(tool_bin helm)/helm
	"$REPO/hack/images.sh" cert-manager
	dir=$(mktemp -d)
	assemble_chart "$bin/../deploy" "$dir/cert-manager"
	log "helm upgrade --install cert-manager $CM_VERSION in $CM_NS"
	# startupapicheck needs the cmctl image, which is not built here; the
	# webhook check below does its job.
	"$helm" --kubeconfig "$KUBECONFIG_FILE" upgrade --install cert-manager "$dir/cert-manager" \
		--namespace "$CM_NS" --create-namespace \
		--set installCRDs=true --set startupapicheck.enabled=false \
		--wait --timeout 5m >/dev/null ||
		{
			kc -n "$CM_NS" get pods -o wide >&2 || true
			rm -rf "$dir"
			die "cert-manager did not become ready"
		}
	rm -rf "$dir"
	wait_for 180 "the cert-manager webhook (CA injected, answering the apiserver)" webhook_answers
	log "cert-manager $CM_VERSION ready"
}

case ${1:-install} in
install) install ;;
status)
	kc -n "$CM_NS" get deploy -o wide
	webhook_answers && echo "webhook: answers" || echo "webhook: not answering"
	;;
*)
	echo "usage: $0 [install|status]" >&2
	exit 2
	;;
esac

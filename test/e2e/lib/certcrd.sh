#!/usr/bin/env bash
# Takes cert-manager's Certificate CRD (certificates.cert-manager.io) away and puts it back,
# for the case that proves CertManagerNotInstalled end to end. Only that one CRD goes: the
# operator's discovery check asks whether cert-manager.io/v1 serves `certificates`, so the
# Issuers, ClusterIssuers and the ACME CRDs can stay (and other namespaces' Issuers with them).
# Deleting a CRD deletes every object of its kind in every namespace, so the caller must be a
# `concurrent: false` test, run under hack/e2e.sh's cluster lock.
#
#   certcrd.sh remove DIR    save the live CRD (as Helm installed it, labels and annotations
#                            kept) to DIR/crd.json, delete it, wait until discovery drops it
#   certcrd.sh restore DIR   idempotent: recreate it from DIR/crd.json (or, with no saved copy,
#                            let hack/cert-manager.sh reinstall the chart), then wait until it
#                            is Established, listed by discovery, the webhook admits a
#                            Certificate and the three cert-manager Deployments are available
set -euo pipefail
cmd=$1 dir=$2
repo=$(cd "$(dirname "$0")/../../.." && pwd)
crd=certificates.cert-manager.io

served() {
	kubectl get --raw /apis/cert-manager.io/v1 2>/dev/null |
		jq -e '[.resources[].name] | index("certificates") != null' >/dev/null
}

gone() { ! served; }

# The webhook validates and mutates Certificates: a server-side dry run goes through it.
admitted() {
	kubectl create --dry-run=server -o name -f - >/dev/null 2>&1 <<YAML
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: webhook-probe, namespace: cert-manager}
spec:
  secretName: webhook-probe
  commonName: webhook-probe
  issuerRef: {name: none, kind: Issuer}
YAML
}

wait_until() {
	local secs=$1 what=$2 i
	shift 2
	for i in $(seq "$secs"); do
		"$@" && return 0
		sleep 1
	done
	echo "certcrd.sh: $what after ${secs}s" >&2
	return 1
}

case $cmd in
remove)
	mkdir -p "$dir"
	kubectl get crd "$crd" -o json |
		jq 'del(.status, .metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp,
		        .metadata.generation, .metadata.managedFields)' >"$dir/crd.json.tmp"
	mv "$dir/crd.json.tmp" "$dir/crd.json"
	kubectl delete crd "$crd" --timeout=2m >/dev/null
	wait_until 60 "discovery still lists certificates" gone
	echo "removed $crd"
	;;
restore)
	if ! kubectl get crd "$crd" >/dev/null 2>&1; then
		if [ -s "$dir/crd.json" ]; then
			kubectl create -f "$dir/crd.json" >/dev/null
		else
			"$repo/hack/cert-manager.sh" >&2
		fi
		echo "recreated $crd"
	fi
	kubectl wait --for=condition=Established "crd/$crd" --timeout=60s >/dev/null
	wait_until 60 "discovery does not list certificates" served
	wait_until 120 "the cert-manager webhook does not admit a Certificate" admitted
	for d in cert-manager cert-manager-webhook cert-manager-cainjector; do
		kubectl -n cert-manager rollout status "deploy/$d" --timeout=120s >/dev/null
	done
	rm -rf "$dir"
	echo "cert-manager serves certificates"
	;;
*)
	echo "usage: $0 remove|restore DIR" >&2
	exit 2
	;;
esac

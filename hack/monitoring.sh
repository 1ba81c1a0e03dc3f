#!/usr/bin/env bash
# The monitoring bed: prometheus-operator and a Prometheus it runs, in the local cluster,
# both built from their pinned upstream modules (hack/tools/build.sh prometheus-operator,
# prometheus-server), so the chart's PodMonitor, ServiceMonitor and PrometheusRule are read
# by the same code users run. Not part of cluster-up: the e2e case operator/alerts-fire and
# `make monitoring-up` start it.
#
#   hack/monitoring.sh up       CRDs, image, prometheus-operator, Prometheus; waits until ready
#   hack/monitoring.sh down     deletes the namespace and the bed's cluster roles (the CRDs stay)
#   hack/monitoring.sh query Q  runs the PromQL query Q, prints Prometheus' JSON answer
#
# Layout (namespace etcd-operator-monitoring):
# - monitoring.coreos.com CRDs from the module's example/prometheus-operator-crd, applied
#   server-side (they are too big for a client-side apply's annotation);
# - one image, localhost/etcd-operator-dev/prometheus-stack:<hash of the binaries>, holding
#   /bin/prometheus (its entrypoint), /bin/prometheus-config-reloader and
#   /bin/prometheus-operator, built with buildah and imported like the bed's other images;
# - Deployment prometheus-operator (ServiceAccount bound to cluster-admin: a test bed, not a
#   model for production RBAC), watching every namespace;
# - Prometheus "bed": selects every PodMonitor, ServiceMonitor and PrometheusRule in every
#   namespace, evaluates rules every 5 s, no Alertmanager (the ALERTS series is what the
#   tests read). prometheus-operator makes its StatefulSet and config; its config reloader
#   picks up rule and monitor changes.
# Queries go through the API server's service proxy, so nothing depends on reaching Pod IPs.
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KUBECONFIG_FILE" ] || die "no local cluster ($KUBECONFIG_FILE missing); run 'make cluster-up'"
export KUBECONFIG=$KUBECONFIG_FILE
NS=etcd-operator-monitoring
KUBECTL=$(tool_bin kubernetes)/kubectl
k() { "$KUBECTL" "$@"; }

query() { # query <promql>: Prometheus' JSON answer on stdout
	local q
	q=$(jq -rn --arg q "$1" '$q | @uri')
	k get --raw "/api/v1/namespaces/$NS/services/http:prometheus-operated:9090/proxy/api/v1/query?query=$q"
}

stack_image() { # builds and imports the image; prints its reference
	local op srv key r ref
	op=$(tool_bin prometheus-operator)
	srv=$(tool_bin prometheus-server)
	key=$(cat "$srv/prometheus" "$op/prometheus-operator" "$op/prometheus-config-reloader" | sha256sum | cut -c1-12)
	ref=localhost/etcd-operator-dev/prometheus-stack:$key
	r=$(mktemp -d)
	mkdir -p "$r/bin" "$r/prometheus" "$r/etc/prometheus" "$r/tmp"
	chmod 1777 "$r/tmp"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\n' >"$r/etc/group"
	cp "$srv/prometheus" "$op/prometheus-operator" "$op/prometheus-config-reloader" "$r/bin/"
	build_image_from_dir "$ref" "$key" "$r" '["/bin/prometheus"]' 65534:65534 '' >&2
	rm -rf "$r"
	echo "$ref"
}

up() {
	local op img
	op=$(tool_bin prometheus-operator)
	log "monitoring: CRDs (prometheus-operator $(sed -n 's,^// version: ,,p' "$REPO/hack/tools/prometheus-operator/go.mod"))"
	k apply --server-side --force-conflicts -f "$op/../crds/" >/dev/null
	k wait --for=condition=Established --timeout=1m -f "$op/../crds/" >/dev/null
	img=$(stack_image)
	log "monitoring: $img in $NS"
	k apply --server-side --force-conflicts -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $NS}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: prometheus-operator, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: etcd-operator-bed-prometheus-operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: prometheus-operator, namespace: $NS}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: prometheus, namespace: $NS}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: etcd-operator-bed-prometheus}
rules:
- apiGroups: [""]
  resources: [nodes, services, endpoints, pods]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- nonResourceURLs: [/metrics]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: etcd-operator-bed-prometheus}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: etcd-operator-bed-prometheus}
subjects: [{kind: ServiceAccount, name: prometheus, namespace: $NS}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: prometheus-operator, namespace: $NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: prometheus-operator}}
  template:
    metadata: {labels: {app: prometheus-operator}}
    spec:
      serviceAccountName: prometheus-operator
      containers:
      - name: prometheus-operator
        image: $img
        imagePullPolicy: Never
        command: [/bin/prometheus-operator]
        args:
        - --prometheus-config-reloader=$img
        - --prometheus-default-base-image=localhost/etcd-operator-dev/prometheus-stack
        - --log-level=info
        # The chart's ServiceMonitor reads its scrape token from a Secret in the
        # operator's namespace, which the token controller fills after creation.
        - --watch-referenced-objects-in-all-namespaces
        securityContext: {runAsNonRoot: true, runAsUser: 65534, allowPrivilegeEscalation: false}
---
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: bed, namespace: $NS}
spec:
  image: $img
  version: v3.16.0
  replicas: 1
  serviceAccountName: prometheus
  scrapeInterval: 5s
  evaluationInterval: 5s
  podMonitorSelector: {}
  podMonitorNamespaceSelector: {}
  serviceMonitorSelector: {}
  serviceMonitorNamespaceSelector: {}
  ruleSelector: {}
  ruleNamespaceSelector: {}
  securityContext: {runAsNonRoot: true, runAsUser: 65534, fsGroup: 65534}
YAML
	k -n "$NS" rollout status deploy/prometheus-operator --timeout 2m >/dev/null ||
		{ k -n "$NS" logs deploy/prometheus-operator --tail 30 >&2 || true; die "prometheus-operator did not start"; }
	local i
	for i in $(seq 1 90); do
		k -n "$NS" get statefulset prometheus-bed >/dev/null 2>&1 && break
		sleep 2
	done
	k -n "$NS" rollout status statefulset/prometheus-bed --timeout 3m >/dev/null ||
		{ k -n "$NS" get pods -o wide >&2; k -n "$NS" logs deploy/prometheus-operator --tail 30 >&2 || true; die "Prometheus did not start"; }
	for i in $(seq 1 60); do
		[ "$(query up 2>/dev/null | jq -r .status 2>/dev/null)" = success ] && { log "monitoring: Prometheus answers"; return 0; }
		sleep 2
	done
	die "Prometheus does not answer through the service proxy"
}

case ${1:-} in
up) up ;;
down)
	k delete namespace "$NS" --ignore-not-found --wait=true >/dev/null
	k delete clusterrolebinding etcd-operator-bed-prometheus-operator etcd-operator-bed-prometheus \
		--ignore-not-found >/dev/null
	k delete clusterrole etcd-operator-bed-prometheus --ignore-not-found >/dev/null
	;;
query) query "${2:?usage: monitoring.sh query <promql>}" ;;
*) die "usage: monitoring.sh up|down|query <promql>" ;;
esac

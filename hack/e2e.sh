#!/usr/bin/env bash
# Run the end-to-end suites (Chainsaw) against the local cluster.
#
#   hack/e2e.sh [suite-dir...]    default: every suite under test/e2e
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KUBECONFIG_FILE" ] || die "no local cluster ($KUBECONFIG_FILE missing); run 'make cluster-up'"
K8S_BIN=$(tool_bin kubernetes)
cluster_lock
CHAINSAW=$(tool_bin chainsaw)/chainsaw
export KUBECONFIG=$KUBECONFIG_FILE
# Scripts inside the tests call kubectl: use the cluster's own version.
export PATH=$K8S_BIN:$PATH

if [ $# -eq 0 ]; then set -- "$REPO/test/e2e"; fi
# The images the cases run (etcd, the write checker's busybox, MinIO...): a cluster
# started afresh has none of them, and each import is skipped quickly when done.
"$REPO/hack/images.sh"
# Suites under test/e2e/operator need the operator installed from its chart.
for suite in "$@"; do
	case $(realpath "$suite")/ in
	"$REPO/test/e2e/" | "$REPO/test/e2e/operator/"*)
		# cert-manager is part of the bed (cluster.sh up); this is its quick check.
		"$REPO/hack/cert-manager.sh"
		# Minutely snapshot schedules (snapshot-schedule) keep the suite short: the bed
		# lowers the chart's 5-minute minimum to one minute, the shortest cron allows.
		"$REPO/hack/deploy-operator.sh" --set snapshotSchedules.minIntervalSeconds=60
		break
		;;
	esac
done
# Cases that need worker nodes (hack/nodes.sh) carry the label
# etcd-operator.dev/needs-workers: "<n>". They are selected only when the bed
# has that many schedulable workers (Ready, not cordoned, no NoSchedule taint but
# the etcd-operator.dev/faults taint those cases tolerate); otherwise they are
# left out here, and this says so.
workers=$(kc get nodes -l etcd-operator.dev/worker=true -o json | jq '[.items[]
	| select(.spec.unschedulable != true)
	| select([.spec.taints[]? | select(.key != "etcd-operator.dev/faults")
		| select(.effect == "NoSchedule" or .effect == "NoExecute")] | length == 0)
	| select(.status.conditions[]? | .type == "Ready" and .status == "True")] | length')
selector=()
for n in 4 3 2 1; do
	if [ "$workers" -lt "$n" ]; then
		selector=(--selector "etcd-operator.dev/needs-workers notin ($(seq -s, "$n" 9))")
	fi
done
if [ ${#selector[@]} -gt 0 ]; then
	skipped=$({ grep -rl --include chainsaw-test.yaml 'etcd-operator.dev/needs-workers' "$@" 2>/dev/null || true; } | wc -l)
	[ "$skipped" -eq 0 ] ||
		log "not selected: $skipped case(s) that need more schedulable worker nodes than the bed's $workers (EO_WORKERS=3 make cluster-up)"
fi
report=$LC/e2e-report
mkdir -p "$report"
rc=0
"$CHAINSAW" test --no-color --parallel 2 --report-format JSON --report-path "$report" "${selector[@]}" \
	--config "$REPO/test/e2e/chainsaw-config.yaml" "$@" || rc=$?
if [ "$rc" != 0 ]; then
	log "end-to-end tests failed (exit $rc)"
	log "component logs: $LOGS (bundle: make cluster-logs); chainsaw report: $report"
	exit "$rc"
fi
log "end-to-end tests passed"

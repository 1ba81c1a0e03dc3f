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
# etcd-operator.dev/needs-workers: "<n>". They run in a lane of their own, one at
# a time, beside the main lane (two at a time): they inject faults into the
# workers (power loss, drains, partitions), which carry the taint
# etcd-operator.dev/faults that only they tolerate, so the main lane's members,
# on the control-plane node, never see those faults. A case is selected only when
# the bed has that many schedulable workers (Ready, not cordoned, no NoSchedule
# taint but the faults one); otherwise it is left out here, and this says so.
workers=$(kc get nodes -l etcd-operator.dev/worker=true -o json | jq '[.items[]
	| select(.spec.unschedulable != true)
	| select([.spec.taints[]? | select(.key != "etcd-operator.dev/faults")
		| select(.effect == "NoSchedule" or .effect == "NoExecute")] | length == 0)
	| select(.status.conditions[]? | .type == "Ready" and .status == "True")] | length')
fault_cases=$({ grep -rl --include chainsaw-test.yaml 'etcd-operator.dev/needs-workers' "$@" 2>/dev/null || true; } | wc -l)
fault_sel=()
if [ "$workers" -gt 0 ]; then
	fault_sel=("etcd-operator.dev/needs-workers in ($(seq -s, 1 "$workers"))")
fi
if [ "$fault_cases" -gt 0 ]; then
	selected=0
	if [ "$workers" -gt 0 ]; then
		selected=$(grep -rh --include chainsaw-test.yaml 'etcd-operator.dev/needs-workers:' "$@" 2>/dev/null |
			tr -dc '0-9\n' | awk -v w="$workers" '$1 <= w' | wc -l)
	fi
	[ "$selected" -eq "$fault_cases" ] ||
		log "not selected: $((fault_cases - selected)) case(s) that need more schedulable worker nodes than the bed's $workers (make cluster-up starts 4; EO_WORKERS=N)"
fi
report=$LC/e2e-report
mkdir -p "$report"
# This run's reports and lane logs only: hack/e2e-digest.sh reads every one there.
rm -f "$report"/chainsaw-report*.json "$report"/*.log
rc=0 frc=0 fpid=
# Long cases that mostly wait (cron minutes, certificate renewals) and share nothing with the
# fault cases carry etcd-operator.dev/lane: second. They run one at a time after the fault
# cases, in the same background lane, so the main lane's two slots are not held by them.
second_cases=$({ grep -rl --include chainsaw-test.yaml 'etcd-operator.dev/lane: second' "$@" 2>/dev/null || true; } | wc -l)
run_faults=
[ "$fault_cases" -gt 0 ] && [ ${#fault_sel[@]} -gt 0 ] && run_faults=1
if [ -n "$run_faults" ] || [ "$second_cases" -gt 0 ]; then
	log "second lane: ${run_faults:+the needs-workers cases, then }$second_cases long case(s), one at a time, beside the main lane"
	( set -o pipefail
	lane=0
	if [ -n "$run_faults" ]; then
		# Cases labelled etcd-operator.dev/operator-fault act on the shared operator (cut it
		# off); they run last in this lane, when the main lane's cases that restart, scale or
		# freeze that operator (its first, non-concurrent ones) are long done.
		"$CHAINSAW" test --no-color --parallel 1 --report-format JSON --report-path "$report" \
			--report-name chainsaw-report-faults --selector "${fault_sel[0]},etcd-operator.dev/operator-fault!=true" \
			--config "$REPO/test/e2e/chainsaw-config.yaml" "$@" 2>&1 | tee "$report/faults.log" | sed -u 's/^/[faults] /' || lane=$?
		"$CHAINSAW" test --no-color --parallel 1 --report-format JSON --report-path "$report" \
			--report-name chainsaw-report-faults-operator --selector "${fault_sel[0]},etcd-operator.dev/operator-fault=true" \
			--config "$REPO/test/e2e/chainsaw-config.yaml" "$@" 2>&1 | tee "$report/faults-operator.log" | sed -u 's/^/[faults] /' || lane=$?
		# E2E_WORKERS_DOWN=1 (what .ci/run sets): the workers go once the fault cases are
		# done, so that the rest of the run has the two cores without four idle kubelets,
		# kube-proxies and kube-routers reacting to its churn (about 11 % of a core each).
		# Every other case's Pods are on the control-plane node. Parked, not deleted: the
		# next cluster-up powers them on with their images (a deleted worker imports
		# every image again, about a minute each).
		if [ "${E2E_WORKERS_DOWN:-}" = 1 ]; then
			echo "[faults] done (exit $lane): parking the worker nodes for the rest of the run"
			"$REPO/hack/nodes.sh" park 2>&1 | tail -n 1 || true
		fi
	fi
	if [ "$second_cases" -gt 0 ]; then
		"$CHAINSAW" test --no-color --parallel 1 --report-format JSON --report-path "$report" \
			--report-name chainsaw-report-second --selector 'etcd-operator.dev/lane=second' \
			--config "$REPO/test/e2e/chainsaw-config.yaml" "$@" 2>&1 | tee "$report/second.log" | sed -u 's/^/[second] /' || lane=$?
	fi
	exit "$lane" ) &
	fpid=$!
fi
"$CHAINSAW" test --no-color --parallel 2 --report-format JSON --report-path "$report" \
	--selector '!etcd-operator.dev/needs-workers,etcd-operator.dev/lane!=second' \
	--config "$REPO/test/e2e/chainsaw-config.yaml" "$@" 2>&1 | tee "$report/main.log" || rc=$?
if [ -n "$fpid" ]; then
	wait "$fpid" || frc=$?
	[ "$frc" = 0 ] || log "second lane (fault cases, long cases) failed (exit $frc)"
	[ "$rc" != 0 ] || rc=$frc
fi
if [ "$rc" != 0 ]; then
	# Last, so that a reader of the output's tail (CI) sees which case failed where.
	"$REPO/hack/e2e-digest.sh" "$report" || true
	log "end-to-end tests failed (exit $rc)"
	log "component logs: $LOGS (bundle: make cluster-logs); chainsaw report: $report"
	exit "$rc"
fi
log "end-to-end tests passed"

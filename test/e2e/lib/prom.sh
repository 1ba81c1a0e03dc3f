#!/usr/bin/env bash
# Helpers of the monitoring e2e case (operator/alerts-fire). They read the bed's Prometheus
# (hack/monitoring.sh up) through the API server's service proxy, for the EtcdCluster <cluster>
# in $NAMESPACE (set by Chainsaw).
#
#   prom.sh monitors up|down      apply (or delete) the chart's PodMonitor, ServiceMonitor (and
#                                 its scraper identity) and PrometheusRule, rendered from this
#                                 tree's chart with the case's short `for:` durations
#   prom.sh wait-series <timeout-s> <n> <promql>   until the query returns n series
#   prom.sh wait-alerts firing|clear <timeout-s> <cluster> <alert>...
#                                 until every named alert of that cluster is in the ALERTS
#                                 series with alertstate="firing" (or none of them is left)
#   prom.sh freeze <stop-file> <pod>...   SIGSTOP the etcd process of each member Pod (on this
#                                 host: the control-plane node runs the case's Pods) every second
#                                 until <stop-file> exists, then SIGCONT them
#   prom.sh dashboard <cluster>   query every PromQL expression of the chart's dashboard and
#                                 fail on one that returns no data (except the ones listed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
MON=$repo/hack/monitoring.sh
NS=${NAMESPACE:?NAMESPACE not set}
OPNS=${OPERATOR_NAMESPACE:-etcd-operator-system}

render() { # the chart's monitoring objects, as hack/deploy-operator.sh's release would make them
	local helm
	helm=$("$repo/hack/tools/build.sh" helm)/helm
	"$helm" template etcd-operator "$repo/charts/etcd-operator" --namespace "$OPNS" \
		--set monitoring.podMonitor.enabled=true,monitoring.podMonitor.interval=5s \
		--set monitoring.prometheusRule.enabled=true \
		--set monitoring.prometheusRule.noLeaderFor=10s \
		--set monitoring.prometheusRule.membersDownFor=10s \
		--set monitoring.prometheusRule.quorumAtRiskFor=10s \
		--set metrics.serviceMonitor.enabled=true,metrics.serviceMonitor.interval=5s \
		--set metrics.serviceMonitor.tls.insecureSkipVerify=true \
		--set monitoring.dashboard.enabled=true \
		--show-only templates/podmonitor.yaml --show-only templates/servicemonitor.yaml \
		--show-only templates/metrics-scraper.yaml --show-only templates/prometheusrule.yaml \
		"$@"
}

count() { # count <promql>: number of series in the answer (-1 when Prometheus did not answer)
	"$MON" query "$1" 2>/dev/null | jq -r 'if .status == "success" then (.data.result | length) else -1 end' 2>/dev/null || echo -1
}

case ${1:-} in
monitors)
	case ${2:-} in
	up) render | kubectl apply -f - >/dev/null ;;
	down) render | kubectl delete --ignore-not-found -f - >/dev/null ;;
	*) exit 2 ;;
	esac
	echo ok
	;;
wait-series)
	timeout=$2 want=$3 q=$4
	end=$(($(date +%s) + timeout))
	while :; do
		n=$(count "$q")
		[ "$n" = "$want" ] && { echo ok; exit 0; }
		[ "$(date +%s)" -lt "$end" ] || { echo "after ${timeout}s: $n series, want $want: $q"; exit 1; }
		sleep 3
	done
	;;
wait-alerts)
	state=$2 timeout=$3 cl=$4
	shift 4
	end=$(($(date +%s) + timeout))
	while :; do
		missing=""
		for a in "$@"; do
			n=$(count "ALERTS{alertname=\"$a\",alertstate=\"firing\",namespace=\"$NS\",cluster=\"$cl\"}")
			p=$(count "ALERTS{alertname=\"$a\",namespace=\"$NS\",cluster=\"$cl\"}")
			if [ "$state" = firing ]; then [ "$n" = 1 ] || missing="$missing $a"; else [ "$p" = 0 ] || missing="$missing $a"; fi
		done
		[ -z "$missing" ] && { echo ok; exit 0; }
		[ "$(date +%s)" -lt "$end" ] || {
			echo "after ${timeout}s, not $state:$missing"
			"$MON" query "ALERTS{namespace=\"$NS\"}" | jq -c '.data.result[] | .metric + {value: .value[1]}'
			exit 1
		}
		sleep 3
	done
	;;
freeze)
	stop=$2
	shift 2
	pods=("$@")
	pids() { local p; for p in "${pods[@]}"; do pgrep -f "^etcd --name=$p " || true; done; }
	while [ ! -f "$stop" ]; do
		for pid in $(pids); do kill -STOP "$pid" 2>/dev/null || true; done
		sleep 1
	done
	for pid in $(pids); do kill -CONT "$pid" 2>/dev/null || true; done
	;;
dashboard)
	cl=$2
	# No data expected here: no EtcdSnapshot (3 panels), no TLS (certificate expiry), no
	# NoSpace condition, no failed client request, no restarted watch (the operator makes a
	# watch_restarts series for a kind at its first restart). Every other expression must answer.
	may_be_empty='last_snapshot_|certificate_expiry|nospace_alarm|grpc_code!=\\"OK\\"|watch_restarts_total'
	render --show-only templates/grafana-dashboard.yaml 2>/dev/null |
		sed -n 's/^ *"expr": \(".*"\),\{0,1\}$/\1/p' >"/tmp/e2e-dashboard-$NS.exprs" || true
	# --show-only above adds the dashboard to the monitors: keep only its lines.
	total=0 empty=0 bad=0
	while IFS= read -r line; do
		expr=$(printf '%s' "$line" | jq -r . | sed "s/\\\$namespace/$NS/g; s/\\\$cluster/$cl/g")
		total=$((total + 1))
		n=$(count "$expr")
		if [ "$n" -gt 0 ]; then continue; fi
		if printf '%s' "$line" | grep -Eq "$may_be_empty"; then
			empty=$((empty + 1))
			echo "no data (expected here): $expr" >&2
		else
			bad=$((bad + 1))
			echo "NO DATA: $expr" >&2
		fi
	done <"/tmp/e2e-dashboard-$NS.exprs"
	rm -f "/tmp/e2e-dashboard-$NS.exprs"
	[ "$total" -gt 0 ] || { echo "no expression found in the dashboard"; exit 1; }
	[ "$bad" = 0 ] || { echo "$bad of $total dashboard expressions returned no data"; exit 1; }
	echo "ok: $((total - empty)) of $total expressions answered ($empty expected empty)" >&2
	echo ok
	;;
*)
	echo "usage: prom.sh monitors|wait-series|wait-alerts|freeze|dashboard ..." >&2
	exit 2
	;;
esac

#!/usr/bin/env bash
# Shared steps of the worker-node fault cases (test/e2e/operator/node-*, fault-*;
# issue 18, item 5). The faults themselves are test/e2e/lib/faults.sh; the checkers
# lincheck.sh and writecheck.sh run beside them.
#
#   faultcase.sh leader <cluster>
#       The Pod of etcd's leader (asked from a member Pod: endpoint status --cluster).
#   faultcase.sh follower <cluster>
#       The Pod of one follower.
#   faultcase.sh node <pod>
#       The node the Pod is bound to.
#   faultcase.sh mark <cluster>
#       Record now as the time of the fault (in /tmp, per namespace and cluster) and
#       start sampling the cluster's Available condition every second in the
#       background (until `recovered` or `restore`).
#   faultcase.sh recovered <cluster> [timeout-seconds]
#       Wait (default 240 s) until the cluster is whole again: Available=True with
#       reason QuorumHealthy and readyMembers equal to spec.replicas. Prints
#       "fault_to_available_s=<seconds since mark>" and, from the sampler,
#       "available_false_samples=<n> of <m>" with the distinct Available
#       status/reason pairs seen (and when, in seconds after the fault). Fails on timeout.
#   faultcase.sh restore
#       Every worker node back, whatever a case did or left undone: powered on
#       (hack/nodes.sh start), partitions healed, uncordoned, the evacuate
#       annotation removed, the operator's partition healed, the sampler stopped.
#       Each case runs it in a finally/cleanup step.
#
# $NAMESPACE is set by Chainsaw or by the caller.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
ns=${NAMESPACE:-default}
kc() { kubectl -n "$ns" "$@"; }
die() {
	echo "faultcase: $*" >&2
	exit 1
}
state() { echo "/tmp/faultcase-$ns-$1"; }

pods_of() { kc get pods -l "etcd-operator.cozystack.io/cluster=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }

# role <cluster> leader|follower: ask each member Pod in turn until one answers.
role() {
	local c=$1 want=$2 p status sel
	[ "$want" = leader ] && sel='==' || sel='!='
	for p in $(pods_of "$c"); do
		status=$(kc exec "$p" -- etcdctl endpoint status --cluster -w json 2>/dev/null) || continue
		echo "$status" | jq -r ".[] | select(.Status.header.member_id $sel .Status.leader) | .Endpoint" |
			sed -e 's|^[a-z]*://||' -e 's|[.:].*||' | head -1 | grep . && return 0
	done
	die "no $want found in cluster $c"
}

node_of() { kc get pod "${1:?pod}" -o jsonpath='{.spec.nodeName}'; }

available() {
	kc get etcdcluster "$1" -o jsonpath='{.status.conditions[?(@.type=="Available")].status}/{.status.conditions[?(@.type=="Available")].reason}'
}

mark() {
	local c=${1:?cluster} t0 s
	t0=$(date +%s)
	s=$(state "$c")
	echo "$t0" >"$s.t0"
	: >"$s.samples"
	# One line per second: "<seconds since the fault> <status>/<reason>".
	(
		while [ -e "$s.t0" ]; do
			echo "$(($(date +%s) - t0)) $(available "$c" 2>/dev/null || echo error)" >>"$s.samples"
			sleep 1
		done
	) >/dev/null 2>&1 </dev/null &
	echo $! >"$s.sampler"
	echo "fault at $(date -u -d "@$t0" +%T)"
}

stop_sampler() {
	local s=$1
	[ -f "$s.sampler" ] && kill "$(cat "$s.sampler")" 2>/dev/null || true
	rm -f "$s.sampler"
}

recovered() {
	local c=${1:?cluster} t=${2:-240} s t0 now st want ready
	s=$(state "$c")
	[ -f "$s.t0" ] || die "no fault marked for $c"
	t0=$(cat "$s.t0")
	while :; do
		now=$(date +%s)
		st=$(available "$c" || true)
		want=$(kc get etcdcluster "$c" -o jsonpath='{.spec.replicas}')
		ready=$(kc get etcdcluster "$c" -o jsonpath='{.status.readyMembers}')
		[ "$st" = True/QuorumHealthy ] && [ "$ready" = "$want" ] && break
		[ $((now - t0)) -lt "$t" ] || {
			stop_sampler "$s"
			die "not recovered ${t}s after the fault: Available $st, ready $ready of $want"
		}
		sleep 1
	done
	stop_sampler "$s"
	echo "fault_to_available_s=$((now - t0))"
	awk '{ n++; if ($2 !~ /^True\//) f++; if (!($2 in seen)) { seen[$2] = 1; l = l " " $2 "@" $1 "s" } }
	     END { printf "available_false_samples=%d of %d; seen:%s\n", f, n, l }' "$s.samples"
	rm -f "$s.t0" "$s.samples"
}

restore() {
	local n st
	for f in /tmp/faultcase-"$ns"-*.sampler; do
		[ -e "$f" ] && stop_sampler "${f%.sampler}"
	done
	rm -f /tmp/faultcase-"$ns"-*.t0 /tmp/faultcase-"$ns"-*.samples
	"$here/faults.sh" heal-operator >/dev/null 2>&1 || true
	for n in $(kubectl get nodes -l etcd-operator.dev/worker=true -o jsonpath='{.items[*].metadata.name}'); do
		st=$("$repo/hack/nodes.sh" status 2>/dev/null | awk -v n="$n" '$1 == n { print $4 }')
		[ "$st" = power=off ] && "$here/faults.sh" node-start "$n"
		"$here/faults.sh" heal "$n" >/dev/null
		kubectl uncordon "$n" >/dev/null
		kubectl annotate node "$n" etcd-operator.cozystack.io/evacuate- >/dev/null 2>&1 || true
	done
	echo "faultcase: workers restored"
}

cmd=${1:-}
shift || true
case $cmd in
leader) role "${1:?cluster}" leader ;;
follower) role "${1:?cluster}" follower ;;
node) node_of "$@" ;;
mark) mark "$@" ;;
recovered) recovered "$@" ;;
restore) restore ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac

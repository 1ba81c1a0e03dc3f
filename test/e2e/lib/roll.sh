#!/usr/bin/env bash
# Helpers of the rolling-update cases (issue 11).
#
#   roll.sh ids <cluster>
#       The cluster ID, then "<member> <memberID>" per EtcdMember, sorted: compare
#       before and after a roll (a rolled member keeps its ID).
#   roll.sh run <cluster> <merge-patch> <want-version|-> [timeout-seconds]
#       Apply the merge patch to the EtcdCluster, then sample twice a second until the
#       roll is over: Progressing=False/Reconciled, status.updatedMembers equal to
#       spec.replicas, no status.rollingMember, and (unless "-") every EtcdMember
#       reporting etcd <want-version> in status.version. Prints
#       "min_ready=<n> of <replicas> rolled_in=<seconds>s"; exits 1 on timeout.
#
# $NAMESPACE is set by Chainsaw or by the caller.
set -euo pipefail

ns=${NAMESPACE:?NAMESPACE must be set (Chainsaw sets it)}
kc() { kubectl -n "$ns" "$@"; }
die() {
	echo "roll: $*" >&2
	exit 1
}

ids() {
	local c=$1
	kc get etcdcluster "$c" -o jsonpath='{.status.clusterID}{"\n"}'
	kc get etcdmember -l "etcd-operator.cozystack.io/cluster=$c" \
		-o jsonpath='{range .items[*]}{.metadata.name} {.status.memberID}{"\n"}{end}' | sort
}

# Ready member Pods that are not being deleted.
ready_pods() {
	kc get pods -l "etcd-operator.cozystack.io/cluster=$1" \
		-o jsonpath='{range .items[*]}{.metadata.name} {.metadata.deletionTimestamp} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
		awk 'NF == 2 && $2 == "True" { n++ } END { print n + 0 }'
}

done_rolling() {
	local c=$1 want=$2 st replicas
	# Reconciled for this generation (not the one before the patch), all members updated.
	st=$(kc get etcdcluster "$c" -o jsonpath='{.status.conditions[?(@.type=="Progressing")].reason} {.status.conditions[?(@.type=="Progressing")].observedGeneration} {.metadata.generation} {.status.updatedMembers} {.spec.replicas} {.status.rollingMember}')
	# shellcheck disable=SC2086
	set -- $st
	[ "${1:-}" = Reconciled ] && [ "${2:-}" = "${3:-x}" ] && [ "${4:-}" = "${5:-x}" ] &&
		[ -z "${6:-}" ] || return 1
	[ "$want" = - ] && return 0
	kc get etcdmember -l "etcd-operator.cozystack.io/cluster=$c" \
		-o jsonpath='{range .items[*]}{.status.version}{"\n"}{end}' |
		awk -v w="$want" '$0 != w { bad = 1 } END { exit bad }'
}

run() {
	local c=$1 patch=$2 want=$3 timeout=${4:-600} t0 min replicas r
	replicas=$(kc get etcdcluster "$c" -o jsonpath='{.spec.replicas}')
	min=$replicas
	t0=$(date +%s)
	kc patch etcdcluster "$c" --type merge -p "$patch" >/dev/null
	sleep 1 # let the operator latch the new target before "Reconciled" can mean it
	while :; do
		r=$(ready_pods "$c")
		[ "$r" -lt "$min" ] && min=$r
		done_rolling "$c" "$want" && break
		[ $(($(date +%s) - t0)) -lt "$timeout" ] || {
			kc get etcdcluster "$c" -o yaml >&2
			die "roll of $c not over after ${timeout}s"
		}
		sleep 0.5
	done
	echo "min_ready=$min of $replicas rolled_in=$(($(date +%s) - t0))s"
}

cmd=${1:-}
shift || true
case $cmd in
ids) ids "$@" ;;
run) run "$@" ;;
*) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

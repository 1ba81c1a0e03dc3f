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
#   roll.sh after <cluster> <timeout-seconds> <command...>
#       Record the member Pods' UIDs, run the command (a change the operator should roll
#       the members for, such as a new CA bundle in a TLS Secret), then sample twice a
#       second until every member Pod was replaced (a new UID, same name) and the roll is
#       over (Progressing=False/Reconciled, updatedMembers = replicas, no rollingMember).
#       Prints "min_ready=<n> of <replicas> replaced=<n> rolled_in=<seconds>s"; exits 1
#       on timeout.
#   roll.sh uids <cluster>
#       "<pod> <uid>" per member Pod, sorted: compare to tell that nothing was rolled.
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

uids() {
	kc get pods -l "etcd-operator.cozystack.io/cluster=$1" \
		-o jsonpath='{range .items[*]}{.metadata.name} {.metadata.uid}{"\n"}{end}' | sort
}

# How many of the Pods listed in file $2 ("<pod> <uid>") now run under another UID.
replaced() {
	uids "$1" | awk 'NR == FNR { old[$1] = $2; next } ($1 in old) && old[$1] != $2 { n++ } END { print n + 0 }' "$2" -
}

after() {
	local c=$1 timeout=$2 t0 min replicas r before n
	shift 2
	replicas=$(kc get etcdcluster "$c" -o jsonpath='{.spec.replicas}')
	min=$replicas
	before=$(mktemp)
	uids "$c" >"$before"
	t0=$(date +%s)
	"$@" >/dev/null
	while :; do
		r=$(ready_pods "$c")
		[ "$r" -lt "$min" ] && min=$r
		n=$(replaced "$c" "$before")
		[ "$n" -ge "$replicas" ] && done_rolling "$c" - && break
		[ $(($(date +%s) - t0)) -lt "$timeout" ] || {
			kc get etcdcluster "$c" -o yaml >&2
			rm -f "$before"
			die "roll of $c not over after ${timeout}s ($n of $replicas Pods replaced)"
		}
		sleep 0.5
	done
	rm -f "$before"
	echo "min_ready=$min of $replicas replaced=$n rolled_in=$(($(date +%s) - t0))s"
}

cmd=${1:-}
shift || true
case $cmd in
ids) ids "$@" ;;
run) run "$@" ;;
after) after "$@" ;;
uids) uids "$@" ;;
*) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

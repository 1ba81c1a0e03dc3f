#!/bin/sh
# check.sh <schedule> s3|pvc: after the schedule pruned at least once, compare what is
# stored with the schedule's EtcdSnapshots. Retried for up to 90 s because a new snapshot
# may complete (and the oldest be pruned) while we look. Prints "consistent" and the
# details, or the last mismatch.
set -u
sched=$1 kind=$2
snaps() {
	kubectl -n "$NAMESPACE" get etcdsnapshot.etcd-operator.cozystack.io \
		-l etcd-operator.cozystack.io/schedule="$sched" \
		-o jsonpath='{range .items[*]}{.metadata.name} {.status.phase}{"\n"}{end}'
}
stored() { # names of the stored snapshots (without .db), one a line, sorted
	if [ "$kind" = s3 ]; then
		kubectl -n "$NAMESPACE" exec minio -c shell -- ls /data/snaps/sched/ | sed -n 's/\.db$//p'
	else
		kubectl -n "$NAMESPACE" exec lister -- ls -a /b/sched/ | sed -n 's/\.db$//p'
	fi | sort
}
stamps() {
	[ "$kind" = pvc ] && kubectl -n "$NAMESPACE" exec lister -- ls -a /b/sched/ | sed -n 's/\.db\.uid$//p' | sort
}
pruned=$(kubectl -n "$NAMESPACE" get events --field-selector involvedObject.name="$sched",reason=SnapshotPruned \
	-o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | sed -n 's/^pruned EtcdSnapshot \([^ ]*\) .*/\1/p' | sort -u)
[ -n "$pruned" ] || { echo "no SnapshotPruned event yet"; exit 1; }
for i in $(seq 1 30); do
	s=$(snaps); st=$(stored); sp=$(stamps)
	complete=$(echo "$s" | awk '$2=="Complete"{print $1}' | grep -vx "$sched-foreign" | sort)
	ncomplete=$(echo "$complete" | grep -c . || true)
	bad=""
	for p in $pruned; do
		echo "$s" | grep -q "^$p " && bad="$bad pruned-snapshot-still-there:$p"
		echo "$st" | grep -qx "$p" && bad="$bad pruned-object-still-stored:$p"
		[ "$kind" = pvc ] && echo "$sp" | grep -qx "$p" && bad="$bad pruned-stamp-still-there:$p"
	done
	for c in $complete; do echo "$st" | grep -qx "$c" || bad="$bad complete-without-object:$c"; done
	for o in $st; do
		echo "$s" | grep -q "^$o " || [ "$o" = "$sched-foreign" ] || bad="$bad orphan-object:$o"
	done
	[ "$ncomplete" -le 2 ] || bad="$bad $ncomplete-complete"
	if [ -z "$bad" ]; then
		echo "consistent pruned=[$(echo $pruned)] complete=[$(echo $complete)] stored=[$(echo $st)]"
		exit 0
	fi
	sleep 3
done
echo "inconsistent:$bad snapshots=[$(echo $s)] stored=[$(echo $st)]"
exit 1

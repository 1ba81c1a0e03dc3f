#!/usr/bin/env bash
# Linearizability checker for the chaos cases of the e2e suite (issue 18, item 4).
#
# A Pod in the test namespace runs test/lincheck (the `lincheck` binary of the
# e2e tools image): 4 concurrent clients, each with its own connection to the
# cluster's <cluster>-client Service, do puts, linearizable gets, deletes and
# compare-and-swaps on 4 keys while a case injects its fault, recording each
# operation's call and return time and answer. `verify` stops the clients and
# checks the history with porcupine: every answer must fit one order of the
# operations that respects real time (no stale read, no lost or resurrected
# write, no CAS that saw a value it should not have). Operations without an
# answer (timeouts, lost connections) may have applied or not. It complements
# the write checker (writecheck.sh), which reads acknowledged writes back from
# every member; it replaces nothing.
#
#   lincheck.sh start  <cluster> [name] [max-seconds]
#       Start the checker Pod <name> (default lc-<cluster>). Its clients stop by
#       themselves after max-seconds (default 600), or when `verify` asks.
#   lincheck.sh verify [name] [min-answered]
#       (name: default the only checker Pod of the namespace.) Ask the clients to stop (each ends once its last 3 operations were
#       answered), wait for the check and print its result line
#       "lincheck: ops=<n> keys=<k> result=ok|violation|unknown". Fails on a
#       violation, on an unknown result (the checker ran out of time), or when
#       fewer than min-answered (default 30) operations were answered, so a
#       checker that never reached etcd cannot pass. On a violation or unknown
#       result the history (history.json) and porcupine's visualisation
#       (visualization.html) are copied to
#       $LINCHECK_ARTIFACTS/<namespace>-<name>/ (default: .local-cluster/e2e-report/lincheck
#       of this checkout, beside Chainsaw's report).
#
# Runs on the machine that runs Chainsaw (kubectl on PATH, $NAMESPACE set by
# Chainsaw or by the caller). A cluster with client TLS and/or etcd auth: set
# LINCHECK_TLS=<server-secret>/<client-secret> and LINCHECK_AUTH_SECRET=<secret>
# (the root credentials Secret), as for the write checker (whose WRITECHECK_TLS
# and WRITECHECK_AUTH_SECRET are used when these are unset). LINCHECK_FLAGS adds
# flags of the binary (test/lincheck/main.go), e.g. -inject-stale-read for the
# self-test of pod-deleted-same-member: a made-up stale read appended to the
# recorded history, which verify must report as a violation with its artifacts.
set -euo pipefail

ns=${NAMESPACE:?NAMESPACE must be set (Chainsaw sets it)}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
tools_image=${LINCHECK_TOOLS_IMAGE:-localhost/etcd-operator-dev/busybox:1.35}
tls=${LINCHECK_TLS:-${WRITECHECK_TLS:-}}
auth_secret=${LINCHECK_AUTH_SECRET:-${WRITECHECK_AUTH_SECRET:-}}
artifacts=${LINCHECK_ARTIFACTS:-$repo/.local-cluster/e2e-report/lincheck}

# shellcheck source=checkpod.sh
. "$(dirname "$0")/checkpod.sh"

start() {
	local cluster=$1 name=${2:-lc-$1} max_s=${3:-600}
	local endpoint="http://$cluster-client:2379" vols="" mounts="" envs="" flags=${LINCHECK_FLAGS:-}
	checker_tls "$cluster"
	[ -z "$tls" ] || flags="$flags -cacert=/ca/ca.crt -cert=/cert/tls.crt -key=/cert/tls.key"
	if [ -n "$auth_secret" ]; then
		envs="
    - {name: LINCHECK_PASSWORD, valueFrom: {secretKeyRef: {name: $auth_secret, key: password}}}"
		flags="$flags -user=root"
	fi
	kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $name
  labels: {app.kubernetes.io/name: lincheck, lincheck/cluster: $cluster}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes:
  - {name: work, emptyDir: {}}$vols
  containers:
  - name: lincheck
    image: $tools_image
    imagePullPolicy: Never
    command: [/bin/sh, -c]
    env:
    - {name: ENDPOINT, value: "$endpoint"}
    - {name: FLAGS, value: "$flags"}$envs
    - {name: NAME, value: "$name"}
    - {name: MAX_SECONDS, value: "$max_s"}
    args:
    - |
      # shellcheck disable=SC2086
      lincheck -endpoints="\$ENDPOINT" \$FLAGS -prefix="/lincheck/\$NAME/" -duration="\${MAX_SECONDS}s" \
        -interval=50ms -stop-file=/work/stop -artifacts=/work/artifacts
      echo "LINCHECK_EXIT \$?"
      # keep the artifacts until verify has copied them (or 10 minutes)
      i=0
      while [ ! -e /work/fetched ] && [ "\$i" -lt 600 ]; do sleep 1; i=\$((i + 1)); done
    volumeMounts:
    - {name: work, mountPath: /work}$mounts
YAML
	kc wait pod "$name" --for=condition=Ready --timeout=90s >/dev/null ||
		die "checker Pod $name did not start"
	echo "lincheck $name started"
}

verify() {
	local name=${1:-} min=${2:-30} log rc answered out dir f
	if [ -z "$name" ]; then
		name=$(kc get pods -l app.kubernetes.io/name=lincheck -o jsonpath='{.items[*].metadata.name}')
		case $name in "" | *" "*) die "verify: name the checker Pod (found: '${name}')" ;; esac
	fi
	log=$(mktemp)
	rc=""
	# the clients end within a few operation timeouts (at most the checker's
	# -stop-grace, 60 s, after the stop); a large check takes longer. The stop
	# file is written again every 15 s: one `kubectl exec` that failed (a busy
	# apiserver or kubelet) must not leave the clients running to -duration.
	local i
	for i in $(seq 0 299); do
		[ $((i % 15)) = 0 ] && { kc exec "$name" -- touch /work/stop 2>/dev/null || echo "lincheck: could not write the stop file of $name (try $((i / 15 + 1)))" >&2; }
		kc logs "$name" >"$log" 2>/dev/null || true
		rc=$(sed -n 's/^LINCHECK_EXIT //p' "$log")
		[ -n "$rc" ] && break
		[ "$(kc get pod "$name" -o jsonpath='{.status.phase}')" = Running ] || break
		sleep 1
	done
	grep '^lincheck: ' "$log" || true
	if [ -z "$rc" ]; then
		tail -20 "$log" >&2
		kc exec "$name" -- ls -l /work >&2 || true
		rm -f "$log"
		die "checker Pod $name ended without a result"
	fi
	out=$(grep '^lincheck: ops=' "$log" || true)
	answered=$(sed -n 's/^lincheck: answered: get=\([0-9]*\) put=\([0-9]*\) delete=\([0-9]*\) cas=\([0-9]*\);.*/\1 \2 \3 \4/p' "$log" |
		awk '{ print $1 + $2 + $3 + $4 }')
	rm -f "$log"
	if [ "$rc" = 1 ] || [ "$rc" = 3 ]; then
		dir=$artifacts/$ns-$name
		mkdir -p "$dir"
		for f in history.json visualization.html; do
			kc exec "$name" -- cat "/work/artifacts/$f" >"$dir/$f" || true
		done
		echo "lincheck: history and visualisation copied to $dir"
	fi
	kc exec "$name" -- touch /work/fetched 2>/dev/null || true
	case $rc in
	0) ;;
	1) die "linearizability violation: $out" ;;
	3) die "the checker ran out of time, nothing proven: $out" ;;
	*) die "checker failed (exit $rc)" ;;
	esac
	[ "${answered:-0}" -ge "$min" ] || die "only ${answered:-0} operations answered (want at least $min)"
	echo "lincheck $name: answered=$answered ok"
}

cmd=${1:-}
shift || true
case $cmd in
start) [ $# -ge 1 ] || usage; start "$@" ;;
verify) verify "$@" ;;
*) usage ;;
esac

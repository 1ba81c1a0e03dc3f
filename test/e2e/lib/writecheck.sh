#!/usr/bin/env bash
# Write checker for the chaos cases of the e2e suite (issue 8, item 12).
#
# A Pod in the test namespace writes sequential keys through the cluster's
# <cluster>-client Service while a case injects its fault, and logs one line
# per write that etcd acknowledged ("ACK <key> <value>"). When the fault is
# over, `verify` stops the writer and reads every acknowledged key back from
# every member Pod with a serializable read (that member's own copy of the
# data, not a read forwarded to the leader). Writes that failed or timed out
# are allowed to be lost or to have landed; acknowledged ones must be on every
# member with their value.
#
#   writecheck.sh start  <cluster> [name] [max-seconds] [max-writes]
#       Start the writer Pod <name> (default wc-<cluster>). It stops by itself
#       after max-seconds (default 600) or max-writes (default 5000), or when
#       `verify` tells it to.
#   writecheck.sh verify <cluster> [name] [min-acked]
#       Stop the writer, wait for it to exit, and check every acknowledged key
#       on every member of <cluster>. Fails when fewer than min-acked (default 20)
#       writes were acknowledged, so a writer that never reached etcd cannot pass.
#       Prints "acked=<n> members=<m> ok" on success.
#   writecheck.sh pause [name]
#       After verify (the writer Pod must still exist): the longest time in
#       seconds between two consecutive acknowledged writes. Prints
#       "max_pause_s=<x>".
#   writecheck.sh verify-rpo <cluster> <destroyed-epoch> [name] [rpo-seconds] [min-acked]
#       After a cluster was lost and <cluster> restored from an archive (issue 20's RPO):
#       the writer wrote to the lost cluster; <destroyed-epoch> (seconds since the epoch,
#       fractions allowed: `date +%s.%N` when the loss began). Stops the writer and reads
#       its keys from every member of <cluster>. An acknowledged write is present when every
#       member has it with its value; its age is how long before <destroyed-epoch> etcd
#       acknowledged it (negative: after). Prints "acked=<n> missing=<m>
#       oldest_missing_age_s=<a> newest_missing_age_s=<b> newest_present_age_s=<c>
#       acked_after_destruction=<k> rpo_s=<r>", with "none" for an age without a write.
#       Fails when a write acknowledged more than rpo-seconds (default 5) before the
#       destruction is missing, when a key holds another value, or with fewer than min-acked
#       (default 20) acknowledged writes before the destruction.
#   writecheck.sh expect <cluster> <prefix>
#       Read "<key> <value>" lines on stdin and check each on every member of
#       <cluster> (keys under <prefix>). Prints "keys=<n> members=<m> ok".
#
# Runs on the machine that runs Chainsaw (kubectl on PATH, $NAMESPACE set by
# Chainsaw or by the caller). The writer Pod runs etcdctl from the etcd image
# (WRITECHECK_ETCD_IMAGE) with a shell copied in from the e2e tools image
# (WRITECHECK_TOOLS_IMAGE): no image of its own to build.
#
# A cluster with client TLS and/or etcd auth: set WRITECHECK_TLS=<server-secret>/<client-secret>
# (the writer then mounts ca.crt of the server Secret and the operator client certificate, and
# dials https; member reads use the member's own client certificate) and WRITECHECK_AUTH_SECRET=
# <secret> (the root credentials Secret: the writer gets the password by secretKeyRef, the member
# reads with --user root:<password> read from the Secret by kubectl).
set -euo pipefail

ns=${NAMESPACE:?NAMESPACE must be set (Chainsaw sets it)}
etcd_image=${WRITECHECK_ETCD_IMAGE:-quay.io/coreos/etcd:v3.6.11}
tools_image=${WRITECHECK_TOOLS_IMAGE:-localhost/etcd-operator-dev/busybox:1.35}
# How long a member may take to catch up with the writes it missed.
converge_s=${WRITECHECK_CONVERGE_SECONDS:-60}
tls=${WRITECHECK_TLS:-}
auth_secret=${WRITECHECK_AUTH_SECRET:-}

# shellcheck source=checkpod.sh
. "$(dirname "$0")/checkpod.sh"

# etcdctl flags of a member Pod reading its own copy (client TLS, auth).
member_flags() {
	local pw
	if [ -n "$tls" ]; then
		printf '%s\n' --endpoints=https://localhost:2379 --cacert=/etc/etcd/tls/client/ca.crt \
			--cert=/etc/etcd/tls/client/tls.crt --key=/etc/etcd/tls/client/tls.key
	fi
	if [ -n "$auth_secret" ]; then
		pw=$(kc get secret "$auth_secret" -o jsonpath='{.data.password}' | base64 -d)
		printf '%s\n' "--user=root:$pw"
	fi
}

start() {
	local cluster=$1 name=${2:-wc-$1} max_s=${3:-600} max_n=${4:-5000}
	local endpoint="http://$cluster-client:2379" vols="" mounts="" envs="" flags=""
	checker_tls "$cluster"
	[ -z "$tls" ] || flags="--cacert=/ca/ca.crt --cert=/cert/tls.crt --key=/cert/tls.key"
	if [ -n "$auth_secret" ]; then
		envs="
    - {name: ETCDCTL_PASSWORD, valueFrom: {secretKeyRef: {name: $auth_secret, key: password}}}
    - {name: ETCDCTL_USER, value: root}"
	fi
	kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $name
  labels: {app.kubernetes.io/name: writecheck, writecheck/cluster: $cluster}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes:
  - {name: tools, emptyDir: {}}$vols
  initContainers:
  - name: shell
    image: $tools_image
    imagePullPolicy: Never
    command: [/bin/busybox, cp, /bin/busybox, /tools/busybox]
    volumeMounts: [{name: tools, mountPath: /tools}]
  containers:
  - name: writer
    image: $etcd_image
    imagePullPolicy: IfNotPresent
    command: [/tools/busybox, sh, -c]
    env:
    - {name: ENDPOINT, value: "$endpoint"}
    - {name: FLAGS, value: "$flags"}$envs
    - {name: PREFIX, value: "/writecheck/$name/"}
    - {name: MAX_SECONDS, value: "$max_s"}
    - {name: MAX_WRITES, value: "$max_n"}
    args:
    - |
      set -u
      /tools/busybox mkdir -p /tools/bin && /tools/busybox --install -s /tools/bin
      export PATH=/tools/bin:/usr/local/bin
      run=\$(date +%s)
      end=\$((run + MAX_SECONDS))
      i=0 acked=0 failed=0
      echo "START endpoint=\$ENDPOINT prefix=\$PREFIX max_seconds=\$MAX_SECONDS max_writes=\$MAX_WRITES"
      while [ "\$i" -lt "\$MAX_WRITES" ] && [ "\$(date +%s)" -lt "\$end" ] && [ ! -e /tools/stop ]; do
        i=\$((i + 1))
        k=\$(printf '%s%06d' "\$PREFIX" "\$i")
        v="\$run-\$i"
        # Only etcd's OK after a zero exit counts as acknowledged.
        # shellcheck disable=SC2086
        if out=\$(etcdctl --endpoints="\$ENDPOINT" \$FLAGS --dial-timeout=2s --command-timeout=3s put "\$k" "\$v" 2>&1) && [ "\$out" = OK ]; then
          # the 4th field: seconds since boot (centiseconds), for the longest pause
          echo "ACK \$k \$v \$(cut -d' ' -f1 /proc/uptime)"
          acked=\$((acked + 1))
        else
          echo "ERR \$k \$(echo "\$out" | tr '\n' ' ' | cut -c1-160)"
          failed=\$((failed + 1))
          sleep 0.5
        fi
        sleep 0.1
      done
      # The wall clock at an uptime, read just after a second ticks (so to about 20 ms):
      # maps the ACK lines' 4th field to wall time (verify-rpo). After the writes: no delay.
      s=\$(date +%s) e=\$s
      while [ "\$e" = "\$s" ]; do sleep 0.02; e=\$(date +%s); done
      echo "CLOCK \$e \$(cut -d' ' -f1 /proc/uptime)"
      echo "END attempted=\$i acked=\$acked failed=\$failed"
    volumeMounts:
    - {name: tools, mountPath: /tools}$mounts
YAML
	kc wait pod "$name" --for=condition=Ready --timeout=90s >/dev/null ||
		die "writer Pod $name did not start"
	echo "writer $name started"
}

# Member Pods of a cluster that are not being deleted.
members() {
	kc get pods -l "etcd-operator.cozystack.io/cluster=$1" \
		-o jsonpath='{range .items[?(@.metadata.deletionTimestamp)]}{"-"}{.metadata.name}{"\n"}{end}{range .items[*]}{.metadata.name}{"\n"}{end}' |
		awk '/^-/ { gone[substr($0, 2)] = 1; next } NF && !($0 in gone)'
}

# check_members <cluster> <prefix> <expected-file>: every "<key> <value>" line
# of expected-file is on every member (serializable reads, retried while a
# member catches up). Prints the number of members checked.
check_members() {
	local cluster=$1 prefix=$2 expected=$3 pods p dump bad deadline count=0
	local -a mf
	mapfile -t mf < <(member_flags)
	pods=$(members "$cluster")
	[ -n "$pods" ] || die "no member Pods of $cluster"
	dump=$(mktemp)
	bad=$(mktemp)
	for p in $pods; do
		deadline=$(($(date +%s) + converge_s))
		while :; do
			# `get` prints key and value on alternate lines.
			if kc exec "$p" -- etcdctl "${mf[@]}" get --consistency=s --prefix "$prefix" 2>"$bad.err" |
				awk 'NR % 2 == 1 { k = $0; next } { print k, $0 }' >"$dump"; then
				awk 'NR == FNR { have[$0] = 1; key[$1] = 1; next }
				     !($0 in have) { print ($1 in key ? "wrong value: " : "missing: ") $0 }' \
					"$dump" "$expected" >"$bad"
				[ -s "$bad" ] || break
			else
				echo "read failed: $(head -c 300 "$bad.err")" >"$bad"
			fi
			if [ "$(date +%s)" -ge "$deadline" ]; then
				echo "writecheck: member $p lacks $(grep -c . "$bad") of $(grep -c . "$expected") acknowledged keys after ${converge_s}s:" >&2
				head -20 "$bad" >&2
				rm -f "$dump" "$bad" "$bad.err"
				exit 1
			fi
			sleep 2
		done
		count=$((count + 1))
	done
	rm -f "$dump" "$bad" "$bad.err"
	echo "$count"
}

verify() {
	local cluster=$1 name=${2:-wc-$1} min=${3:-20} log acked n tail
	# Let the writer show that the cluster takes writes again after the fault
	# (its last three writes acknowledged, at least min in all), so the check
	# covers writes made after the fault too; then ask it to stop (it may have
	# stopped by itself).
	for _ in $(seq 1 90); do
		tail=$(kc logs "$name" -c writer --tail=3 2>/dev/null | grep -c '^ACK ' || true)
		n=$(kc logs "$name" -c writer 2>/dev/null | grep -c '^ACK ' || true)
		[ "$tail" = 3 ] && [ "$n" -ge "$min" ] && break
		[ "$(kc get pod "$name" -o jsonpath='{.status.phase}')" = Running ] || break
		sleep 1
	done
	stop_writer "$name"
	log=$(mktemp)
	acked=$(mktemp)
	kc logs "$name" -c writer >"$log"
	grep -q '^END ' "$log" || die "writer log of $name has no END line (truncated?)"
	awk '$1 == "ACK" { print $2, $3 }' "$log" >"$acked"
	n=$(grep -c . "$acked" || true)
	echo "writer: $(grep '^END ' "$log")"
	if [ "$n" -lt "$min" ]; then
		grep '^ERR ' "$log" | tail -5 >&2 || true
		rm -f "$log" "$acked"
		die "only $n acknowledged writes (want at least $min)"
	fi
	local m
	m=$(check_members "$cluster" "/writecheck/$name/" "$acked")
	rm -f "$log" "$acked"
	echo "acked=$n members=$m ok"
}

expect() {
	local cluster=$1 prefix=$2 expected n m
	expected=$(mktemp)
	cat >"$expected"
	n=$(grep -c . "$expected" || true)
	[ "$n" -gt 0 ] || die "expect: no keys on stdin"
	m=$(check_members "$cluster" "$prefix" "$expected")
	rm -f "$expected"
	echo "keys=$n members=$m ok"
}

# stop_writer <name>: ask the writer to stop and wait until its Pod has exited. The
# stop file is written again every 10 s: one `kubectl exec` that failed (a busy
# apiserver or kubelet) must not leave the writer running.
stop_writer() {
	local name=$1 phase= i
	for i in $(seq 0 59); do
		phase=$(kc get pod "$name" -o jsonpath='{.status.phase}')
		case $phase in Succeeded | Failed) break ;; esac
		[ $((i % 10)) = 0 ] && { kc exec "$name" -c writer -- /tools/busybox touch /tools/stop 2>/dev/null ||
			echo "writecheck: could not write the stop file of $name (try $((i / 10 + 1)))" >&2; }
		sleep 1
	done
	[ "$phase" = Succeeded ] || die "writer Pod $name is $phase, not Succeeded"
}

verify_rpo() {
	local cluster=$1 destroyed=$2 name=${3:-wc-$1} rpo=${4:-5} min=${5:-20}
	local log acked dump clock pods p m=0 n deadline out
	local -a mf
	stop_writer "$name"
	log=$(mktemp)
	acked=$(mktemp)
	dump=$(mktemp)
	kc logs "$name" -c writer >"$log"
	grep -q '^END ' "$log" || die "writer log of $name has no END line (truncated?)"
	clock=$(awk '$1 == "CLOCK" { print $2, $3 }' "$log")
	[ -n "$clock" ] || die "writer log of $name has no CLOCK line"
	# "<key> <value> <age>": the age in seconds before the destruction, from the uptime of
	# the ACK line and the CLOCK line's wall time at an uptime.
	awk -v c="$clock" -v d="$destroyed" 'BEGIN { split(c, k, " ") }
		$1 == "ACK" && NF >= 4 { printf "%s %s %.2f\n", $2, $3, d - (k[1] + $4 - k[2]) }' \
		"$log" >"$acked"
	n=$(awk '$3 >= 0' "$acked" | grep -c . || true)
	echo "writer: $(grep '^END ' "$log")"
	[ "$n" -ge "$min" ] || die "only $n writes acknowledged before the destruction (want at least $min)"
	mapfile -t mf < <(member_flags)
	pods=$(members "$cluster")
	[ -n "$pods" ] || die "no member Pods of $cluster"
	for p in $pods; do
		deadline=$(($(date +%s) + converge_s))
		# stdout only: kubectl's "Defaulted container" note (a restored seed has init
		# containers) goes to stderr and must not shift the key/value lines.
		until kc exec "$p" -- etcdctl "${mf[@]}" get --consistency=s --prefix "/writecheck/$name/" \
			>"$dump.one" 2>"$dump.err"; do
			[ "$(date +%s)" -lt "$deadline" ] || die "reading member $p failed: $(head -c 300 "$dump.err")"
			sleep 2
		done
		awk 'NR % 2 == 1 { k = $0; next } { print k, $0 }' "$dump.one" >>"$dump"
		m=$((m + 1))
	done
	# Present: every member has the key with its value. Another value under the key fails.
	awk -v m="$m" -v rpo="$rpo" '
		function age(a) { return a == "" ? "none" : sprintf("%.2f", a) }
		FILENAME == ARGV[1] { have[$1 " " $2]++; key[$1] = 1; next }
		{
			if ($3 < 0) after++
			if (have[$1 " " $2] == m) {
				if (np == "" || $3 < np) np = $3
				next
			}
			if ($1 in key) { wrong++; print "wrong value under " $1 " (acknowledged " $2 ")" > "/dev/stderr" }
			miss++
			if (om == "" || $3 > om) om = $3
			if (nm == "" || $3 < nm) nm = $3
			if ($3 > rpo && ++late <= 20) print "missing: " $1 " " $2 ", acknowledged " $3 " s before the destruction" > "/dev/stderr"
		}
		END {
			printf "acked=%d missing=%d oldest_missing_age_s=%s newest_missing_age_s=%s newest_present_age_s=%s acked_after_destruction=%d rpo_s=%s members=%d\n",
				FNR, miss, age(om), age(nm), age(np), after, rpo, m
			if (late > 0 || wrong > 0) {
				printf "writecheck: %d acknowledged writes older than %s s missing, %d with another value\n", late, rpo, wrong > "/dev/stderr"
				exit 1
			}
		}' "$dump" "$acked" || { rm -f "$log" "$acked" "$dump" "$dump.one" "$dump.err"; exit 1; }
	rm -f "$log" "$acked" "$dump" "$dump.one" "$dump.err"
}

pause() {
	local name=${1:?writer Pod name}
	kc logs "$name" -c writer | awk '$1 == "ACK" && NF >= 4 {
		if (seen && $4 - last > max) max = $4 - last
		last = $4; seen = 1
	} END { printf "max_pause_s=%.2f\n", max }'
}

cmd=${1:-}
shift || true
case $cmd in
start) [ $# -ge 1 ] || usage; start "$@" ;;
verify) [ $# -ge 1 ] || usage; verify "$@" ;;
expect) [ $# -eq 2 ] || usage; expect "$@" ;;
verify-rpo) [ $# -ge 2 ] || usage; verify_rpo "$@" ;;
pause) [ $# -eq 1 ] || usage; pause "$@" ;;
*) usage ;;
esac

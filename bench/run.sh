#!/usr/bin/env bash
# Benchmarks on the local cluster. They print figures; they assert nothing
# about speed. Each timing is shown beside the floor measured in the same run:
# the time a bare etcd Pod of the same image takes to become Ready.
#
#   bench/run.sh               (needs make cluster-up; deploys the operator)
#   bench/run.sh --scale-only  only the scale run (below)
#   bench/run.sh --no-scale    everything but the scale run
#   bench/run.sh --lifecycle-only  only the first part: formation, scale-up, replacement
#   bench/run.sh --snapshot-only  only the snapshot and restore figures (below)
#   bench/run.sh --roll-only   only the rolling upgrade (below)
#   bench/run.sh --defrag-only only the defragmentation gap (below)
#   bench/run.sh --rpo-only    only the archive's recovery point (below)
#
# The rolling upgrade: a 3-member PVC cluster at $ETCD_VERSION (3.6.11) is moved
# to $ROLL_TO (3.6.16) while the e2e write checker writes through its client
# Service; printed beside three bare Pod starts of the same run (a roll restarts
# three Pods), with the fewest ready members seen and the longest gap between
# two acknowledged writes (etcd's default election timeout is 1000 ms).
#
# The defragmentation gap: a 3-member PVC cluster filled with DEFRAG_BENCH_MIB (default 1024;
# less for a quick run) keys of 1 MiB is defragmented twice: (1) etcdctl defragments every
# member in place, followers first and the leader last as the leader, what the operator did
# before issue 23, and (2) an EtcdDefrag (rule.all) defragments every member, the leader
# after its leadership moved to a caught-up follower. During each, one writer Pod per member
# writes to that member only (1 s timeout, 0.1 s between writes) and the e2e write checker
# writes through the client Service. Each Defragment's start and end are the member's own
# log lines. Printed per run: how long it took, each Defragment (member, role, start, length,
# the longest gap of its own writer and of the others' during it), (a) the longest gap
# between acknowledged writes of a writer whose member was not being defragmented (a client
# with an endpoint per member, like kube-apiserver: the issue's goal is one election timeout,
# 1 s), (b) the longest gap of the writer on the member defragmented (a client with that one
# endpoint), and the checker's longest gap through the Service. DEFRAG_BENCH_LOG=<file>
# keeps each run's timeline (<file>.1, <file>.2: seconds from the start of the run).
#
# The recovery point (issue 20's RPO goal): a one-member PVC cluster archived by an EtcdArchive
# at its defaults (5 s / 8 MiB segments, onto a PVC) takes a steady load of RPO_BENCH_RATE
# (default 100) puts per second of 1 KiB values (one curl on this host, paced by --rate,
# through the client Service) beside the e2e write checker (which records the time of each
# write etcd acknowledged). After RPO_BENCH_SECONDS (default 60) the whole cluster is destroyed
# under the load: the EtcdCluster deleted, its Pod force-deleted, its PVC deleted. A new cluster
# is restored from the archive to latest. Printed: the acknowledged writes missing from it
# (write checker: count, age before the destruction of the oldest and the newest missing one),
# the load's puts acknowledged and missing, the archive's window end against the destruction
# time, and how long the restore took.
#
# The scale run declares SCALE_IDLE (default 1000) EtcdClusters with
# replicas: 0 (no Pods; the operator creates their two Services and writes
# their status) beside 3 running one-member clusters, and prints the operator's
# resident memory before and after, the cost per idle cluster, and the time
# from applying one more one-member cluster to Available with and without the
# idle ones.
#
# The snapshot run (bench/snapshot.sh, on loopback, SNAP_BENCH_MIB default 1024) compares
# the agent with `etcdctl snapshot save` of the same etcd in the same run and reports the
# agent's peak memory; then, in the cluster, a one-member cluster filled with
# RESTORE_BENCH_MIB (default 256) of 1 MiB values is snapshotted to MinIO by an EtcdSnapshot
# (the agent's own time and peak memory from its log, beside `etcdctl snapshot save` run in
# the member's Pod) and restored into a new 3-member cluster, timed from the apply to 3
# ready members.
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/../hack/lib.sh"

MODE=all
case "${1:-}" in
--scale-only) MODE=scale ;;
--no-scale) MODE=main ;;
--lifecycle-only) MODE=lifecycle ;;
--snapshot-only) MODE=snapshot ;;
--roll-only) MODE=roll ;;
--defrag-only) MODE=defrag ;;
--rpo-only) MODE=rpo ;;
"") ;;
*) echo "usage: bench/run.sh [--scale-only|--no-scale|--lifecycle-only|--snapshot-only|--roll-only|--defrag-only|--rpo-only]" >&2; exit 2 ;;
esac
SCALE_IDLE=${SCALE_IDLE:-1000}
RESTORE_BENCH_MIB=${RESTORE_BENCH_MIB:-256}
DEFRAG_BENCH_MIB=${DEFRAG_BENCH_MIB:-1024}
RPO_BENCH_RATE=${RPO_BENCH_RATE:-100}
RPO_BENCH_SECONDS=${RPO_BENCH_SECONDS:-60}

K8S_BIN=$(tool_bin kubernetes)
cluster_lock
VERSION=${ETCD_VERSION:-3.6.11}
ROLL_TO=${ROLL_TO:-3.6.16}
NS=bench-$$
now_ms() { date +%s%3N; }

cleanup() {
	kc delete clusterrolebinding "$NS-metrics" --ignore-not-found >/dev/null 2>&1 || true
	kc delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$REPO/hack/images.sh" etcd >/dev/null
"$REPO/hack/deploy-operator.sh" >/dev/null
kc create namespace "$NS" >/dev/null

# The floor: a bare etcd Pod, same image, same node, to Ready.
floor() {
	local t0 name=bare-$1
	t0=$(now_ms)
	kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $name}
spec:
  containers:
  - name: etcd
    image: quay.io/coreos/etcd:v$VERSION
    imagePullPolicy: IfNotPresent
    command: [etcd, --data-dir=/tmp/etcd, --listen-client-urls=http://0.0.0.0:2379,
              --advertise-client-urls=http://127.0.0.1:2379, --listen-metrics-urls=http://0.0.0.0:2381]
    readinessProbe:
      httpGet: {path: /readyz, port: 2381}
      periodSeconds: 1
YAML
	kc -n "$NS" wait pod "$name" --for=condition=Ready --timeout=3m >/dev/null
	echo $(($(now_ms) - t0))
	kc -n "$NS" delete pod "$name" --wait=false >/dev/null
}

# available <name> <replicas> [<spec line>]: apply, wait for Available and every member ready
available() {
	local t0
	t0=$(now_ms)
	kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdCluster
metadata: {name: $1}
spec:
  replicas: $2
  version: "$VERSION"
  ${3:-}
YAML
	kc -n "$NS" wait "etcdcluster/$1" --for=condition=Available --timeout=5m >/dev/null
	ready "$1" "$2"
	echo $(($(now_ms) - t0))
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

pod=$(kc -n etcd-operator-system get pods -l control-plane=controller-manager -o jsonpath='{.items[0].metadata.name}')

# The operator's /metrics as a scraper reads it with the chart's defaults: through
# kube-rbac-proxy (HTTPS 8443), with the token of a ServiceAccount bound to the chart's
# metrics-reader ClusterRole (the Service's port 8080 exists only with the proxy off).
kc -n "$NS" create serviceaccount bench-scraper >/dev/null
kc create clusterrolebinding "$NS-metrics" --clusterrole=etcd-operator-cozy-metrics-reader \
	--serviceaccount="$NS:bench-scraper" >/dev/null
METRICS_TOKEN=$(kc -n "$NS" create token bench-scraper --duration=24h)
metrics_ip=$(kc -n etcd-operator-system get svc etcd-operator-metrics-service -o jsonpath='{.spec.clusterIP}')
metrics_port=$(kc -n etcd-operator-system get svc etcd-operator-metrics-service -o jsonpath='{.spec.ports[0].port}')
if [ "$metrics_port" = 8443 ]; then
	METRICS_URL=https://$metrics_ip:8443/metrics
else
	METRICS_URL=http://$metrics_ip:$metrics_port/metrics
fi

# rss_kb: the operator's resident memory in kB (empty when unavailable).
rss_kb() {
	curl -sk --max-time 10 -H "Authorization: Bearer $METRICS_TOKEN" "$METRICS_URL" 2>/dev/null |
		awk '/^process_resident_memory_bytes/ {printf "%d", $2 / 1024}' || true
}

# cpu_s: the operator's CPU time in seconds so far (empty when unavailable).
cpu_s() {
	curl -sk --max-time 10 -H "Authorization: Bearer $METRICS_TOKEN" "$METRICS_URL" 2>/dev/null |
		awk '/^process_cpu_seconds_total/ {print $2}' || true
}

# idle_cpu <seconds>: the operator's CPU use over that window, in % of one core.
idle_cpu() {
	local a b
	a=$(cpu_s)
	sleep "$1"
	b=$(cpu_s)
	awk -v a="${a:-0}" -v b="${b:-0}" -v s="$1" 'BEGIN { if (a == 0 || b == 0) print "n/a"; else printf "%.2f", (b - a) * 100 / s }'
}

# ready <name> <replicas>: wait until readyMembers reaches the count.
ready() {
	local deadline=$(($(date +%s) + 300))
	until [ "$(kc -n "$NS" get etcdcluster "$1" -o jsonpath='{.status.readyMembers}')" = "$2" ] &&
		[ "$(kc -n "$NS" get etcdcluster "$1" -o jsonpath='{.status.conditions[?(@.type=="Progressing")].status}')" = False ]; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "timed out waiting for $1 to reach $2 ready members" >&2; exit 1; }
		sleep 0.2
	done
}

# members <cluster>: "<name> <Ready> <isVoter>" per EtcdMember of the cluster.
members() {
	kc -n "$NS" get etcdmembers -l "etcd-operator.cozystack.io/cluster=$1" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{" "}{.status.isVoter}{"\n"}{end}'
}

# settled <cluster> <replicas> [<old member names...>]: succeeds when the
# cluster has <replicas> EtcdMembers, all ready voters, readyMembers agrees and
# nothing is in progress; given old names, also when none of them is the lost
# one (the first) and at least one member is not among them.
settled() {
	local cluster=$1 want=$2 list
	shift 2
	list=$(members "$cluster") &&
		[ "$(grep -c . <<<"$list")" = "$want" ] &&
		! grep -qv ' True true$' <<<"$list" &&
		{ [ $# = 0 ] || { ! grep -q "^$1 " <<<"$list" && grep -qvF -f <(printf '%s \n' "$@") <<<"$list"; }; } &&
		[ "$(kc -n "$NS" get etcdcluster "$cluster" -o jsonpath='{.status.readyMembers}')" = "$want" ] &&
		[ "$(kc -n "$NS" get etcdcluster "$cluster" -o jsonpath='{.status.conditions[?(@.type=="Progressing")].status}')" = False ]
}

# wait_settled <cluster> <replicas> [<old member names...>]: poll settled.
wait_settled() {
	local deadline=$(($(date +%s) + 300))
	until settled "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "timed out waiting for $1 to settle with $2 ready members" >&2; exit 1; }
		sleep 0.2
	done
}

main_bench() {
	local f1 f2 a1 a3 t0 step floor_avg rss_idle rss_busy replace old
	sleep 10
	rss_idle=$(rss_kb)
	f1=$(floor 1)
	a1=$(available one 1)
	a3=$(available three 3)
	t0=$(now_ms)
	kc -n "$NS" patch etcdcluster three --type=merge -p '{"spec":{"replicas":5}}' >/dev/null
	ready three 5
	step=$((($(now_ms) - t0) / 2))
	f2=$(floor 2)
	floor_avg=$(((f1 + f2) / 2))
	rss_busy=$(rss_kb)

	# A memory member whose Pod is lost has lost its data: the operator removes it
	# and adds a fresh EtcdMember. Timed from the Pod delete to three ready voters
	# again, the new member among them and the lost one's EtcdMember gone. The
	# Pod is deleted only once the cluster has settled (every EtcdMember Ready):
	# readyMembers counts the last member from its promotion on, and a loss right
	# then also times the end of the cluster's own formation.
	# The bed has one node: the preferred spreading instead of the memory default
	# (one member per node, required), which would leave two members unscheduled.
	available mem 3 'storage: {size: 256Mi, medium: Memory}
  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {etcd-operator.cozystack.io/cluster: mem}}}}]}}' >/dev/null
	wait_settled mem 3
	mapfile -t old < <(members mem | cut -d' ' -f1 | sort)
	t0=$(now_ms)
	kc -n "$NS" delete pod "${old[0]}" --wait=false >/dev/null
	wait_settled mem 3 "${old[@]}"
	replace=$(($(now_ms) - t0))

	echo "etcd $VERSION on $(kc get node -o jsonpath='{.items[0].status.nodeInfo.kubeletVersion}'), $(nproc) cores"
	printf '%-46s %7s kB\n' "operator resident memory, idle" "${rss_idle:-n/a}"
	printf '%-46s %7s kB\n' "operator resident memory, 2 clusters/6 members" "${rss_busy:-n/a}"
	printf '%-46s %8d ms  (runs: %d, %d)\n' "bare etcd Pod to Ready (floor)" "$floor_avg" "$f1" "$f2"
	printf '%-46s %8d ms  (%s of floor)\n' "replicas=1: apply to 1 ready member" "$a1" "$(ratio "$a1" "$floor_avg")"
	printf '%-46s %8d ms  (%s of floor)\n' "replicas=3: apply to 3 ready members" "$a3" "$(ratio "$a3" "$floor_avg")"
	printf '%-46s %8d ms  (%s of floor)\n' "scale-up step (3->5, per member)" "$step" "$(ratio "$step" "$floor_avg")"
	printf '%-46s %8d ms  (%s of floor)\n' "memory member lost: Pod delete to 3 ready" "$replace" "$(ratio "$replace" "$floor_avg")"
}

# roll_bench: a patch upgrade of a 3-member PVC cluster under the write checker.
roll_bench() {
	local f1 f2 f3 floor_avg t0 up out pause
	f1=$(floor r1)
	f2=$(floor r2)
	f3=$(floor r3)
	floor_avg=$(((f1 + f2 + f3) / 3))
	available up 3 >/dev/null
	wait_settled up 3
	export NAMESPACE=$NS KUBECONFIG=$KUBECONFIG_FILE PATH=$K8S_BIN:$PATH
	"$REPO/test/e2e/lib/writecheck.sh" start up >/dev/null
	sleep 3
	t0=$(now_ms)
	out=$("$REPO/test/e2e/lib/roll.sh" run up "{\"spec\":{\"version\":\"$ROLL_TO\"}}" "$ROLL_TO" 600)
	up=$(($(now_ms) - t0))
	"$REPO/test/e2e/lib/writecheck.sh" verify up >/dev/null
	pause=$("$REPO/test/e2e/lib/writecheck.sh" pause wc-up)
	echo "rolling upgrade $VERSION -> $ROLL_TO, 3 PVC members, under the write checker"
	printf '%-46s %8d ms  (runs: %d, %d, %d)\n' "bare etcd Pod to Ready (floor)" "$floor_avg" "$f1" "$f2" "$f3"
	printf '%-46s %8d ms  (%s of 3 floors)\n' "patch upgrade, 3 members, edit to all rolled" "$up" \
		"$(ratio "$up" $((3 * floor_avg)))"
	printf '%-46s %s\n' "fewest ready members during the roll" "${out%% rolled_in*}"
	printf '%-46s %s\n' "longest gap between acknowledged writes" "${pause#max_pause_s=} s"
}

# pinned_writer <pod> <endpoint> <prefix>: a writer Pod that writes to one member only (its
# client URL, nothing else to fall back on), a new etcdctl per write with a 1 s dial and
# command timeout and 0.1 s between writes, printing "ACK <key> <value>" per write etcd
# acknowledged; the time of each is the one `kubectl logs --timestamps` gives the line (the
# node's clock, the same the members' log lines get). Stops on /tools/stop.
pinned_writer() {
	kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {app.kubernetes.io/name: pinned-writer}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes: [{name: tools, emptyDir: {}}]
  initContainers:
  - name: shell
    image: ${WRITECHECK_TOOLS_IMAGE:-localhost/etcd-operator-dev/busybox:1.35}
    imagePullPolicy: Never
    command: [/bin/busybox, cp, /bin/busybox, /tools/busybox]
    volumeMounts: [{name: tools, mountPath: /tools}]
  containers:
  - name: writer
    image: quay.io/coreos/etcd:v$VERSION
    imagePullPolicy: IfNotPresent
    command: [/tools/busybox, sh, -c]
    env:
    - {name: ENDPOINT, value: "$2"}
    - {name: PREFIX, value: "$3"}
    args:
    - |
      /tools/busybox mkdir -p /tools/bin && /tools/busybox --install -s /tools/bin
      export PATH=/tools/bin:/usr/local/bin
      end=\$((\$(date +%s) + 1800)) i=0
      echo "START endpoint=\$ENDPOINT"
      while [ ! -e /tools/stop ] && [ "\$(date +%s)" -lt "\$end" ]; do
        i=\$((i + 1))
        if out=\$(etcdctl --endpoints="\$ENDPOINT" --dial-timeout=1s --command-timeout=1s put "\$PREFIX\$i" "\$i" 2>&1) && [ "\$out" = OK ]; then
          echo "ACK \$PREFIX\$i \$i"
        else
          echo "ERR \$i \$(echo "\$out" | tr '\n' ' ' | cut -c1-120)"
        fi
        sleep 0.1
      done
      echo "END attempted=\$i"
    volumeMounts: [{name: tools, mountPath: /tools}]
YAML
}

# pinned_stop <pod>: asks a pinned writer to stop and waits until it has.
pinned_stop() {
	local phase=''
	kc -n "$NS" exec "$1" -c writer -- /tools/busybox touch /tools/stop 2>/dev/null || true
	for _ in $(seq 1 60); do
		phase=$(kc -n "$NS" get pod "$1" -o jsonpath='{.status.phase}')
		case $phase in Succeeded | Failed) return 0 ;; esac
		sleep 0.5
	done
	echo "pinned writer $1 is $phase, not stopped" >&2
	return 1
}

# defrag_timeline <file> <T0>: turns the lines "<kind> <member> <RFC 3339 time>" of the
# file into "<kind> <member> <seconds since T0>", sorted by time.
defrag_timeline() {
	awk -v t0="$2" '
		function days(y, m, d) {
			if (m <= 2) { y--; m += 12 }
			return 365 * y + int(y / 4) - int(y / 100) + int(y / 400) + int((153 * (m - 3) + 2) / 5) + d
		}
		function secs(s, f, d) {
			f = substr(s, 18); sub(/[Z+-].*$/, "", f)
			d = days(substr(s, 1, 4) + 0, substr(s, 6, 2) + 0, substr(s, 9, 2) + 0)
			return d * 86400 + substr(s, 12, 2) * 3600 + substr(s, 15, 2) * 60 + f
		}
		BEGIN { base = secs(t0) }
		{ printf "%s %s %.3f\n", $1, $2, secs($3) - base }' "$1" | sort -s -k3,3g
}

# defrag_gaps: reads the timeline (defrag_timeline) on stdin: S/E a member's Defragment
# started/ended (its own log), L a member became the leader, A a pinned writer's
# acknowledged write (by the member it writes to; X a failed one, not used here). Prints one line per Defragment, then
# (a) the longest gap between two acknowledged writes of a writer whose member was not
# being defragmented in between (what a client with an endpoint per member feels), (b) the
# longest gap of a writer whose member was (its Defragment in between: a client with that
# one endpoint), and the longest time without an acknowledged write from any writer.
defrag_gaps() {
	awk '
		$1 == "L" { if (leader != "" && leader != $2) changes++; leader = $2 }
		$1 == "S" { n = ++nw[$2]; ws[$2, n] = $3; we[$2, n] = 1e9; role[$2, n] = ($2 == leader ? "leader" : "follower")
			win[++nwin] = $2 SUBSEP n }
		$1 == "E" { we[$2, nw[$2]] = $3 }
		$1 == "A" {
			if ($2 in last) { ng++; gm[ng] = $2; g0[ng] = last[$2]; g1[ng] = $3 }
			last[$2] = $3
			if (any != "" && $3 - any > maxany) { maxany = $3 - any; anyat = any }
			any = $3
		}
		function over(m, k, a, b) { return a < we[m, k] && b > ws[m, k] }
		END {
			for (g = 1; g <= ng; g++) {
				m = gm[g]; d = g1[g] - g0[g]; own = 0
				for (k = 1; k <= nw[m]; k++) if (over(m, k, g0[g], g1[g])) { own = 1; if (d > wown[m, k]) wown[m, k] = d }
				if (own) { if (d > maxb) { maxb = d; bm = m; bat = g0[g] } continue }
				if (d > maxa) { maxa = d; am = m; aat = g0[g]; during = "" }
				for (w = 1; w <= nwin; w++) {
					split(win[w], p, SUBSEP)
					if (over(p[1], p[2], g0[g], g1[g])) {
						if (d > woth[w]) woth[w] = d
						if (d == maxa && am == m && aat == g0[g]) during = p[1]
					}
				}
			}
			printf "  %-22s %-8s %8s %8s %11s %11s\n", "defragmented member", "role", "start", "took", "its writer", "the others"
			for (w = 1; w <= nwin; w++) {
				split(win[w], p, SUBSEP); m = p[1]; k = p[2]
				printf "  %-22s %-8s %7.1fs %7.1fs %10.2fs %10.2fs\n", m, role[m, k], ws[m, k],
					(we[m, k] < 1e9 ? we[m, k] - ws[m, k] : -1), wown[m, k], woth[w]
			}
			printf "  %-50s %6.2f s  (writer on %s at %+.1f s, %s)\n", "(a) longest gap, writers on members not defragmented",
				maxa, am, aat, (during != "" ? "during the defragment of " during : "no defragment running")
			printf "  %-50s %6.2f s  (writer on %s at %+.1f s)\n", "(b) longest gap, writer on the member defragmented", maxb, bm, bat
			printf "  %-50s %6.2f s  (at %+.1f s)\n", "longest time without an ack from any writer", maxany, anyat
			printf "  %-50s %6d\n", "leadership changes seen in the members logs", changes
		}'
}

# defrag_observed <label> <cluster> <title> <command...>: runs the command (a
# defragmentation of the cluster) under one writer pinned to each member and the e2e write
# checker (through the client Service); prints the title and how long the command took,
# then the figures of defrag_gaps.
# The Defragment windows are etcd's own log lines ("starting defragment", "finished
# defragment", or "failed to defragment", logged by its maintenance service around the
# call), the leadership from the members' "became leader" lines; all times are the node's
# clock as `kubectl logs --timestamps` gives them.
defrag_observed() {
	local label=$1 cluster=$2 title=$3 since t0 t1 ms status m ep p leader data pause
	local -a mem=()
	shift 3
	p=$(kc -n "$NS" get pods -l "etcd-operator.cozystack.io/cluster=$cluster" -o jsonpath='{.items[0].metadata.name}')
	status=$(kc -n "$NS" exec "$p" -- etcdctl endpoint status --cluster -w json)
	leader=$(jq -r '.[] | select(.Status.leader == .Status.header.member_id) | .Endpoint | sub("^https?://"; "") | split(".")[0]' <<<"$status")
	data=$(mktemp)
	since=$(date -u -d '-2 sec' +%Y-%m-%dT%H:%M:%SZ)
	while read -r m ep; do
		mem+=("$m")
		pinned_writer "pw$label-$m" "$ep" "/pinned/$label/$m/"
	done < <(jq -r '.[] | (.Endpoint | sub("^https?://"; "") | split(".")[0]) + " " + .Endpoint' <<<"$status")
	"$REPO/test/e2e/lib/writecheck.sh" start "$cluster" "wc-$cluster-$label" >/dev/null
	for m in "${mem[@]}"; do kc -n "$NS" wait pod "pw$label-$m" --for=condition=Ready --timeout=90s >/dev/null; done
	sleep 5
	t0=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
	ms=$(now_ms)
	"$@"
	ms=$(($(now_ms) - ms))
	t1=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
	sleep 5
	for m in "${mem[@]}"; do pinned_stop "pw$label-$m"; done
	"$REPO/test/e2e/lib/writecheck.sh" verify "$cluster" "wc-$cluster-$label" >/dev/null
	pause=$("$REPO/test/e2e/lib/writecheck.sh" pause "wc-$cluster-$label")
	echo "L $leader $t0" >"$data"
	echo "T1 - $t1" >>"$data"
	for m in "${mem[@]}"; do
		kc -n "$NS" logs "$m" -c etcd --timestamps --since-time="$since" |
			awk -v m="$m" '/"msg":"starting defragment"/ { print "S", m, $1 }
				/"msg":"(finished|failed to) defragment"/ { print "E", m, $1 }
				/became leader at term/ { print "L", m, $1 }' >>"$data"
		kc -n "$NS" logs "pw$label-$m" --timestamps | awk -v m="$m" '$2 == "ACK" { print "A", m, $1 } $2 == "ERR" { print "X", m, $1 }' >>"$data"
		# Every acknowledged write of the pinned writers is on every member, too.
		kc -n "$NS" logs "pw$label-$m" | awk '$1 == "ACK" { print $2, $3 }' |
			"$REPO/test/e2e/lib/writecheck.sh" expect "$cluster" "/pinned/$label/$m/" >/dev/null
	done
	printf '%-52s %8d ms  (%s)\n' "$title" "$ms" "$(grep -c '^S ' "$data") Defragment calls seen"
	defrag_timeline "$data" "$t0" | defrag_gaps
	printf '  %-50s %6s s\n' "through the client Service (e2e write checker)" "${pause#max_pause_s=}"
	[ -z "${DEFRAG_BENCH_LOG:-}" ] || defrag_timeline "$data" "$t0" >"$DEFRAG_BENCH_LOG.$label"
	rm -f "$data"
}

# defrag_inplace: etcdctl defrag of every member in $order, in place (defrag_bench).
defrag_inplace() {
	local ep
	for ep in $order; do
		kc -n "$NS" exec "$pod" -- etcdctl --endpoints "$ep" --command-timeout 300s defrag >/dev/null
	done
}

# defrag_operator: an EtcdDefrag of every member of dfg, from the apply to Complete.
defrag_operator() {
	kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdDefrag
metadata: {name: dfg-all}
spec:
  clusterRef: {name: dfg}
  rule: {all: true}
YAML
	kc -n "$NS" wait etcddefrag/dfg-all --for=jsonpath='{.status.phase}'=Complete --timeout=20m >/dev/null
}

# defrag_bench: the longest write gaps while a 3-member cluster with a large database is
# defragmented, the leader in place (before) and by an EtcdDefrag (after).
defrag_bench() {
	local size pod order t0 moved fill_ms
	# The quota well above the data: the quota guard stays out of it.
	available dfg 3 'storage: {size: 8Gi}
  options: {quotaBackendBytes: 8589934592}' >/dev/null
	wait_settled dfg 3
	export NAMESPACE=$NS KUBECONFIG=$KUBECONFIG_FILE PATH=$K8S_BIN:$PATH
	t0=$(now_ms)
	size=$("$REPO/test/e2e/lib/fill.sh" dfg "$DEFRAG_BENCH_MIB")
	fill_ms=$(($(now_ms) - t0))
	pod=$(kc -n "$NS" get pods -l etcd-operator.cozystack.io/cluster=dfg -o jsonpath='{.items[0].metadata.name}')
	# (1) what the operator did before: every member in place, followers by name, the leader last
	order=$(kc -n "$NS" exec "$pod" -- etcdctl endpoint status --cluster -w json |
		jq -r 'sort_by(.Status.leader == .Status.header.member_id, .Endpoint) | .[].Endpoint')
	echo "defragmentation, 3 PVC members, $DEFRAG_BENCH_MIB x 1 MiB values, database $size bytes (filled in $fill_ms ms)"
	defrag_observed 1 dfg "etcdctl defrag, 3 members, the leader last in place" defrag_inplace
	# (2) an EtcdDefrag of every member
	defrag_observed 2 dfg "EtcdDefrag rule.all, 3 members, apply to Complete" defrag_operator
	moved=$(kc -n "$NS" get etcddefrag dfg-all -o json |
		jq -r '[.status.members[] | select((.leaderMoves // 0) > 0) | .name] | join(",")')
	printf '  %-50s %s\n' "leadership moved off (EtcdDefrag status)" "${moved:-none}"
}

# rpo_bench: restore to latest after the whole cluster was destroyed under a steady load.
rpo_bench() {
	local ip val n cfg loadlog loader d gone_ms t0 restore_ms rev win wc ok sent present last_ok last_have
	kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: rpo-archive}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 4Gi}}
YAML
	available rpo 1 >/dev/null
	wait_settled rpo 1
	kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdArchive
metadata: {name: rpo}
spec:
  clusterRef: {name: rpo}
  destination: {pvc: {claimName: rpo-archive, subPath: rpo}}
YAML
	kc -n "$NS" wait earch/rpo --for=condition=Ready --timeout=5m >/dev/null
	export NAMESPACE=$NS KUBECONFIG=$KUBECONFIG_FILE PATH=$K8S_BIN:$PATH
	"$REPO/test/e2e/lib/writecheck.sh" start rpo wc-rpo 1800 100000 >/dev/null
	# The load: one curl, RPO_BENCH_RATE puts a second through etcd's JSON gateway, keys
	# rpo-load-<i> (enough of them to outlast the destruction), a 1 KiB value each.
	ip=$(kc -n "$NS" get svc rpo-client -o jsonpath='{.spec.clusterIP}')
	val=$(head -c 768 /dev/urandom | base64 -w0 | base64 -w0)
	n=$((RPO_BENCH_RATE * (RPO_BENCH_SECONDS + 90)))
	cfg=$(mktemp)
	loadlog=$(mktemp)
	jq -rn --argjson n "$n" --arg url "http://$ip:2379/v3/kv/put" --arg v "$val" '
		range(1; $n + 1) | ("rpo-load-" + ("00000" + tostring)[-6:]) as $k |
		(if $k != "rpo-load-000001" then "next\n" else "" end) + "url = \"\($url)\"\ndata = {\"key\":\"\($k | @base64)\",\"value\":\"\($v)\"}\noutput = /dev/null\nmax-time = 2\nwrite-out = \"%{stderr}%{http_code}\\n\""' >"$cfg"
	# The codes on stderr (unbuffered): the loader is killed after the destruction, and a
	# buffered stdout would lose its last few hundred lines.
	curl -s --rate "$RPO_BENCH_RATE/s" -K "$cfg" >/dev/null 2>"$loadlog" &
	loader=$!
	sleep "$RPO_BENCH_SECONDS"
	# The whole cluster destroyed under the load.
	d=$(date +%s.%N)
	kc -n "$NS" delete etcdcluster rpo --wait=false >/dev/null
	kc -n "$NS" delete pod -l etcd-operator.cozystack.io/cluster=rpo --grace-period=0 --force >/dev/null 2>&1 || true
	kc -n "$NS" delete pvc -l etcd-operator.cozystack.io/cluster=rpo --wait=false >/dev/null
	until [ -z "$(kc -n "$NS" get etcdcluster,pod,pvc -l etcd-operator.cozystack.io/cluster=rpo -o name 2>/dev/null)" ] &&
		! kc -n "$NS" get etcdcluster rpo >/dev/null 2>&1; do
		sleep 0.5
	done
	gone_ms=$(awk -v d="$d" -v n="$(date +%s.%N)" 'BEGIN { printf "%d", (n - d) * 1000 }')
	kill "$loader" 2>/dev/null || true
	wait "$loader" 2>/dev/null || true
	rm -f "$cfg"
	# Restore to latest: no target.
	t0=$(now_ms)
	kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdCluster
metadata: {name: rpo-restored}
spec:
  replicas: 1
  version: "$VERSION"
  storage: {size: 4Gi}
  bootstrap:
    restore:
      source:
        archive:
          pvc: {claimName: rpo-archive, subPath: rpo}
YAML
	kc -n "$NS" wait etcdcluster/rpo-restored --for=condition=Available --timeout=10m >/dev/null
	ready rpo-restored 1
	restore_ms=$(($(now_ms) - t0))
	rev=$(kc -n "$NS" get etcdcluster rpo-restored -o jsonpath='{.status.restoredFromArchive.revision}')
	win=$(kc -n "$NS" get earch rpo -o jsonpath='{.status.window.toRevision} {.status.window.toTime}')
	wc=$("$REPO/test/e2e/lib/writecheck.sh" verify-rpo rpo-restored "$d" wc-rpo 5 2>&1) || wc="$wc (OVER THE 5 s GOAL)"
	# The load's puts: acknowledged (HTTP 200, in order), and those present after the restore.
	sent=$(grep -c . "$loadlog" || true)
	ok=$(grep -c '^200$' "$loadlog" || true)
	last_ok=$(awk '$1 == 200 { i = NR } END { print i + 0 }' "$loadlog")
	present=$(kc -n "$NS" exec "$(kc -n "$NS" get pods -l etcd-operator.cozystack.io/cluster=rpo-restored -o jsonpath='{.items[0].metadata.name}')" -- \
		etcdctl get --prefix rpo-load- --keys-only | grep -c . || true)
	last_have=$(kc -n "$NS" exec "$(kc -n "$NS" get pods -l etcd-operator.cozystack.io/cluster=rpo-restored -o jsonpath='{.items[0].metadata.name}')" -- \
		etcdctl get --prefix rpo-load- --keys-only --sort-by=KEY --order=DESCEND --limit=1 | sed -n 's/^rpo-load-0*//p' | head -1)
	rm -f "$loadlog"
	echo "recovery point: 1 PVC member, EtcdArchive at defaults, $RPO_BENCH_RATE puts/s of 1 KiB for ${RPO_BENCH_SECONDS} s + the write checker, then the whole cluster destroyed (PVC deleted)"
	printf '%-52s %8d ms\n' "destruction: delete to cluster, Pod and PVC gone" "$gone_ms"
	printf '%-52s %s\n' "archive window end (status) / destruction at" "${win:-n/a} / $(date -u -d "@${d%.*}" +%FT%TZ)"
	printf '%-52s %8d ms  (to revision %s)\n' "restore to latest: apply to 1 ready member" "$restore_ms" "${rev:-n/a}"
	printf '%-52s %s\n' "write checker" "$(tail -1 <<<"$wc")"
	printf '%-52s %s\n' "load puts sent / acknowledged / present" "$sent / $ok / $present"
	printf '%-52s %s\n' "load puts acknowledged after the newest present" \
		"$(awk -v a="$last_ok" -v h="${last_have:-0}" -v r="$RPO_BENCH_RATE" 'BEGIN { printf "%d (about %.1f s at %d/s)", a - h, (a - h) / r, r }')"
}

# peak_kb: the most memory the operator container's cgroup has held since it
# started (cgroup v1 max_usage or v2 memory.peak, read on this host, where the
# local cluster's kubelet runs); empty when not readable. The manager
# container's own cgroup, found by its container ID: the Pod also runs
# kube-rbac-proxy and the pause container.
peak_kb() {
	local uid cid f
	uid=$(kc -n etcd-operator-system get pod "$pod" -o jsonpath='{.metadata.uid}' 2>/dev/null) || return 0
	cid=$(kc -n etcd-operator-system get pod "$pod" \
		-o jsonpath='{.status.containerStatuses[?(@.name=="manager")].containerID}' 2>/dev/null) || return 0
	cid=${cid#*://}
	[ -n "$cid" ] || return 0
	for f in /sys/fs/cgroup/memory/kubepods/*/pod"$uid"/"$cid"/memory.max_usage_in_bytes \
		/sys/fs/cgroup/memory/kubepods/pod"$uid"/"$cid"/memory.max_usage_in_bytes \
		/sys/fs/cgroup/kubepods*/*/*pod"${uid//-/_}"*/*"$cid"*/memory.peak; do
		[ -r "$f" ] || continue
		cat "$f"
	done 2>/dev/null | sort -n | tail -1 | awk '{ if ($1 > 0) printf "%d", $1 / 1024 }'
}

# idle_clusters <count>: declares <count> EtcdClusters with replicas: 0 in one apply.
idle_clusters() {
	local i
	for ((i = 0; i < $1; i++)); do
		printf 'apiVersion: etcd-operator.cozystack.io/v1alpha2\nkind: EtcdCluster\nmetadata: {name: idle-%d}\nspec: {replicas: 0, version: "%s"}\n---\n' "$i" "$VERSION"
	done | kc -n "$NS" apply -f - >/dev/null
}

# sample_metrics <file>: every 2 s until killed, one line per sample: seconds since
# start, then the operator's work queue depths, reconcile totals by controller and CPU
# seconds (BENCH_METRICS_LOG, to see what the operator is busy with during the scale run).
sample_metrics() {
	local t0=$(now_ms)
	while :; do
		curl -sk --max-time 5 -H "Authorization: Bearer $METRICS_TOKEN" "$METRICS_URL" 2>/dev/null |
			awk -v t="$(( ($(now_ms) - t0) / 1000 ))" '
				/^workqueue_depth\{/ { match($0, /name="[^"]*"/); d = d " q:" substr($0, RSTART + 6, RLENGTH - 7) "=" $2 }
				/^controller_runtime_reconcile_total\{/ {
					match($0, /controller="[^"]*"/); c = substr($0, RSTART + 12, RLENGTH - 13); r[c] += $2 }
				/^process_cpu_seconds_total/ { cpu = $2 }
				END { printf "%ss%s", t, d; for (c in r) printf " r:%s=%d", c, r[c]; printf " cpu=%s\n", cpu }' >>"$1"
		sleep 2
	done
}

# paused_count: how many EtcdClusters already carry the operator's Paused status.
paused_count() {
	kc -n "$NS" get etcdclusters -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Available")].reason}{"\n"}{end}' | grep -c '^Paused$' || true
}

scale_bench() {
	local i rss0 rss1 base loaded deadline per t0 declared fbase floaded idle applied cpu0 cpu1
	# Three running one-member clusters.
	for i in 1 2 3; do available "run-$i" 1 >/dev/null; done
	sleep 10
	rss0=$(rss_kb)
	fbase=$(floor s1)
	base=$(available probe-a 1)
	kc -n "$NS" delete etcdcluster probe-a --wait=false >/dev/null

	local sampler=
	if [ -n "${BENCH_METRICS_LOG:-}" ]; then
		: >"$BENCH_METRICS_LOG"
		sample_metrics "$BENCH_METRICS_LOG" &
		sampler=$!
	fi
	cpu0=$(cpu_s)
	t0=$(now_ms)
	idle_clusters "$SCALE_IDLE"
	# The apply alone (kubectl creating the objects one by one): the floor of the figure
	# below, which the operator cannot beat; on the bed with workers, every node's
	# kube-router programs each new NetworkPolicy and slows the apiserver for everyone.
	applied=$(($(now_ms) - t0))
	deadline=$(($(date +%s) + 900))
	until [ "$(paused_count)" -ge "$SCALE_IDLE" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "timed out waiting for $SCALE_IDLE idle clusters to be Paused" >&2; exit 1; }
		sleep 2
	done
	declared=$(($(now_ms) - t0))
	cpu1=$(cpu_s)
	sleep 20 # let the work queue drain and the heap settle
	rss1=$(rss_kb)
	# What the idle clusters cost while nothing happens: two minutes, so that every
	# periodic look (30 s and longer) falls inside it several times.
	idle=$(idle_cpu 120)
	floaded=$(floor s2)
	[ -z "$sampler" ] || echo "--- probe-b applied" >>"$BENCH_METRICS_LOG"
	loaded=$(available probe-b 1)
	[ -z "$sampler" ] || { echo "--- probe-b available" >>"$BENCH_METRICS_LOG"; sleep 4; kill "$sampler"; }
	# BENCH_PROBE_LOG=<file>: the operator's log lines about the loaded probe, to see where its time went.
	[ -z "${BENCH_PROBE_LOG:-}" ] || kc -n etcd-operator-system logs "$pod" 2>/dev/null | grep 'probe-b' >"$BENCH_PROBE_LOG" || true

	per=$(awk -v a="${rss0:-0}" -v b="${rss1:-0}" -v n="$SCALE_IDLE" 'BEGIN { printf "%.1f", (b - a) / n }')
	echo "scale: $SCALE_IDLE idle EtcdClusters (replicas: 0) beside 3 running one-member clusters"
	printf '%-52s %7s kB\n' "operator resident memory, 3 running clusters" "${rss0:-n/a}"
	printf '%-52s %7s kB\n' "operator resident memory, + $SCALE_IDLE idle clusters" "${rss1:-n/a}"
	printf '%-52s %7s kB\n' "per idle cluster" "$per"
	printf '%-52s %7s kB\n' "operator peak memory (cgroup) since its start" "$(peak_kb)"
	printf '%-52s %7s %%\n' "operator CPU, + $SCALE_IDLE idle clusters, 120 s idle" "$idle"
	printf '%-52s %8d ms\n' "$SCALE_IDLE idle clusters: kubectl apply returned" "$applied"
	printf '%-52s %8d ms\n' "$SCALE_IDLE idle clusters: apply to all Paused" "$declared"
	printf '%-52s %7s s\n' "operator CPU from the apply to all Paused" "$(awk -v a="${cpu0:-0}" -v b="${cpu1:-0}" 'BEGIN { if (a == 0 || b == 0) print "n/a"; else printf "%.1f", b - a }')"
	printf '%-52s %8d ms\n' "replicas=1 to Available, 3 running clusters" "$base"
	printf '%-52s %8d ms  (%s)\n' "replicas=1 to Available, + $SCALE_IDLE idle clusters" "$loaded" "$(ratio "$loaded" "$base")"
	# The same cluster's own slowdown, without the operator: a bare etcd Pod to Ready.
	printf '%-52s %8d ms\n' "bare etcd Pod to Ready, 3 running clusters" "$fbase"
	printf '%-52s %8d ms  (%s)\n' "bare etcd Pod to Ready, + $SCALE_IDLE idle clusters" "$floaded" "$(ratio "$floaded" "$fbase")"
}

restore_bench() {
	local t0 snap_ms ctl_ms restore_ms size log secs rss src
	# The MinIO image may be missing from a cluster started before it was built.
	"$REPO/hack/images.sh" minio >/dev/null
	kc -n "$NS" apply -f "$REPO/test/e2e/operator/snapshot-restore/minio.yaml" >/dev/null
	available snap-src 1 'storage: {size: 4Gi}' >/dev/null
	kc -n "$NS" wait pod minio --for=condition=Ready --timeout=3m >/dev/null
	size=$(NAMESPACE=$NS KUBECONFIG=$KUBECONFIG_FILE PATH=$K8S_BIN:$PATH "$REPO/test/e2e/lib/fill.sh" snap-src "$RESTORE_BENCH_MIB")
	src=$(kc -n "$NS" get pods -l etcd-operator.cozystack.io/cluster=snap-src -o jsonpath='{.items[0].metadata.name}')
	t0=$(now_ms)
	kc -n "$NS" exec "$src" -- etcdctl snapshot save /var/lib/etcd/bench.db >/dev/null 2>&1
	ctl_ms=$(($(now_ms) - t0))
	t0=$(now_ms)
	kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdSnapshot
metadata: {name: snap-src-1}
spec:
  clusterRef: {name: snap-src}
  destination:
    s3: {endpoint: "http://minio:9000", insecure: true, bucket: snaps, key: bench,
         forcePathStyle: true, credentialsSecretRef: {name: s3-creds}}
YAML
	kc -n "$NS" wait etcdsnapshot/snap-src-1 --for=jsonpath='{.status.phase}'=Complete --timeout=10m >/dev/null
	snap_ms=$(($(now_ms) - t0))
	log=$(kc -n "$NS" logs job/snap-src-1-snapshot 2>/dev/null | grep 'snapshot stored' | tail -1)
	secs=$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$log")
	rss=$(sed -n 's/.*peak_rss_kb=\([0-9]*\).*/\1/p' <<<"$log")
	t0=$(now_ms)
	kc -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdCluster
metadata: {name: snap-dst}
spec:
  replicas: 3
  version: "$VERSION"
  storage: {size: 4Gi}
  bootstrap:
    restore:
      source:
        s3: {endpoint: "http://minio:9000", insecure: true, bucket: snaps,
             key: bench/snap-src-1.db, forcePathStyle: true, credentialsSecretRef: {name: s3-creds}}
YAML
	ready snap-dst 3
	restore_ms=$(($(now_ms) - t0))
	echo "snapshot in the cluster: $RESTORE_BENCH_MIB x 1 MiB values, database $size bytes"
	printf '%-52s %8d ms\n' "etcdctl snapshot save in the member's Pod (exec)" "$ctl_ms"
	printf '%-52s %8s ms  (ratio to etcdctl %s)\n' "agent to MinIO (its own time, from its log)" \
		"$(awk -v s="${secs:-0}" 'BEGIN { printf "%d", s * 1000 }')" \
		"$(awk -v s="${secs:-0}" -v c="$ctl_ms" 'BEGIN { if (c > 0) printf "%.2f", s * 1000 / c; else print "n/a" }')"
	printf '%-52s %8d ms\n' "EtcdSnapshot apply to Complete (Job included)" "$snap_ms"
	printf '%-52s %8s kB\n' "agent peak resident memory" "${rss:-n/a}"
	printf '%-52s %8d ms\n' "restore: apply to 3 ready members" "$restore_ms"
}

case $MODE in
all)
	main_bench
	kc -n "$NS" delete etcdcluster --all --wait=true --timeout=5m >/dev/null
	echo
	roll_bench
	kc -n "$NS" delete etcdcluster --all --wait=true --timeout=5m >/dev/null
	echo
	defrag_bench
	kc -n "$NS" delete etcdcluster --all --wait=true --timeout=5m >/dev/null
	echo
	rpo_bench
	kc -n "$NS" delete etcdcluster --all --wait=true --timeout=5m >/dev/null
	kc -n "$NS" delete earch --all --wait=true --timeout=2m >/dev/null
	echo
	scale_bench
	kc -n "$NS" delete etcdcluster --all --wait=true --timeout=10m >/dev/null
	echo
	restore_bench
	echo
	"$REPO/bench/snapshot.sh"
	;;
snapshot)
	restore_bench
	echo
	"$REPO/bench/snapshot.sh"
	;;
main)
	main_bench
	kc -n "$NS" delete etcdcluster --all --wait=true --timeout=5m >/dev/null
	echo
	roll_bench
	kc -n "$NS" delete etcdcluster --all --wait=true --timeout=5m >/dev/null
	echo
	defrag_bench
	kc -n "$NS" delete etcdcluster --all --wait=true --timeout=5m >/dev/null
	echo
	rpo_bench
	kc -n "$NS" delete etcdcluster --all --wait=true --timeout=5m >/dev/null
	kc -n "$NS" delete earch --all --wait=true --timeout=2m >/dev/null
	echo
	restore_bench
	echo
	"$REPO/bench/snapshot.sh"
	;;
roll) roll_bench ;;
defrag) defrag_bench ;;
rpo) rpo_bench ;;
lifecycle) main_bench ;;
scale) scale_bench ;;
esac

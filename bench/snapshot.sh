#!/usr/bin/env bash
# Snapshot throughput of the agent beside `etcdctl snapshot save`, on this host's loopback
# (no Kubernetes: etcd and MinIO run as plain processes, so the figures are the agent's and
# not the Pod network's). Prints figures; asserts nothing about speed.
#
#   bench/snapshot.sh            (make bench runs it; SNAP_BENCH_MIB=1024 by default)
#
# A one-member etcd (ETCD_VERSION, default 3.6.11, from hack/tools/build.sh) with a 4 GiB
# quota is filled with SNAP_BENCH_MIB values of 1 MiB (incompressible), then, SNAP_BENCH_RUNS
# times in turn (default 2): etcdctl snapshot save to a file, the agent to a directory (the
# PVC destination) and the agent to MinIO (multipart S3). Reported: the median of each, the
# agent's time as a ratio to etcdctl's of the same run (below 1.0: the agent is faster), and
# the agent's peak resident memory (getrusage, as the agent logs it). MinIO runs on the same
# cores, so the S3 figure is also shown beside "etcdctl snapshot save, then a curl PUT of
# the file", what a script without the agent would do, and the CPU seconds etcd, the client
# (etcdctl or the agent) and MinIO spent per snapshot (medians) say where the time went.
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/../hack/lib.sh"

MIB=${SNAP_BENCH_MIB:-1024}
RUNS=${SNAP_BENCH_RUNS:-2}
VERSION=${ETCD_VERSION:-3.6.11}
ETCD_BIN=$(tool_bin "etcd-$VERSION")
MINIO_BIN=$(tool_bin minio)
AGENT=$REPO/bin/etcd-operator
[ -x "$AGENT" ] || die "no $AGENT: run make first"

W=$(mktemp -d /tmp/eo-snapbench.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

# A loopback port nobody listens on (ss is in iproute2).
free_port() {
	local p
	while :; do
		p=$((30000 + RANDOM % 20000))
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}
now_ms() { date +%s%3N; }

cport=$(free_port)
pport=$(free_port)
sport=$(free_port)
EP=http://127.0.0.1:$cport
"$ETCD_BIN/etcd" --data-dir "$W/etcd" --listen-client-urls "$EP" --advertise-client-urls "$EP" \
	--listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
	--initial-cluster "default=http://127.0.0.1:$pport" --quota-backend-bytes $((4 << 30)) \
	--log-level error >"$W/etcd.log" 2>&1 &
PIDS+=($!)
ETCD_PID=$!
mkdir -p "$W/minio/snaps"
MINIO_ROOT_USER=bench-access-key MINIO_ROOT_PASSWORD=bench-secret-key MINIO_BROWSER=off \
	"$MINIO_BIN/minio" server --quiet --address "127.0.0.1:$sport" "$W/minio" >"$W/minio.log" 2>&1 &
PIDS+=($!)
MINIO_PID=$!
for _ in $(seq 1 100); do
	"$ETCD_BIN/etcdctl" --endpoints "$EP" endpoint health >/dev/null 2>&1 &&
		curl -sf -o /dev/null "http://127.0.0.1:$sport/minio/health/ready" && break
	sleep 0.2
done

# Fill: 1 MiB values of random base64 text.
head -c $((768 * 1024)) /dev/urandom | base64 -w0 >"$W/value"
t0=$(now_ms)
for ((i = 1; i <= MIB; i++)); do
	"$ETCD_BIN/etcdctl" --endpoints "$EP" put "bench-$i" <"$W/value" >/dev/null
done
fill=$(($(now_ms) - t0))
dbsize=$("$ETCD_BIN/etcdctl" --endpoints "$EP" endpoint status -w json | jq '.[0].Status.dbSize')

export AWS_ACCESS_KEY_ID=bench-access-key AWS_SECRET_ACCESS_KEY=bench-secret-key
# CPU seconds: of a server so far (/proc/<pid>/stat utime + stime), of the last timed command.
TICK=$(getconf CLK_TCK)
cpu_of() { awk -v t="$TICK" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
TIMEFORMAT='%U %S'
cmd_cpu() { awk '{ printf "%.2f", $1 + $2 }' "$W/time"; }
# cpu_start; <command>; cpu_line: "<etcd> <command> <minio>" CPU seconds of that command
cpu_start() { e0=$(cpu_of "$ETCD_PID") m0=$(cpu_of "$MINIO_PID"); }
cpu_line() { awk -v e0="$e0" -v e1="$(cpu_of "$ETCD_PID")" -v c="$(cmd_cpu)" -v m0="$m0" -v m1="$(cpu_of "$MINIO_PID")" 'BEGIN { printf "%.2f %.2f %.2f", e1 - e0, c, m1 - m0 }'; }
# agent <name> <destination flags...>: ms, peak RSS kB, the ms the stream waited for S3
# part uploads and the CPU line ("<ms> <kB> <wait> <etcd> <agent> <minio>")
agent() {
	local name=$1 t0 ms rss wait
	shift
	cpu_start
	t0=$(now_ms)
	{ time "$AGENT" snapshot-agent --snapshot-name "$name" --snapshot-uid "$name" --endpoint "$EP" "$@" \
		>"$W/$name.out" 2>"$W/$name.log"; } 2>"$W/time"
	ms=$(($(now_ms) - t0))
	rss=$(sed -n 's/.*peak_rss_kb=\([0-9]*\).*/\1/p' "$W/$name.log" | tail -1)
	wait=$(sed -n 's/.*store_wait_ms=\([0-9]*\).*/\1/p' "$W/$name.log" | tail -1)
	echo "$ms ${rss:-0} ${wait:-0} $(cpu_line)"
}
# put_ms <file> <key>: a plain curl PUT of the file to MinIO (SigV4, signed payload as the
# agent sends it), the reference for "etcdctl snapshot save, then upload it".
put_ms() {
	local t0 sha
	t0=$(now_ms)
	sha=$(sha256sum <"$1" | cut -c1-64)
	curl -sSf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
		-H "x-amz-content-sha256: $sha" -T "$1" "http://127.0.0.1:$sport/snaps/$2" -o /dev/null
	echo $(($(now_ms) - t0))
}
ctl_ms=() up_ms=() dir_ms=() s3_ms=() dir_rss=() s3_rss=() s3_wait=()
ctl_cpu=() dir_cpu=() s3_cpu=()
for ((r = 1; r <= RUNS; r++)); do
	rm -rf "$W/out" && mkdir -p "$W/out"
	cpu_start
	t0=$(now_ms)
	{ time "$ETCD_BIN/etcdctl" --endpoints "$EP" snapshot save "$W/out/ctl.db" >/dev/null 2>&1; } 2>"$W/time"
	ctl_ms+=($(($(now_ms) - t0)))
	ctl_cpu+=("$(cpu_line)")
	up_ms+=($((ctl_ms[-1] + $(put_ms "$W/out/ctl.db" "ctl-$r.db"))))
	rm -f "$W/out/ctl.db"
	read -r ms rss _ ce ca cm < <(agent "dir-$r" --pvc-dir "$W/out")
	dir_ms+=("$ms") dir_rss+=("$rss") dir_cpu+=("$ce $ca $cm")
	rm -f "$W/out/"*
	read -r ms rss wait ce ca cm < <(agent "s3-$r" --s3-endpoint "http://127.0.0.1:$sport" --s3-bucket snaps --s3-force-path-style --s3-insecure)
	s3_ms+=("$ms") s3_rss+=("$rss") s3_wait+=("$wait") s3_cpu+=("$ce $ca $cm")
	# The objects are not needed any more: keep the disk from filling across runs.
	rm -rf "$W/minio/snaps/"*
done

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
maxof() { printf '%s\n' "$@" | sort -n | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
mbps() { awk -v b="$1" -v ms="$2" 'BEGIN { if (ms > 0) printf "%.0f MB/s", b / 1e6 / (ms / 1000); else print "n/a" }'; }

c=$(median "${ctl_ms[@]}") u=$(median "${up_ms[@]}") d=$(median "${dir_ms[@]}") s=$(median "${s3_ms[@]}")
echo "snapshot: etcd $VERSION, $MIB x 1 MiB values, database $dbsize bytes (filled in $fill ms), $(nproc) cores, median of $RUNS runs"
printf '%-44s %8d ms  %s  (runs: %s)\n' "etcdctl snapshot save (file)" "$c" "$(mbps "$dbsize" "$c")" "${ctl_ms[*]}"
printf '%-44s %8d ms  %s  (runs: %s)\n' "etcdctl snapshot save, then curl PUT to MinIO" "$u" "$(mbps "$dbsize" "$u")" "${up_ms[*]}"
printf '%-44s %8d ms  %s  ratio to etcdctl %s (runs: %s)\n' "agent to a directory (PVC destination)" "$d" "$(mbps "$dbsize" "$d")" "$(ratio "$d" "$c")" "${dir_ms[*]}"
printf '%-44s %8d ms  %s  ratio to etcdctl %s, to etcdctl+PUT %s (runs: %s)\n' "agent to MinIO (S3 multipart)" "$s" "$(mbps "$dbsize" "$s")" "$(ratio "$s" "$c")" "$(ratio "$s" "$u")" "${s3_ms[*]}"
printf '%-44s %8s kB (directory), %s kB (S3)\n' "agent peak resident memory" "$(maxof "${dir_rss[@]}")" "$(maxof "${s3_rss[@]}")"
printf '%-44s %8d ms  (runs: %s)\n' "agent to MinIO: stream waiting for uploads" "$(median "${s3_wait[@]}")" "${s3_wait[*]}"
# Medians of the CPU seconds each process spent per snapshot: on a shared machine the
# pipeline that needs more CPU loses, whatever its parallelism.
cpumed() { # <column 1-3> <"e c m" triples...>
	local col=$1
	shift
	printf '%s\n' "$@" | awk -v c="$col" '{ print $c }' | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
printf '%-44s etcd %s s + etcdctl %s s\n' "CPU per snapshot, etcdctl (median)" "$(cpumed 1 "${ctl_cpu[@]}")" "$(cpumed 2 "${ctl_cpu[@]}")"
printf '%-44s etcd %s s + agent %s s\n' "CPU per snapshot, agent to a directory" "$(cpumed 1 "${dir_cpu[@]}")" "$(cpumed 2 "${dir_cpu[@]}")"
printf '%-44s etcd %s s + agent %s s + MinIO %s s\n' "CPU per snapshot, agent to MinIO" "$(cpumed 1 "${s3_cpu[@]}")" "$(cpumed 2 "${s3_cpu[@]}")" "$(cpumed 3 "${s3_cpu[@]}")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Runs integration test binaries against real etcd servers.
#
#   test/integration/run.sh build/itest/test_a [build/itest/test_b ...]
#
# For every etcd version and every binary, a fresh single-member etcd is
# started on free loopback ports in a temporary directory, the binary runs
# against it (once plainly and once under valgrind), and the server is
# stopped again. Everything is removed on exit, including on failure or ^C.
#
# What a test binary gets (environment):
#   EO_ITEST_ETCD        etcd binary of this version (to start more members)
#   EO_ITEST_VERSION     its version, e.g. 3.5.35
#   EO_ITEST_ENDPOINT    client URL of the running member
#   EO_ITEST_PEER_URL    its peer URL
#   EO_ITEST_NAME        its member name
#   EO_ITEST_WORKDIR     a scratch directory of its own
#   EO_ITEST_ETCD_FLAGS  extra etcd flags for this version (space separated)
#   EO_ITEST_TLS_DIR     test PKI: ca.crt, server.{crt,key}, client.{crt,key},
#                        other-ca.crt
#   EO_ITEST_MINIO       a MinIO server binary (hack/tools/build.sh minio)
#   EO_ITEST_ETCDUTL_LATEST  etcdutl of the newest etcd version covered
#
# Knobs:
#   EO_ITEST_VERSIONS  etcd versions to cover (default "3.4 3.5.35 3.6.11 3.6.16 3.7.3";
#                      3.4 is Debian's /usr/bin/etcd, the others are built from
#                      the pinned modules by hack/tools/build.sh, instant once cached)
#   EO_ITEST_VALGRIND  1 (default) also runs every binary under valgrind; 0 skips that
#   EO_ITEST_VALGRIND_VERSIONS  the versions whose runs are repeated under valgrind
#                      (default "3.4 3.7.3": the oldest and the newest gateway; every
#                      version still runs plainly; "all" for every version; when
#                      none of them is in EO_ITEST_VERSIONS, the last of those)
#   EO_ITEST_KEEP      1 keeps the temporary directory (logs) for a look afterwards
#   EO_ITEST_JOBS      how many versions run at once (default 1). Above 1 the versions
#                      are split into that many groups, the valgrind versions first and
#                      each in a group of its own where possible, run side by side by
#                      this script itself; each group's output is printed whole when it
#                      ends, and the run fails when any group failed
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
versions=${EO_ITEST_VERSIONS:-"3.4 3.5.35 3.6.11 3.6.16 3.7.3"}
use_valgrind=${EO_ITEST_VALGRIND:-1}
valgrind_versions=${EO_ITEST_VALGRIND_VERSIONS:-"3.4 3.7.3"}
# None of them covered (EO_ITEST_VERSIONS=3.5.35, say): valgrind on the last one. (Not in
# a group of EO_ITEST_JOBS: the whole run's choice was made before the split.)
[ -n "${EO_ITEST_GROUP:-}" ] || case " $valgrind_versions " in *" all "*) ;; *)
	hit=
	for v in $versions; do
		case " $valgrind_versions " in *" $v "*) hit=1 ;; esac
	done
	[ -n "$hit" ] || valgrind_versions=${versions##* }
	;;
esac
per_run_timeout=300

if [ $# -eq 0 ]; then
	echo "usage: $0 TEST_BINARY..." >&2
	exit 2
fi
for t in "$@"; do
	[ -x "$t" ] || { echo "run.sh: $t is not an executable" >&2; exit 2; }
done
if [ "$use_valgrind" = 1 ] && ! command -v valgrind >/dev/null; then
	echo "run.sh: valgrind not found (apt-get install valgrind, or EO_ITEST_VALGRIND=0)" >&2
	exit 2
fi

jobs=${EO_ITEST_JOBS:-1}
case $jobs in '' | *[!0-9]*) echo "run.sh: EO_ITEST_JOBS must be a number" >&2; exit 2 ;; esac
if [ "$jobs" -gt 1 ] && [ -z "${EO_ITEST_GROUP:-}" ] && [ "$(wc -w <<<"$versions")" -gt 1 ]; then
	# The valgrind versions first, so that the heaviest runs land in different groups.
	ordered=()
	for v in $versions; do
		case " $valgrind_versions " in *" all "* | *" $v "*) ordered+=("$v") ;; esac
	done
	for v in $versions; do
		case " $valgrind_versions " in *" all "* | *" $v "*) ;; *) ordered+=("$v") ;; esac
	done
	groups=()
	for i in "${!ordered[@]}"; do
		g=$((i % jobs))
		groups[g]="${groups[g]:+${groups[g]} }${ordered[i]}"
	done
	gdir=$(mktemp -d "${TMPDIR:-/tmp}/eo-itest-groups.XXXXXX")
	pids=()
	trap 'kill -TERM "${pids[@]}" 2>/dev/null; rm -rf "$gdir"; exit 130' INT TERM
	start_all=$(date +%s)
	for g in "${!groups[@]}"; do
		echo "== integration: group $((g + 1)) of ${#groups[@]}: ${groups[g]}"
		EO_ITEST_GROUP=$((g + 1)) EO_ITEST_VERSIONS="${groups[g]}" EO_ITEST_VALGRIND_VERSIONS="$valgrind_versions" \
			"$0" "$@" >"$gdir/$g.log" 2>&1 &
		pids[g]=$!
	done
	rc=0
	for g in "${!groups[@]}"; do
		grc=0
		wait "${pids[g]}" || grc=$?
		echo "== integration: group $((g + 1)) (${groups[g]}), exit $grc:"
		cat "$gdir/$g.log"
		[ "$grc" = 0 ] || rc=1
	done
	rm -rf "$gdir"
	echo "== integration: ${#groups[@]} groups side by side; $(($(date +%s) - start_all))s"
	exit "$rc"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/eo-itest.XXXXXX")
etcd_pid=
test_pid=

cleanup() {
	local rc=$?
	if [ -n "$test_pid" ]; then
		kill -TERM -- "-$test_pid" 2>/dev/null || true
		wait "$test_pid" 2>/dev/null || true
	fi
	stop_etcd
	if [ "${EO_ITEST_KEEP:-0}" = 1 ]; then
		echo "run.sh: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "run.sh: $*" >&2; }

# A loopback port nobody listens on right now, below the usual ephemeral
# range so that no outgoing connection holds it (etcd may still lose a race
# for it; start_etcd retries with new ports).
pick_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

etcd_bin() {
	local v=$1 dir
	case $v in
	3.4 | 3.4.*)
		[ -x /usr/bin/etcd ] || { log "etcd 3.4 needs Debian's etcd-server package"; return 1; }
		echo /usr/bin/etcd
		;;
	*)
		dir=$("$root/hack/tools/build.sh" "etcd-$v") || { log "cannot build etcd $v"; return 1; }
		echo "$dir/etcd"
		;;
	esac
}

# Is the member at $1 answering on the v3 gateway?
ready() {
	if command -v curl >/dev/null; then
		curl -sf --noproxy '*' -m 2 -X POST -d '{}' "$1/v3/maintenance/status" |
			grep -q '"leader"'
	else
		ETCDCTL_API=3 "$(dirname "$bin")/etcdctl" --endpoints "$1" --command-timeout=2s \
			endpoint health >/dev/null 2>&1
	fi
}

stop_etcd() {
	local i
	[ -n "$etcd_pid" ] || return 0
	kill -TERM "$etcd_pid" 2>/dev/null || true
	for i in $(seq 1 100); do
		kill -0 "$etcd_pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$etcd_pid" 2>/dev/null || true
	wait "$etcd_pid" 2>/dev/null || true
	etcd_pid=
}

# start_etcd DIR: starts member "a" of a new cluster; sets endpoint, peer_url.
start_etcd() {
	local dir=$1 attempt cport pport i
	for attempt in 1 2 3; do
		cport=$(pick_port)
		pport=$(pick_port)
		[ "$cport" != "$pport" ] || continue
		endpoint=http://127.0.0.1:$cport
		peer_url=http://127.0.0.1:$pport
		rm -rf "$dir/a.etcd"
		mkdir -p "$dir"
		# shellcheck disable=SC2086 # flags are words on purpose
		"$bin" --name a --data-dir "$dir/a.etcd" \
			--listen-client-urls "$endpoint" --advertise-client-urls "$endpoint" \
			--listen-peer-urls "$peer_url" --initial-advertise-peer-urls "$peer_url" \
			--initial-cluster "a=$peer_url" --initial-cluster-state new \
			$flags >"$dir/a.log" 2>&1 &
		etcd_pid=$!
		for i in $(seq 1 200); do
			if ready "$endpoint"; then
				return 0
			fi
			kill -0 "$etcd_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$etcd_pid" 2>/dev/null; then
			log "etcd $version at $endpoint not ready after 20s (attempt $attempt)"
		else
			log "etcd $version exited at start (attempt $attempt)"
		fi
		tail -n 5 "$dir/a.log" >&2 || true
		stop_etcd
	done
	return 1
}

# Test PKI for the TLS scenarios: a CA, a server certificate for 127.0.0.1
# (serverAuth and clientAuth: etcd's gateway dials its own gRPC server with
# it), a client certificate without a CommonName, and an unrelated CA.
make_pki() {
	local d=$1 ext
	mkdir -p "$d"
	ext=$d/ext.cnf
	ca() {
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout "$d/$1.key" -out "$d/$1.crt" -subj "/CN=$1" -days 2 \
			-addext basicConstraints=critical,CA:TRUE \
			-addext keyUsage=critical,keyCertSign,cRLSign
	}
	leaf() { # name subject extensions
		printf '%b\n' "$3" >"$ext"
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout "$d/$1.key" -out "$d/$1.csr" -subj "$2" &&
			openssl x509 -req -in "$d/$1.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
				-CAcreateserial -out "$d/$1.crt" -days 2 -extfile "$ext"
	}
	ca ca && ca other-ca &&
		leaf server /CN=etcd "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature" &&
		leaf client /O=eo-itest "subjectAltName=DNS:eo-itest-client\nextendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature"
}

# The TLS scenarios are part of the suite: without a test PKI the run fails.
command -v openssl >/dev/null || { log "openssl is required (Debian package openssl)"; exit 1; }
if ! make_pki "$tmp/pki" >"$tmp/pki.log" 2>&1; then
	log "cannot create test certificates:"
	tail -n 5 "$tmp/pki.log" >&2
	exit 1
fi
tls_dir=$tmp/pki

# The agent tests store snapshots in a real MinIO and restore them with the
# newest etcdutl as well as each version's own.
minio=$("$root/hack/tools/build.sh" minio)/minio || { log "cannot build minio"; exit 1; }
etcdutl_latest=
for v in $versions; do
	case $v in 3.4 | 3.4.*) continue ;; esac
	etcdutl_latest=$(dirname "$(etcd_bin "$v")")/etcdutl
done
[ -n "$etcdutl_latest" ] || { log "no etcd version with an etcdutl among: $versions"; exit 1; }

passed=0
failed=0
runs=0
failures=()
start_all=$(date +%s)

for v in $versions; do
	bin=$(etcd_bin "$v")
	version=$("$bin" --version | sed -n 's/^etcd Version: //p')
	case $version in
	3.4.*) flags="--enable-v2=false" ;;
	*) flags="" ;;
	esac
	modes="plain"
	if [ "$use_valgrind" = 1 ]; then
		for w in $valgrind_versions; do
			case $w in all | "$v" | "$version") modes="plain valgrind" ;; esac
		done
	fi
	for t in "$@"; do
		name=$(basename "$t")
		for mode in $modes; do
			runs=$((runs + 1))
			dir=$tmp/$runs-$version-$name-$mode
			mkdir -p "$dir/work"
			label="$name etcd=$version${mode/plain/}"
			label=${label/valgrind/ (valgrind)}
			echo "== $label"
			if ! start_etcd "$dir"; then
				failed=$((failed + 1))
				failures+=("$label (etcd did not start)")
				continue
			fi
			cmd=("$t")
			if [ "$mode" = valgrind ]; then
				cmd=(valgrind -q --error-exitcode=1 --leak-check=full
					--errors-for-leak-kinds=definite "$t")
			fi
			t0=$(date +%s)
			rc=0
			# timeout puts the test and the members it starts into a
			# process group of their own, which cleanup() can end.
			EO_ITEST_ETCD=$bin EO_ITEST_VERSION=$version EO_ITEST_ENDPOINT=$endpoint \
				EO_ITEST_PEER_URL=$peer_url EO_ITEST_NAME=a EO_ITEST_WORKDIR=$dir/work \
				EO_ITEST_ETCD_FLAGS=$flags EO_ITEST_TLS_DIR=$tls_dir \
				EO_ITEST_MINIO=$minio EO_ITEST_ETCDUTL_LATEST=$etcdutl_latest \
				timeout "$per_run_timeout" "${cmd[@]}" &
			test_pid=$!
			wait "$test_pid" || rc=$?
			test_pid=
			stop_etcd
			if [ "$rc" = 0 ]; then
				passed=$((passed + 1))
				echo "-- ok: $label ($(($(date +%s) - t0))s)"
			else
				failed=$((failed + 1))
				failures+=("$label (exit $rc)")
				echo "-- FAILED: $label (exit $rc); etcd log tail:"
				tail -n 20 "$dir/a.log" || true
				for f in "$dir"/work/*.log; do
					[ -f "$f" ] || continue
					echo "-- $(basename "$f") tail:"
					tail -n 20 "$f"
				done
			fi
		done
	done
done

echo "== integration: versions: $versions; $(($(date +%s) - start_all))s"
for f in "${failures[@]+"${failures[@]}"}"; do
	echo "   failed: $f"
done
echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

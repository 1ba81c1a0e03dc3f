#!/usr/bin/env bash
# Runs the libFuzzer targets (make fuzz; docs/development.md).
#   test/fuzz/run.sh SECONDS build/fuzz/bin/fuzz_<name>...
# For each target: replays its committed inputs (test/fuzz/<name>/seeds and
# regressions) once, then, when SECONDS > 0, fuzzes for SECONDS with the
# committed inputs as the starting corpus, test/fuzz/<name>.dict when present,
# new inputs kept in build/fuzz/corpus/<name> and a crashing input written to
# build/fuzz/crashes/<name>/. Exits non-zero when a target fails.
#
# A run is a fixed number of inputs per target (the table below, sized for about
# 15 s each on this project's 2-core machine under load), with 4 x SECONDS as a
# safety cap: with the fixed seed and an empty corpus (a fresh clone, as in CI)
# every machine tries the same inputs, so a CI failure is found again by running
# `make fuzz` in a fresh clone, and a green local run in one means a green CI fuzz.
# FUZZ_RUNS=0 fuzzes for SECONDS instead (longer local hunts, e.g.
# `make fuzz FUZZ_SECONDS=600 FUZZ_RUNS=0 FUZZ_SEED=0`).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:?seconds}
shift
# Inputs per target for a default run (measured rates: docs/development.md).
runs_for() {
	case $1 in
	fuzz_plan) echo 10000 ;;
	fuzz_quantity_time) echo 800000 ;;
	fuzz_cluster) echo 250000 ;;
	fuzz_snapstream) echo 100000 ;;
	*) echo 160000 ;;
	esac
}
# Targets run FUZZ_JOBS at a time (default: one per core; each is one process). A
# target's output is kept apart and printed whole, in the order given, once all ended;
# the run fails when any target failed.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
if [ "$jobs" -gt 1 ] && [ $# -gt 1 ]; then
	logs=$(mktemp -d)
	trap 'rm -rf "$logs"' EXIT
	rc=0
	printf '%s\n' "$@" | FUZZ_JOBS=1 xargs -P "$jobs" -I{} \
		sh -c '"$0" "$1" "$2" >"$3/$(basename "$2").log" 2>&1' "$0" "$secs" {} "$logs" || rc=$?
	for bin in "$@"; do cat "$logs/$(basename "$bin").log"; done
	[ "$rc" = 0 ] || echo "fuzz: at least one target failed (its log above)" >&2
	exit $((rc != 0))
fi
# Leaks are bugs too; stop at the first UBSan report.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for bin in "$@"; do
	name=$(basename "$bin")
	dir=test/fuzz/$name
	corpus=build/fuzz/corpus/$name
	crashes=build/fuzz/crashes/$name
	mkdir -p "$corpus" "$crashes" "$dir/seeds" "$dir/regressions"
	mapfile -t inputs < <(find "$dir/seeds" "$dir/regressions" -type f ! -name '.*' | sort)
	echo "== $name: replaying ${#inputs[@]} committed input(s)"
	if [ ${#inputs[@]} -gt 0 ]; then
		"$bin" -runs=1 "${inputs[@]}" </dev/null >"$crashes/replay.log" 2>&1 || {
			cat "$crashes/replay.log" >&2
			echo "fuzz: $name fails on a committed input (log above)" >&2
			exit 1
		}
	fi
	[ "$secs" -gt 0 ] || continue
	# A fixed seed (FUZZ_SEED, default 1; 0 lets libFuzzer pick) makes a CI run's
	# mutations the same on every machine, so what it finds can be found again.
	args=(-seed="${FUZZ_SEED:-1}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
		-artifact_prefix="$crashes/")
	if [ "${FUZZ_RUNS:-}" = 0 ]; then
		args+=(-max_total_time="$secs")
		echo "== $name: fuzzing for ${secs}s"
	else
		runs=${FUZZ_RUNS:-$(runs_for "$name")}
		args+=(-runs="$runs" -max_total_time=$((secs * 4)))
		echo "== $name: fuzzing $runs inputs (at most $((secs * 4))s)"
	fi
	[ -f "test/fuzz/$name.dict" ] && args+=(-dict="test/fuzz/$name.dict")
	if ! "$bin" "${args[@]}" "$corpus" "$dir/seeds" "$dir/regressions" </dev/null \
		>"$crashes/fuzz.log" 2>&1; then
		# What failed first (the invariant or sanitizer line), then the end of the log.
		grep -m 5 -E 'fuzz invariant violated|ERROR: |runtime error|SUMMARY' \
			"$crashes/fuzz.log" >&2 || true
		tail -n 40 "$crashes/fuzz.log" >&2
		echo "fuzz: $name found a crash; the input is in $crashes/ (reproduce: $bin <file>)" >&2
		exit 1
	fi
	grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+ *DONE' "$crashes/fuzz.log" |
		sed 's/^/   /' || true
done

#!/usr/bin/env bash
# Runs the libFuzzer targets (make fuzz; docs/development.md).
#   test/fuzz/run.sh SECONDS build/fuzz/bin/fuzz_<name>...
# For each target: replays its committed inputs (test/fuzz/<name>/seeds and
# regressions) once, then, when SECONDS > 0, fuzzes for SECONDS with the
# committed inputs as the starting corpus, test/fuzz/<name>.dict when present,
# new inputs kept in build/fuzz/corpus/<name> and a crashing input written to
# build/fuzz/crashes/<name>/. Exits non-zero on the first target that fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:?seconds}
shift
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
	args=(-seed="${FUZZ_SEED:-1}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
		-artifact_prefix="$crashes/")
	[ -f "test/fuzz/$name.dict" ] && args+=(-dict="test/fuzz/$name.dict")
	echo "== $name: fuzzing for ${secs}s"
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

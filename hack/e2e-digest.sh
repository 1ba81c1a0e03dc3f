#!/usr/bin/env bash
# Print a short account of every failed e2e case, for the end of a run whose
# output is read from its tail (CI shows the last lines only):
#
#   hack/e2e-digest.sh <report-dir>
#
# For each failed case in <report-dir>/chainsaw-report*.json: its lane, the
# failed step and operation, how long the operation ran, the error Chainsaw
# recorded, and the last lines that case printed before its first error, taken
# from the lane's console log (<report-dir>/<lane>.log, written by hack/e2e.sh).
# E2E_DIGEST_LINES (default 16) caps the lines shown before the error.
set -uo pipefail

dir=${1:?usage: e2e-digest.sh <report-dir>}
lines=${E2E_DIGEST_LINES:-16}
shopt -s nullglob

for report in "$dir"/chainsaw-report*.json; do
	lane=${report##*/chainsaw-report}
	lane=${lane%.json}
	lane=${lane#-}
	lane=${lane:-main}
	jq -r '.tests[]? | select(.status != "passed") | .name as $t
		| ([.steps[]? | select(.status != "passed")] | first) as $s
		| ([$s.operations[]? | select(.status != "passed")] | first) as $o
		| [$t, ($s.name // "-"), ($o.name // "-"), ($o.type // "-"),
		   (($o.startTime // "") | sub("\\.[0-9]+Z$"; "Z")), (($o.endTime // "") | sub("\\.[0-9]+Z$"; "Z")),
		   (($o.failure.error // "no error recorded") | gsub("\n"; " ") | .[0:400])] | @tsv' \
		"$report" 2>/dev/null |
		while IFS=$'\t' read -r test step op type start end err; do
			secs=-
			if [ -n "$start" ] && [ -n "$end" ]; then
				secs=$(($(date -d "$end" +%s) - $(date -d "$start" +%s)))
			fi
			echo "FAILED [$lane] $test: step '$step', $op ($type, ${secs}s): $err"
			log=$dir/$lane.log
			[ -f "$log" ] || continue
			# The case's lines: Chainsaw's own lines name the case between bars; the
			# output under them (=== STDOUT, ...) belongs to the last case named, and
			# go test's "=== NAME/RUN/CONT chainsaw/<case>" switch between cases.
			sed 's/^\[[a-z]*\] //' "$log" | awk -v t="$test" -v n="$lines" '
				/^=== (NAME|RUN|CONT|PAUSE) / { cur = $3; sub(/^chainsaw\//, "", cur); next }
				/sink\.go:[0-9]+: \| / { split($0, f, "|"); c = f[3]; gsub(/ /, "", c); if (c != "") cur = c }
				cur != t { next }
				{ buf[++k] = $0 }
				/\| ERROR +\|/ && !e { e = k }
				END {
					if (!e) e = k
					for (i = (e > n ? e - n + 1 : 1); i < e; i++) print "    " substr(buf[i], 1, 240)
					# the error line and what Chainsaw printed under it
					for (i = e; i <= k && (i == e || index(buf[i], "sink.go:") == 0); i++) print "    " substr(buf[i], 1, 240)
				}'
		done
done

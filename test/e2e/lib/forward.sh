# shellcheck shell=bash
# Sourced by the e2e helpers: a kubectl port-forward on a local port kubectl chooses itself.
#
#   forward_start <namespace> <resource> <remote port> <ready command...>
#       starts `kubectl port-forward` to 127.0.0.1:<a free port>, sets FWD_PORT and FWD_PID,
#       then runs the ready command with FWD_URL (http://127.0.0.1:<port>) set until it
#       succeeds (10 s at most). Up to 3 tries with a new forward; returns 1 when none works.
#   forward_stop
#
# A port chosen here at random (20000-40000) could already be taken: the range overlaps the
# kernel's ephemeral ports (32768-60999), and a forward that cannot bind exits at once. That
# was a CI failure (restore-corrupted: "Failed to connect to 127.0.0.1 port 39730").

FWD_PORT='' FWD_PID='' FWD_URL='' FWD_LOG=''

forward_start() {
	local ns=$1 res=$2 remote=$3 try i
	shift 3
	for try in 1 2 3; do
		FWD_LOG=$(mktemp)
		kubectl -n "$ns" port-forward --address 127.0.0.1 "$res" ":$remote" >"$FWD_LOG" 2>&1 &
		FWD_PID=$!
		FWD_PORT=''
		for i in $(seq 1 50); do
			FWD_PORT=$(sed -n 's/^Forwarding from 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$FWD_LOG" | head -1)
			[ -n "$FWD_PORT" ] && break
			kill -0 "$FWD_PID" 2>/dev/null || break
			sleep 0.2
		done
		if [ -n "$FWD_PORT" ]; then
			FWD_URL=http://127.0.0.1:$FWD_PORT
			for i in $(seq 1 50); do
				if FWD_URL=$FWD_URL "$@" >/dev/null 2>&1; then
					rm -f "$FWD_LOG"
					return 0
				fi
				kill -0 "$FWD_PID" 2>/dev/null || break
				sleep 0.2
			done
		fi
		echo "forward.sh: port-forward to $ns/$res:$remote not ready (try $try): $(tr '\n' ' ' <"$FWD_LOG")" >&2
		forward_stop
	done
	return 1
}

forward_stop() {
	if [ -n "$FWD_PID" ]; then
		kill "$FWD_PID" 2>/dev/null || true
		wait "$FWD_PID" 2>/dev/null || true
	fi
	[ -z "$FWD_LOG" ] || rm -f "$FWD_LOG"
	FWD_PID='' FWD_LOG=''
}

# Shared by the e2e checkers that run a Pod against a cluster (writecheck.sh, lincheck.sh):
# sourced, not run. The sourcing script sets ns (the test namespace) and tls
# (<CA Secret>/<client certificate Secret>, empty for plain HTTP) first.

me=$(basename "$0" .sh)

die() {
	echo "$me: $*" >&2
	exit 1
}

kc() { kubectl -n "$ns" "$@"; }

# Prints the sourcing script's header comment (its usage) and exits 2.
usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
}

# checker_tls <cluster>: with tls set, points endpoint at the cluster's client Service by
# the name its server certificate carries (docs/operations.md's SANs) and adds the CA and
# client certificate Secrets to the Pod's vols and the container's mounts (at /ca and /cert).
# Sets the caller's endpoint, vols and mounts; without tls it changes nothing.
checker_tls() {
	[ -n "$tls" ] || return 0
	endpoint="https://$1-client.$ns.svc:2379"
	vols="
  - {name: ca, secret: {secretName: ${tls%%/*}, items: [{key: ca.crt, path: ca.crt}]}}
  - {name: cert, secret: {secretName: ${tls#*/}}}"
	mounts="
    - {name: ca, mountPath: /ca}
    - {name: cert, mountPath: /cert}"
}

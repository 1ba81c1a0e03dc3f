#!/usr/bin/env bash
# Fault injectors for the chaos cases of the e2e suite (issue 18, item 2), on
# the local bed with worker nodes (hack/nodes.sh; `EO_WORKERS=N make cluster-up`).
# Run as root on the machine that runs the bed and Chainsaw; Pods are looked up
# in $NAMESPACE (set by Chainsaw; default "default").
#
#   faults.sh node-stop <node>
#       Power loss of a worker: its link is cut first, then its kubelet,
#       containerd, kube-proxy, kube-router, the containerd shims and every
#       process of its Pods are SIGKILLed. Nothing is told: the apiserver sees
#       the node go NotReady after the node-monitor grace period (40 s).
#   faults.sh node-start <node>
#       Power back on: what a reboot loses (containerd's and runc's state
#       under /run) is dropped, the disk (images, kubelet dir, local volumes)
#       is kept, the link comes back and the components start; returns when the
#       node is Ready. Pods of the node are restarted by its kubelet, or were
#       deleted meanwhile.
#   faults.sh drain <node> [timeout-seconds]
#       As an administrator does it: `kubectl cordon`, then `kubectl drain
#       --ignore-daemonsets --delete-emptydir-data` (evictions, so
#       PodDisruptionBudgets hold it back; default timeout 300 s, non-zero exit
#       when the drain did not finish in time).
#   faults.sh uncordon <node>
#   faults.sh partition <node> [both|in|out] [all|pods]
#       Cut a worker's network link: both directions (default), only what
#       comes in, or only what goes out. Scope all (default): everything on the
#       link, so the kubelet loses the apiserver too and the node goes NotReady;
#       pods: only traffic to/from the node's Pod CIDR, the node itself (kubelet)
#       stays connected and Ready. Rules in the node's own network namespace
#       (raw PREROUTING for in, mangle POSTROUTING for out), ahead of anything
#       kube-proxy or kube-router add.
#   faults.sh heal <node>
#       Remove the partition of <node>.
#   faults.sh partition-operator [namespace] [label-selector]
#       In the network namespace of each operator Pod (default namespace
#       etcd-operator-system, selector app.kubernetes.io/name=etcd-operator):
#       drop everything it sends to the worker nodes' Pods (10.89.0.0/16) and to
#       the ClusterIPs of $NAMESPACE's Services. It still reaches the apiserver,
#       cluster DNS and every Pod on the control-plane node: the cut isolates the
#       fault case's members (on the workers) and leaves the clusters of the e2e
#       main lane, which runs at the same time against the same operator, alone.
#   faults.sh heal-operator [namespace] [label-selector]
#   faults.sh disk-throttle <pod> [write-bytes/s] [write-iops] [container]
#       Throttle the container's block I/O (cgroup v1 blkio.throttle.*: this
#       machine mounts the v1 hierarchies; io.max of a pure v2 host is not
#       written) on the disk holding the bed's state and volumes
#       ($FAULTS_DISK_DEV, major:minor): default 1 MiB/s and 20 writes/s,
#       reads 4 MiB/s.
#       The container keeps the limit until it restarts or disk-unthrottle.
#   faults.sh disk-unthrottle <pod> [container]
#   faults.sh oom <pod> [container] [timeout-seconds]
#       Make etcd itself cross a memory limit: its memory cgroup's (v1) limit is
#       set just above its anonymous memory (plus $FAULTS_OOM_HEADROOM_MB, default
#       4), then the member is asked, from this machine and not from inside the
#       Pod, for a serializable range read of $FAULTS_OOM_KEYS (default 24) values
#       of 768 KiB under /faults-oom/ (written once through that member when they
#       are not there yet), six such reads at once: etcd copies the values out of
#       its database and marshals each answer, allocations far over the limit (and
#       over any heap its Go runtime freed but still holds), in its own process. No other
#       process is started in the container, so the only one the kernel can kill
#       is etcd. Dials the Pod's IP on 2379 over plain HTTP (clusters without
#       client TLS), with the host's etcdctl (hack/tools/build.sh etcd-3.6.11).
#       Returns when the kubelet records that container (its id) as terminated
#       OOMKilled (default timeout 60 s; a crash-loop back-off is not waited out) and prints what the kernel's log says it killed. The
#       container restarts in a new cgroup with the Pod's own limits.
#
# The container given defaults to the Pod's first one. Prints one line per
# action ("faults: ..."); fails when the fault could not be injected.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=hack/lib.sh
. "$here/../../../hack/lib.sh"
ns=${NAMESPACE:-default}
NODES=$REPO/hack/nodes.sh
NODES_POD_NET=10.89.0.0/16 # the workers' Pods (hack/nodes.sh)
NODES_NET=10.87.0.0/24

say() { echo "faults: $*"; }
fail() {
	echo "faults: $*" >&2
	exit 1
}
usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
}

worker_netns() {
	[ -e "/run/netns/eo-$1" ] || fail "no worker node $1 (hack/nodes.sh status)"
	echo "/run/netns/eo-$1"
}
node_pod_cidr() { echo "10.89.${1#worker-}.0/24"; }
containerd_sock() { # the containerd of a node: the first node's or a worker's
	if [ -S "$RUNDIR/nodes/$1/containerd/containerd.sock" ]; then
		echo "$RUNDIR/nodes/$1/containerd/containerd.sock"
	else
		echo "$CONTAINERD_SOCK"
	fi
}

# container_pid <pod> [container]: the host pid of the container's first process.
container_pid() {
	local pod=$1 c=${2:-} node id sock pid
	node=$(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.spec.nodeName}')
	[ -n "$node" ] || fail "pod $ns/$pod is not scheduled"
	[ -n "$c" ] || c=$(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.spec.containers[0].name}')
	id=$(kubectl -n "$ns" get pod "$pod" -o jsonpath="{.status.containerStatuses[?(@.name==\"$c\")].containerID}")
	id=${id#containerd://}
	[ -n "$id" ] || fail "container $c of $ns/$pod has not started"
	sock=$(containerd_sock "$node")
	pid=$(ctr --address "$sock" -n k8s.io tasks ls 2>/dev/null | awk -v id="$id" '$1 == id && $3 == "RUNNING" {print $2}')
	[ -n "$pid" ] || fail "container $c of $ns/$pod ($id) is not running on $node"
	echo "$pid"
}
# cgroup_dir <pid> <v1-controller>: the process's cgroup directory.
cgroup_dir() {
	local path
	path=$(awk -F: -v c="$2" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$1/cgroup")
	[ -n "$path" ] || fail "no $2 cgroup for pid $1 (cgroup v1 hierarchy expected)"
	echo "/sys/fs/cgroup/$2$path"
}

# --- nodes -------------------------------------------------------------------
node_stop() { "$NODES" stop "${1:?node}" && say "node $1 powered off"; }
node_start() { "$NODES" start "${1:?node}" && say "node $1 powered on and Ready"; }
drain() {
	local node=${1:?node} t=${2:-300}
	kubectl cordon "$node" >/dev/null
	say "node $node cordoned; draining"
	kubectl drain "$node" --ignore-daemonsets --delete-emptydir-data --timeout "${t}s"
	say "node $node drained"
}
uncordon() { kubectl uncordon "${1:?node}" >/dev/null && say "node $1 uncordoned"; }

partition() {
	local node=${1:?node} dir=${2:-both} scope=${3:-all} netns in_m=() out_m=()
	netns=$(worker_netns "$node")
	case $dir in both | in | out) ;; *) fail "partition: direction is both, in or out, not '$dir'" ;; esac
	case $scope in
	all) ;;
	pods)
		in_m=(-d "$(node_pod_cidr "$node")")
		out_m=(-s "$(node_pod_cidr "$node")")
		;;
	*) fail "partition: scope is all or pods, not '$scope'" ;;
	esac
	heal_rules "$netns"
	nsenter --net="$netns" sh -c 'iptables -t raw -N EO-PARTITION && iptables -t raw -I PREROUTING 1 -j EO-PARTITION &&
		iptables -t mangle -N EO-PARTITION && iptables -t mangle -I POSTROUTING 1 -j EO-PARTITION'
	if [ "$dir" != out ]; then
		nsenter --net="$netns" iptables -t raw -A EO-PARTITION -i eth0 "${in_m[@]}" -j DROP
	fi
	if [ "$dir" != in ]; then
		nsenter --net="$netns" iptables -t mangle -A EO-PARTITION -o eth0 "${out_m[@]}" -j DROP
	fi
	say "node $node partitioned ($dir, $scope)"
}
heal_rules() { # heal_rules <netns-path>
	local t
	for t in raw mangle; do
		nsenter --net="$1" sh -c "
			iptables -t $t -D $([ $t = raw ] && echo PREROUTING || echo POSTROUTING) -j EO-PARTITION 2>/dev/null
			iptables -t $t -F EO-PARTITION 2>/dev/null && iptables -t $t -X EO-PARTITION 2>/dev/null" || true
	done
}
heal() {
	heal_rules "$(worker_netns "${1:?node}")"
	say "node $1 healed"
}

operator_pods() {
	kubectl -n "$1" get pods -l "$2" --field-selector status.phase=Running -o jsonpath='{.items[*].metadata.name}'
}
partition_operator() {
	local ons=${1:-etcd-operator-system} sel=${2:-app.kubernetes.io/name=etcd-operator} pod pid ip drops n=0
	# Only this case's members (on the workers) and its namespace's Services: the
	# main lane's clusters, on the control-plane node, share the operator.
	drops="iptables -A EO-PARTITION -d $NODES_POD_NET -j DROP"
	for ip in $(kubectl -n "$ns" get services -o jsonpath='{range .items[*]}{.spec.clusterIP}{"\n"}{end}'); do
		case $ip in None | "") ;; *) drops="$drops && iptables -A EO-PARTITION -d $ip/32 -j DROP" ;; esac
	done
	for pod in $(operator_pods "$ons" "$sel"); do
		pid=$(ns=$ons container_pid "$pod")
		nsenter -t "$pid" -n sh -c "
			iptables -D OUTPUT -j EO-PARTITION 2>/dev/null; iptables -F EO-PARTITION 2>/dev/null; iptables -X EO-PARTITION 2>/dev/null
			iptables -N EO-PARTITION && iptables -I OUTPUT 1 -j EO-PARTITION && $drops"
		say "operator pod $ons/$pod cut from the workers' Pods and $ns's Services (apiserver, DNS and the control-plane node's Pods still reachable)"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || fail "no running operator pod in $ons with $sel"
}
heal_operator() {
	local ons=${1:-etcd-operator-system} sel=${2:-app.kubernetes.io/name=etcd-operator} pod pid
	for pod in $(operator_pods "$ons" "$sel"); do
		pid=$(ns=$ons container_pid "$pod")
		nsenter -t "$pid" -n sh -c 'iptables -D OUTPUT -j EO-PARTITION 2>/dev/null; iptables -F EO-PARTITION 2>/dev/null; iptables -X EO-PARTITION 2>/dev/null' || true
		say "operator pod $ons/$pod healed"
	done
}

# --- containers --------------------------------------------------------------
disk_dev() { echo "${FAULTS_DISK_DEV:-$(findmnt -no MAJ:MIN -T "$BASE" | tr -d ' ')}"; }
disk_throttle() {
	local pod=${1:?pod} bps=${2:-1048576} iops=${3:-20} c=${4:-} pid d dev
	pid=$(container_pid "$pod" "$c")
	d=$(cgroup_dir "$pid" blkio)
	dev=$(disk_dev)
	echo "$dev $bps" >"$d/blkio.throttle.write_bps_device"
	echo "$dev $iops" >"$d/blkio.throttle.write_iops_device"
	echo "$dev $((4 * 1048576))" >"$d/blkio.throttle.read_bps_device"
	say "pod $ns/$pod disk $dev throttled: writes ${bps} B/s and ${iops}/s, reads 4 MiB/s ($d)"
}
disk_unthrottle() {
	local pod=${1:?pod} c=${2:-} pid d dev f
	pid=$(container_pid "$pod" "$c")
	d=$(cgroup_dir "$pid" blkio)
	dev=$(disk_dev)
	for f in write_bps_device write_iops_device read_bps_device; do echo "$dev 0" >"$d/blkio.throttle.$f"; done
	say "pod $ns/$pod disk $dev unthrottled"
}

oom_etcdctl() { "$(tool_bin etcd-3.6.11)/etcdctl" --dial-timeout 3s --command-timeout 20s "$@"; }
oom_keys() { # oom_keys <endpoint>: write the values the read will ask for, unless there
	local ep=$1 n=${FAULTS_OOM_KEYS:-24} have="" i v
	# The member may be starting (the container runs, etcd does not answer yet).
	for i in $(seq 30); do
		have=$(oom_etcdctl --endpoints "$ep" get --prefix /faults-oom/ --keys-only --limit 1 --consistency=s -w json 2>/dev/null | jq -r '.count // 0') && break
		have=""
		sleep 1
	done
	[ -n "$have" ] || fail "$ep does not answer"
	[ "$have" -ge "$n" ] && return 0
	v=$(mktemp)
	head -c 589824 /dev/urandom | base64 -w0 >"$v" # 768 KiB, under etcd's 1.5 MiB request limit
	for i in $(seq -w 1 "$n"); do
		oom_etcdctl --endpoints "$ep" put "/faults-oom/$i" <"$v" >/dev/null || {
			rm -f "$v"
			fail "could not write /faults-oom/$i through $ep"
		}
	done
	rm -f "$v"
	say "wrote $n values of 768 KiB under /faults-oom/ through $ep"
}
oom() {
	local pod=${1:?pod} c=${2:-} t=${3:-60} pid d anon limit usage id deadline reason ip ep killed i
	[ -n "$c" ] || c=$(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.spec.containers[0].name}')
	ip=$(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.status.podIP}')
	[ -n "$ip" ] || fail "pod $ns/$pod has no IP"
	ep=http://$ip:2379
	oom_keys "$ep"
	pid=$(container_pid "$pod" "$c")
	d=$(cgroup_dir "$pid" memory)
	id=$(kubectl -n "$ns" get pod "$pod" -o jsonpath="{.status.containerStatuses[?(@.name==\"$c\")].containerID}")
	anon=$(awk '$1 == "total_rss" {print $2}' "$d/memory.stat")
	usage=$(cat "$d/memory.usage_in_bytes")
	# Just above what cannot be reclaimed; the kernel refuses a limit below
	# usage it cannot reclaim (EBUSY): then step up.
	limit=$((anon + ${FAULTS_OOM_HEADROOM_MB:-4} * 1048576))
	until echo "$limit" >"$d/memory.limit_in_bytes" 2>/dev/null; do
		limit=$((limit + 1048576))
		[ "$limit" -le $((usage + 16 * 1048576)) ] || fail "could not lower the memory limit of $ns/$pod ($d)"
	done
	say "pod $ns/$pod container $c (pid $pid): memory limit $limit (anon $anon, usage $usage); reading /faults-oom/ from it"
	deadline=$(($(date +%s) + t))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		# Serializable: that member answers from its own copy (a linearizable read
		# would wait for a leader it may not reach while it restarts).
		# Six at once: Go may serve one answer from heap it freed but still holds.
		if [ -d "/proc/$pid" ]; then
			for i in 1 2 3 4 5 6; do
				oom_etcdctl --endpoints "$ep" get --prefix /faults-oom/ --consistency=s >/dev/null 2>&1 &
			done
			wait
		fi
		# The kubelet's record of that container (its id): the current state
		# until it restarts, the last state after; not the restart count, which
		# waits out the crash-loop back-off (up to 5 minutes).
		reason=$(kubectl -n "$ns" get pod "$pod" -o jsonpath="{.status.containerStatuses[?(@.name==\"$c\")].state.terminated.containerID} {.status.containerStatuses[?(@.name==\"$c\")].state.terminated.reason} {.status.containerStatuses[?(@.name==\"$c\")].lastState.terminated.containerID} {.status.containerStatuses[?(@.name==\"$c\")].lastState.terminated.reason}")
		case " $reason " in *" $id OOMKilled "*) ;; *) reason="" ;; esac
		if [ -n "$reason" ]; then
			# Which process the kernel killed (its log, when this machine lets us read it).
			killed=$(dmesg 2>/dev/null | grep -o "Killed process $pid ([^)]*)" | tail -1 || true)
			say "pod $ns/$pod container $c OOMKilled; kernel log: ${killed:-nothing about pid $pid}"
			return 0
		fi
		sleep 1
	done
	fail "pod $ns/$pod container $c was not OOM-killed within ${t}s"
}

cmd=${1:-}
shift || true
case $cmd in
node-stop) node_stop "$@" ;;
node-start) node_start "$@" ;;
drain) drain "$@" ;;
uncordon) uncordon "$@" ;;
partition) partition "$@" ;;
heal) heal "$@" ;;
partition-operator) partition_operator "$@" ;;
heal-operator) heal_operator "$@" ;;
disk-throttle) disk_throttle "$@" ;;
disk-unthrottle) disk_unthrottle "$@" ;;
oom) oom "$@" ;;
*) usage ;;
esac

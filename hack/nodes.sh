#!/usr/bin/env bash
# Worker nodes for the local cluster (hack/cluster.sh), on this one machine.
#
# Each worker is a network namespace (eo-<node>) wired by a veth to the host
# bridge eo-nodes, with its own node IP, its own containerd (own root, state and
# socket), kubelet (own --root-dir and --hostname-override, cgroupfs under the
# cgroup /eo-<node>), kube-proxy and kube-router's NetworkPolicy firewall, all
# in that namespace. The first node (the control plane's, hack/cluster.sh) is
# not touched.
#
#   hack/nodes.sh up N [--open]  start workers worker-1..worker-N (idempotent;
#                                 starts what stopped; returns when all are Ready).
#                                 They are tainted etcd-operator.dev/faults=true:NoSchedule
#                                 (only the fault cases, which tolerate it, land there, so a
#                                 fault never hits another case's members); --open leaves
#                                 them untainted (and takes the taint off)
#   hack/nodes.sh down           stop every worker, delete its Node, clean the machine
#   hack/nodes.sh park           power every running worker off (as stop); the next
#                                 'up' powers them on again, images and state kept
#   hack/nodes.sh status         the workers and their components
#   hack/nodes.sh stop <node>    power loss: kill its components and containers, cut its link
#   hack/nodes.sh start <node>   power back on after stop (volatile state under /run lost)
#   hack/nodes.sh cost           memory (RSS) and CPU of each worker's processes
#
# Addresses: node i has IP 10.87.0.(10+i) on eo-nodes (host side 10.87.0.1)
# and Pod CIDR 10.89.i.0/24; the host routes each Pod CIDR to its node, so Pods
# of every node reach each other unmasqueraded. CoreDNS and the apiserver are
# reached at the host's address; the registry ($REGISTRY) through a forwarder
# on 10.87.0.1:$REGISTRY_PORT that each worker's containerd maps $REGISTRY to.
# Images the host's containerd imports (hack/images.sh) are copied into the
# workers' containerds at up and imported there by import_archive (lib.sh).
#
# Storage: the StorageClass node-local (no provisioner, WaitForFirstConsumer)
# has static local PVs, $NODES_PVS per node, in $BASE/nodes/<node>/volumes with
# a nodeAffinity to that node: a claim bound to one cannot follow its Pod to
# another node. A recycler loop wipes a Released one and makes it Available.
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

NODES_BRIDGE=eo-nodes
NODES_GW=10.87.0.1
NODES_NET=10.87.0.0/24
NODES_POD_NET=10.89.0.0/16
CLUSTER_POD_NET=10.88.0.0/15 # the first node's 10.88.0.0/16 and the workers' 10.89.0.0/16
NODES_PVS=${NODES_PVS:-8}
NODES_PV_SIZE=${NODES_PV_SIZE:-10Gi}
FAULTS_TAINT=etcd-operator.dev/faults=true:NoSchedule
NODES_STATE=$BASE/nodes
NODES_RUN=$RUNDIR/nodes
API_SERVER=https://$NODE_IP:6443

K8S_BIN=$(tool_bin kubernetes)
KUBE_ROUTER_BIN=$(tool_bin kube-router)
# The cluster's own admin credentials, whichever checkout runs this.
kc() { "$K8S_BIN/kubectl" --kubeconfig "$CONF/admin.kubeconfig" "$@"; }

node_index() { echo "${1#worker-}"; }
node_ip() { echo "10.87.0.$((10 + $(node_index "$1")))"; }
node_pod_cidr() { echo "10.89.$(node_index "$1").0/24"; }
node_netns() { echo "eo-$1"; }
node_veth() { echo "eow$(node_index "$1")"; }
node_sock() { echo "$NODES_RUN/$1/containerd/containerd.sock"; }
node_cgroup() { echo "eo-$1"; }
ctrn() { # ctrn <node> <ctr args...>
	local n=$1
	shift
	ctr --address "$(node_sock "$n")" -n k8s.io "$@"
}
# The workers that exist (have state), in order.
known_nodes() {
	local d
	for d in "$NODES_STATE"/worker-*; do
		[ -d "$d" ] && basename "$d"
	done | sort -t- -k2 -n
}

# --- processes -------------------------------------------------------------
# As cluster.sh's supervise(): a restart loop in its own session, pid file
# $RUNDIR/pids/<name>.pid, log $LOGDIR/<name>.log.
pidfile() { echo "$RUNDIR/pids/$1.pid"; }
alive() {
	local state
	state=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ "$state" != Z ]
}
running() {
	local p
	p=$(cat "$(pidfile "$1")" 2>/dev/null) || return 1
	alive "$p"
}
supervise() {
	local name=$1
	shift
	running "$name" && return 0
	mkdir -p "$RUNDIR/pids" "$LOGDIR"
	setsid bash -c '
		echo $$ > "$1"; shift
		trap "kill -TERM \$child 2>/dev/null; wait \$child; exit 0" TERM INT
		while :; do
			echo "=== $(date -u +%FT%TZ) starting: $*"
			"$@" & child=$!
			wait $child; rc=$?
			echo "=== $(date -u +%FT%TZ) exited rc=$rc; restarting in 2s"
			sleep 2
		done' supervise "$(pidfile "$name")" "$@" >>"$LOGDIR/$name.log" 2>&1 </dev/null 7>&- 8>&- 9>&- &
	local i
	for i in $(seq 50); do
		[ -s "$(pidfile "$name")" ] && return 0
		sleep 0.1
	done
	die "could not start $name"
}
# stop_component <name> [KILL]: TERM (or KILL at once) the loop and its child.
stop_component() {
	local name=$1 sig=${2:-TERM} p i
	p=$(cat "$(pidfile "$name")" 2>/dev/null) || return 0
	if alive "$p"; then
		kill "-$sig" -- "-$p" 2>/dev/null || true
		for i in $(seq 100); do
			alive "$p" || break
			sleep 0.1
		done
		kill -KILL -- "-$p" 2>/dev/null || true
	fi
	rm -f "$(pidfile "$name")"
}
NODE_COMPONENTS="containerd kubelet kube-proxy kube-router"

# in_node <node> <command...>: run in the node's network namespace only (the
# mount namespace stays the host's, so kubelet's volume mounts are the ones
# containerd and runc see; `ip netns exec` would give each its own).
in_node() {
	local n=$1
	shift
	nsenter --net="/run/netns/$(node_netns "$n")" -- "$@"
}

# --- PKI and configuration ---------------------------------------------------
node_cert() { # node_cert <node>: the kubelet's client certificate (system:node:<node>)
	local n=$1 d=$PKI/nodes
	mkdir -p "$d"
	[ -f "$d/$n.crt" ] && [ -f "$d/$n.key" ] && return 0
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$d/$n.key.tmp" -out "$d/$n.csr" -subj "/O=system:nodes/CN=system:node:$n" 2>/dev/null
	openssl x509 -req -in "$d/$n.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 3650 -out "$d/$n.crt.tmp" -extfile <(printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n') 2>/dev/null
	mv -f "$d/$n.key.tmp" "$d/$n.key"
	mv -f "$d/$n.crt.tmp" "$d/$n.crt"
	rm -f "$d/$n.csr"
}

kubeconfig_for() { # kubeconfig_for <file> <crt> <key>
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $API_SERVER
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: node
  user:
    client-certificate-data: $(base64 -w0 <"$2")
    client-key-data: $(base64 -w0 <"$3")
contexts:
- name: local
  context: {cluster: local, user: node}
current-context: local
EOF
	chmod 600 "$1"
}

node_configs() {
	local n=$1 c=$NODES_STATE/$1/conf ip run=$NODES_RUN/$1
	ip=$(node_ip "$n")
	mkdir -p "$c" "$NODES_STATE/$n/cni/net.d" "$run"
	node_cert "$n"
	kubeconfig_for "$c/kubelet.kubeconfig" "$PKI/nodes/$n.crt" "$PKI/nodes/$n.key"
	kubeconfig_for "$c/kube-proxy.kubeconfig" "$PKI/kube-proxy.crt" "$PKI/kube-proxy.key"
	kubeconfig_for "$c/kube-router.kubeconfig" "$PKI/kube-router.crt" "$PKI/kube-router.key"

	cat >"$c/containerd.toml" <<EOF
version = 2
root = "$NODES_STATE/$n/containerd"
state = "$run/containerd"
[grpc]
  address = "$(node_sock "$n")"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  enable_selinux = false
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$run/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODES_STATE/$n/cni/net.d"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$c/certs.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "$NODES_STATE/$n/containerd-opt"
EOF
	# The registry listens on the host's loopback; the node reaches it through
	# the forwarder on the bridge, under the same names as on the first node.
	local h
	for h in "$REGISTRY" "127.0.0.1:$REGISTRY_PORT"; do
		mkdir -p "$c/certs.d/$h"
		cat >"$c/certs.d/$h/hosts.toml" <<EOF
server = "http://$NODES_GW:$REGISTRY_PORT"
[host."http://$NODES_GW:$REGISTRY_PORT"]
  capabilities = ["pull", "resolve", "push"]
EOF
	done

	cat >"$NODES_STATE/$n/cni/net.d/10-$n.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "eo-$n",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "mtu": $NODE_MTU,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$(node_pod_cidr "$n")"}]], "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": "$NODES_STATE/$n/cni/ipam"}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

	# As the first node's (cluster.sh), but on the node's address, with its
	# Pods under the cgroup /eo-<node>.
	sed -e "s|^address: .*|address: $ip|" \
		-e "s|^containerRuntimeEndpoint: .*|containerRuntimeEndpoint: unix://$(node_sock "$n")|" \
		"$CONF/kubelet.yaml" >"$c/kubelet.yaml.tmp"
	# Each kubelet deletes the Pod log directories of Pods it does not run: a
	# directory of its own, not the first node's /var/log/pods.
	printf 'cgroupRoot: /%s\npodLogsDir: %s\n' "$(node_cgroup "$n")" "$NODES_STATE/$n/pod-logs" >>"$c/kubelet.yaml.tmp"
	mv "$c/kubelet.yaml.tmp" "$c/kubelet.yaml"

	cat >"$c/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $c/kube-proxy.kubeconfig
hostnameOverride: $n
bindAddress: $ip
mode: iptables
clusterCIDR: $CLUSTER_POD_NET
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
}

# --- network -----------------------------------------------------------------
host_network() {
	if ! ip link show "$NODES_BRIDGE" >/dev/null 2>&1; then
		ip link add "$NODES_BRIDGE" type bridge
		ip addr add "$NODES_GW/24" dev "$NODES_BRIDGE"
		ip link set "$NODES_BRIDGE" mtu "$NODE_MTU" up
	fi
	# nat: Pods of the first node reach the workers' Pods with their own
	# address (the bridge CNI there masquerades everything leaving 10.88.0.0/16);
	# the workers' Pods and nodes reach beyond the machine masqueraded.
	if ! iptables -t nat -S EO-NODES >/dev/null 2>&1; then
		iptables -t nat -N EO-NODES
		iptables -t nat -A EO-NODES -s 10.88.0.0/16 -d "$NODES_POD_NET" -j ACCEPT
		iptables -t nat -A EO-NODES -s "$NODES_POD_NET" -o "$NODE_IF" -j MASQUERADE
		iptables -t nat -A EO-NODES -s "$NODES_NET" -o "$NODE_IF" -j MASQUERADE
	fi
	iptables -t nat -C POSTROUTING -j EO-NODES 2>/dev/null ||
		iptables -t nat -I POSTROUTING 1 -j EO-NODES
	supervise nodes-registry-forward socat "TCP-LISTEN:$REGISTRY_PORT,bind=$NODES_GW,reuseaddr,fork" \
		"TCP:127.0.0.1:$REGISTRY_PORT"
}

node_network() {
	local n=$1 ns veth ip
	ns=$(node_netns "$n")
	veth=$(node_veth "$n")
	ip=$(node_ip "$n")
	[ -e "/run/netns/$ns" ] || ip netns add "$ns"
	if ! ip link show "$veth" >/dev/null 2>&1; then
		ip link add "$veth" mtu "$NODE_MTU" type veth peer name eth0 netns "$ns"
		ip link set "$veth" master "$NODES_BRIDGE" up
	fi
	ip link set "$veth" up
	ip -n "$ns" link set lo up
	ip -n "$ns" link set eth0 up
	ip -n "$ns" addr replace "$ip/24" dev eth0
	ip -n "$ns" route replace default via "$NODES_GW"
	ip route replace "$(node_pod_cidr "$n")" via "$ip" dev "$NODES_BRIDGE"
	# The host routes between nodes on the same bridge: no redirects, so every
	# Pod packet keeps going through the host (where partitions can be cut).
	in_node "$n" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.accept_redirects=0 \
		net.ipv4.conf.eth0.accept_redirects=0
	in_node "$n" sysctl -qw net.bridge.bridge-nf-call-iptables=1 2>/dev/null || true
}

# --- cgroups -----------------------------------------------------------------
# /eo-<node> in every v1 hierarchy and the unified one: kubelet's cgroupRoot.
cgroup_dirs() { # cgroup_dirs <node>: the node's cgroup in every hierarchy
	local h
	for h in /sys/fs/cgroup/*/; do
		[ -f "$h/cgroup.procs" ] && echo "${h%/}/$(node_cgroup "$1")"
	done
}
node_cgroups() {
	local d
	for d in $(cgroup_dirs "$1"); do
		mkdir -p "$d"
		case $d in
		/sys/fs/cgroup/cpuset/*)
			[ -n "$(cat "$d/cpuset.cpus")" ] || cat /sys/fs/cgroup/cpuset/cpuset.cpus >"$d/cpuset.cpus"
			[ -n "$(cat "$d/cpuset.mems")" ] || cat /sys/fs/cgroup/cpuset/cpuset.mems >"$d/cpuset.mems"
			;;
		esac
	done
}
# Every process of the node's Pods.
node_pod_pids() {
	find "/sys/fs/cgroup/memory/$(node_cgroup "$1")" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u
}

# --- storage -----------------------------------------------------------------
storage_class() {
	kc apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: node-local
provisioner: kubernetes.io/no-provisioner
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
EOF
}
node_pvs() {
	local n=$1 i d docs=""
	for i in $(seq 1 "$NODES_PVS"); do
		d=$NODES_STATE/$n/volumes/pv-$i
		mkdir -p "$d"
		chmod 0777 "$d"
		docs="$docs
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: node-local-$n-$i
  labels: {etcd-operator.dev/node-local: \"true\", etcd-operator.dev/node: $n}
spec:
  capacity: {storage: $NODES_PV_SIZE}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: node-local
  local: {path: $d}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [$n]}"
	done
	kc get pv "node-local-$n-1" >/dev/null 2>&1 || kc create -f - >/dev/null <<<"$docs"
}
# The recycler: a Released node-local PV is wiped and made Available again
# (as sig-storage-local-static-provisioner does), unless its node is stopped.
pv_recycler() {
	cat >"$NODES_RUN/pv-recycler.sh" <<EOF
#!/usr/bin/env bash
set -u
while sleep 10; do
	"$K8S_BIN/kubectl" --kubeconfig "$CONF/admin.kubeconfig" get pv -l etcd-operator.dev/node-local=true \\
		-o jsonpath='{range .items[?(@.status.phase=="Released")]}{.metadata.name} {.spec.local.path}{"\n"}{end}' 2>/dev/null |
	while read -r pv path; do
		case \$path in "$NODES_STATE"/worker-*/volumes/pv-*) ;; *) continue ;; esac
		find "\$path" -mindepth 1 -delete 2>/dev/null
		"$K8S_BIN/kubectl" --kubeconfig "$CONF/admin.kubeconfig" patch pv "\$pv" --type json \\
			-p '[{"op":"remove","path":"/spec/claimRef"}]' >/dev/null && echo "\$(date -u +%T) recycled \$pv"
	done
done
EOF
	chmod +x "$NODES_RUN/pv-recycler.sh"
	supervise nodes-pv-recycler "$NODES_RUN/pv-recycler.sh"
}

# --- images ------------------------------------------------------------------
# Every named image of the first node's containerd, into the node's.
sync_images() {
	local n=$1 have want refs=()
	have=$(ctrn "$n" images ls -q 2>/dev/null | sort)
	want=$(ctrk images ls -q | grep -v '^sha256:' | sort)
	mapfile -t refs < <(comm -13 <(echo "$have") <(echo "$want"))
	[ ${#refs[@]} -gt 0 ] || return 0
	log "$n: importing ${#refs[@]} images"
	ctrk images export --platform linux/amd64 - "${refs[@]}" 2>/dev/null |
		ctrn "$n" images import --no-unpack=false - >/dev/null 2>&1 && return 0
	# One image whose content is not all there fails the whole archive: an image the
	# kubelet pulled (registry-test's, from the bed's registry) keeps only its unpacked
	# snapshot, containerd having dropped the layer blobs. One by one then, leaving such
	# images out (a worker pulls them from the registry itself when it needs them).
	local r
	for r in "${refs[@]}"; do
		ctrk images export --platform linux/amd64 - "$r" 2>/dev/null |
			ctrn "$n" images import --no-unpack=false - >/dev/null 2>&1 ||
			log "$n: left out $r (not all of its content is in the first node's containerd)"
	done
}

# --- one node ----------------------------------------------------------------
node_ready() {
	[ "$(kc get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

start_node() {
	local n=$1 ip
	ip=$(node_ip "$n")
	node_configs "$n"
	node_network "$n"
	node_cgroups "$n"
	mkdir -p "$NODES_STATE/$n/kubelet" "$NODES_RUN/$n"
	supervise "$n.containerd" nsenter --net="/run/netns/$(node_netns "$n")" -- \
		containerd --config "$NODES_STATE/$n/conf/containerd.toml"
	wait_for 60 "containerd of $n" ctr --address "$(node_sock "$n")" version
	sync_images "$n"
	supervise "$n.kubelet" nsenter --net="/run/netns/$(node_netns "$n")" -- \
		"$K8S_BIN/kubelet" --config "$NODES_STATE/$n/conf/kubelet.yaml" \
		--kubeconfig "$NODES_STATE/$n/conf/kubelet.kubeconfig" --hostname-override "$n" \
		--node-ip "$ip" --root-dir "$NODES_STATE/$n/kubelet" \
		--node-labels "etcd-operator.dev/worker=true" $([ -z "${OPEN:-}" ] && echo "--register-with-taints=$FAULTS_TAINT") --v=1
	supervise "$n.kube-proxy" nsenter --net="/run/netns/$(node_netns "$n")" -- \
		"$K8S_BIN/kube-proxy" --config "$NODES_STATE/$n/conf/kube-proxy.yaml" --v=1
	# kube-router finds its Node by $NODE_NAME, then by the machine's hostname
	# (the first node's!), and only then by --hostname-override; it takes the
	# node's address, and so which Pods are its own, from that Node.
	wait_for 60 "node $n registered" kc get node "$n"
	supervise "$n.kube-router" nsenter --net="/run/netns/$(node_netns "$n")" -- \
		env NODE_NAME="$n" "$KUBE_ROUTER_BIN/kube-router" --kubeconfig "$NODES_STATE/$n/conf/kube-router.kubeconfig" \
		--hostname-override "$n" --run-firewall=true --run-router=false \
		--run-service-proxy=false --enable-cni=false --service-cluster-ip-range "$SERVICE_CIDR" \
		--health-port 20244 --metrics-port 0 --v=0
}

# power loss: no component is asked to stop; the link goes first.
stop_node() {
	local n=$1 c p
	ip link set "$(node_veth "$n")" down 2>/dev/null || true
	for c in $NODE_COMPONENTS; do stop_component "$n.$c" KILL; done
	for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $(node_sock "$n")" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null || true
	done
	local i
	for i in 1 2 3 4 5; do
		p=$(node_pod_pids "$n")
		[ -z "$p" ] && break
		# shellcheck disable=SC2086
		kill -KILL $p 2>/dev/null || true
		sleep 0.2
	done
	echo stopped >"$NODES_RUN/$n/power" 2>/dev/null || true
}

# power on: what a reboot loses (/run: containerd's state, runc's, the
# mounts under them) is gone; the node's disk stays.
power_on_node() {
	local n=$1 m
	if [ ! -f "$NODES_RUN/$n/power" ]; then
		log "$n was not stopped (nodes.sh stop): starting what is not running, state kept"
		start_node "$n"
		return 0
	fi
	for m in $(awk -v a="$NODES_RUN/$n/" '$2 ~ "^"a {print $2}' /proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$NODES_RUN/$n/containerd" "$NODES_RUN/$n/runc" "$NODES_RUN/$n/power"
	start_node "$n"
}

delete_node() {
	local n=$1 m ns pod_netns
	# The network namespaces of the node's Pods (named by containerd under
	# /run/netns), found by the veths on the node's bridge before it goes.
	# (A node that never ran a Pod has no cni0: ip fails, and under pipefail that must not
	# end the script before the node's components are stopped.)
	pod_netns=$({ ip -n "$(node_netns "$n")" -o link show master cni0 2>/dev/null || true; } |
		sed -n 's/.* link-netns \(cni-[0-9a-f-]*\).*/\1/p')
	stop_node "$n"
	for m in $pod_netns; do
		umount -l "/run/netns/$m" 2>/dev/null || true
		rm -f "/run/netns/$m"
	done
	kc delete node "$n" --wait=false >/dev/null 2>&1 || true
	kc delete pv -l "etcd-operator.dev/node=$n" --wait=false >/dev/null 2>&1 || true
	for m in $(awk -v a="$NODES_STATE/$n/" -v b="$NODES_RUN/$n/" '$2 ~ "^"a || $2 ~ "^"b {print $2}' /proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	ip route del "$(node_pod_cidr "$n")" 2>/dev/null || true
	ip link del "$(node_veth "$n")" 2>/dev/null || true
	ns=$(node_netns "$n")
	ip netns del "$ns" 2>/dev/null || true
	local d
	for d in $(cgroup_dirs "$n"); do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	rm -rf "${NODES_STATE:?}/$n" "${NODES_RUN:?}/$n" "$PKI/nodes/$n.crt" "$PKI/nodes/$n.key"
}

# --- commands ----------------------------------------------------------------
# kubelet turns kernel.panic_on_oops on at start (the machine would reboot on an
# oops): put back the host's value, as cluster.sh does for the first node.
restore_panic_on_oops() {
	sysctl -qw "kernel.panic_on_oops=$(sed -n 5p "$RUNDIR/sysctl.orig")" 2>/dev/null || true
}

up() {
	local count=${1:?usage: nodes.sh up N [--open]} i n t0 names=()
	t0=$(date +%s)
	[ -f "$CONF/kubelet.yaml" ] && [ -S "$CONTAINERD_SOCK" ] || die "the local cluster is not up; run 'make cluster-up' first"
	case $count in '' | *[!0-9]*) die "up: N must be a number, not '$count'" ;; esac
	mkdir -p "$NODES_STATE" "$NODES_RUN"
	host_network
	storage_class
	for i in $(seq 1 "$count"); do
		n=worker-$i
		names+=("$n")
		if [ "$(cat "$NODES_RUN/$n/power" 2>/dev/null)" = parked ]; then
			log "$n was parked (nodes.sh park): powering it on"
			power_on_node "$n"
			continue
		fi
		if [ -f "$NODES_RUN/$n/power" ]; then
			log "$n was stopped (nodes.sh stop): leaving it off; 'nodes.sh start $n' powers it on"
			continue
		fi
		log "$n ($(node_ip "$n"), Pods $(node_pod_cidr "$n"))"
		start_node "$n"
	done
	for n in "${names[@]}"; do
		[ -f "$NODES_RUN/$n/power" ] && continue
		wait_for 180 "node $n Ready" node_ready "$n"
		if [ -z "${OPEN:-}" ]; then
			kc taint node "$n" "$FAULTS_TAINT" --overwrite >/dev/null
		else
			kc taint node "$n" "${FAULTS_TAINT%%=*}:NoSchedule-" >/dev/null 2>&1 || true
		fi
		node_pvs "$n"
	done
	pv_recycler
	restore_panic_on_oops
	log "${#names[@]} worker node(s) up in $(($(date +%s) - t0))s"
}

# park: every worker powered off (as stop), marked so that the next 'up' powers it on
# again; the nodes keep their images and state, so that is quicker than down and up.
park() {
	local n
	for n in $(known_nodes); do
		[ -f "$NODES_RUN/$n/power" ] && continue
		stop_node "$n"
		echo parked >"$NODES_RUN/$n/power"
		log "$n parked"
	done
}

down() {
	local n
	for n in $(known_nodes); do
		log "$n: down"
		delete_node "$n"
	done
	stop_component nodes-pv-recycler
	stop_component nodes-registry-forward
	kc delete storageclass node-local --ignore-not-found >/dev/null 2>&1 || true
	if iptables -t nat -S EO-NODES >/dev/null 2>&1; then
		iptables -t nat -D POSTROUTING -j EO-NODES 2>/dev/null || true
		iptables -t nat -F EO-NODES
		iptables -t nat -X EO-NODES
	fi
	ip link del "$NODES_BRIDGE" 2>/dev/null || true
	rm -rf "$NODES_STATE" "$NODES_RUN" "$PKI/nodes"
	log "worker nodes down"
}

status() {
	local n c
	for n in $(known_nodes); do
		local st="" power=on
		[ -f "$NODES_RUN/$n/power" ] && power=off
		for c in $NODE_COMPONENTS; do
			if running "$n.$c"; then st="$st $c:up"; else st="$st $c:down"; fi
		done
		echo "$n ip=$(node_ip "$n") pods=$(node_pod_cidr "$n") power=$power$st"
	done
}

# cost: per node, the RSS of its components, shims and Pods, and their CPU
# seconds over a minute (idle means: run it with nothing scheduled there).
cost() {
	local secs=${1:-60} n
	for n in $(known_nodes); do
		node_cost "$n" "$secs" &
	done
	wait
}
node_pids() {
	local n=$1 c p
	for c in $NODE_COMPONENTS; do
		p=$(cat "$(pidfile "$n.$c")" 2>/dev/null) || continue
		pgrep -g "$p" 2>/dev/null
	done
	pgrep -f "containerd-shim-runc-v2 .*-address $(node_sock "$n")" 2>/dev/null
	node_pod_pids "$n"
}
cpu_ticks() { # sum of utime+stime of the pids on stdin
	local p t=0 s
	while read -r p; do
		s=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || continue
		t=$((t + ${s:-0}))
	done
	echo "$t"
}
node_cost() {
	local n=$1 secs=$2 pids t0 t1 rss hz
	hz=$(getconf CLK_TCK)
	pids=$(node_pids "$n" | sort -u)
	t0=$(cpu_ticks <<<"$pids")
	sleep "$secs"
	pids=$(node_pids "$n" | sort -u)
	t1=$(cpu_ticks <<<"$pids")
	rss=$(for p in $pids; do awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null; done | awk '{s += $1} END {print int(s / 1024)}')
	echo "$n rss_mib=$rss cpu_pct=$(awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$secs" 'BEGIN {printf "%.1f", 100 * d / hz / s}') processes=$(wc -w <<<"$pids")"
}

host_lock() {
	[ -n "${EO_HOST_LOCKED:-}" ] && return 0
	exec 7>/tmp/etcd-operator-cluster-up.lock
	if ! flock -n 7; then
		log "another 'cluster.sh up/down' or 'nodes.sh' is running; waiting for it"
		flock 7
	fi
}

cmd=${1:-}
shift || true
OPEN=
for a in "$@"; do [ "$a" = --open ] && OPEN=1; done
case $cmd in
up) host_lock && up "${1:-}" ;;
down) host_lock && down ;;
park) host_lock && park ;;
status) status ;;
stop) stop_node "${1:?usage: nodes.sh stop <node>}" && log "${1} powered off" ;;
start) [ -d "$NODES_STATE/${1:?usage: nodes.sh start <node>}" ] || die "no node $1" && power_on_node "$1" && wait_for 180 "node $1 Ready" node_ready "$1" && restore_panic_on_oops && log "$1 powered on" ;;
cost) cost "${1:-60}" ;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac

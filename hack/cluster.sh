#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, from pinned upstream builds:
# containerd (Debian) + etcd + kube-apiserver + kube-controller-manager +
# kube-scheduler + kubelet + kube-proxy + CoreDNS, an OCI registry (distribution) that
# containerd pulls from, and kube-router's firewall alone as the NetworkPolicy enforcer
# (the bridge CNI enforces none). No systemd here, so every
# component runs under a small restart loop of our own (see supervise()).
#
#   hack/cluster.sh up      idempotent; returns when the node is Ready and DNS answers;
#                           starts only what stopped, keeping the cluster's state.
#                           EO_WORKERS=N adds worker nodes worker-1..N (hack/nodes.sh;
#                           default 4; EO_WORKERS=0: the control-plane node alone).
#                           They carry the taint etcd-operator.dev/faults=true:NoSchedule
#                           that only the fault cases tolerate; EO_WORKERS_OPEN=1 leaves
#                           them untainted
#   hack/cluster.sh down    stops everything up started and cleans the machine
#   hack/cluster.sh status  what is running
#   hack/cluster.sh logs    bundles the component logs into a tarball
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

# Components in start order; down stops them in reverse.
COMPONENTS="containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kube-router coredns pv-permissions registry"

pidfile() { echo "$RUNDIR/pids/$1.pid"; }

# alive <pid>: the process exists and is not a zombie. Processes we start are
# reparented to this VM's init, which reaps them late, so kill -0 is not enough.
alive() {
	local state
	state=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ "$state" != Z ]
}

running() {
	local p
	p=$(cat "$(pidfile "$1")" 2>/dev/null) || return 1
	alive "$p"
}

# supervise <name> <command...>: run the command in its own session under a
# loop that restarts it when it exits, logging to $LOGDIR/<name>.log. The loop's
# pid is also its process group, so down can stop the loop and child at once.
supervise() {
	local name=$1
	shift
	if running "$name"; then
		return 0
	fi
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
		done' supervise "$(pidfile "$name")" "$@" >>"$LOGDIR/$name.log" 2>&1 </dev/null 7>&- 8>&- &
	local i
	for i in $(seq 50); do
		[ -s "$(pidfile "$name")" ] && return 0
		sleep 0.1
	done
	die "could not start $name"
}

stop_component() {
	local name=$1 p i
	p=$(cat "$(pidfile "$name")" 2>/dev/null) || return 0
	if alive "$p"; then
		kill -TERM -- "-$p" 2>/dev/null || true
		for i in $(seq 100); do
			alive "$p" || break
			sleep 0.1
		done
		kill -KILL -- "-$p" 2>/dev/null || true
	fi
	rm -f "$(pidfile "$name")"
}

# ---------------------------------------------------------------------------
# PKI: one CA signs every serving and client certificate.

cert() { # cert <name> <subject> <extensions>
	local n=$1 subj=$2 ext=$3
	[ -f "$PKI/$n.crt" ] && [ -f "$PKI/$n.key" ] && return 0
	# Key and certificate are written under temporary names and renamed, key
	# first, so a pair on disk always matches.
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$PKI/$n.key.tmp" -out "$PKI/$n.csr" -subj "$subj" 2>/dev/null
	openssl x509 -req -in "$PKI/$n.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 3650 -out "$PKI/$n.crt.tmp" -extfile <(printf '%s\n' "$ext") 2>/dev/null
	mv -f "$PKI/$n.key.tmp" "$PKI/$n.key"
	mv -f "$PKI/$n.crt.tmp" "$PKI/$n.crt"
	rm -f "$PKI/$n.csr"
}

make_pki() {
	mkdir -p "$PKI"
	chmod 700 "$PKI"
	if [ ! -f "$PKI/ca.crt" ]; then
		openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 3650 -subj /CN=etcd-operator-dev-ca \
			-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
	fi
	local client="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
	cert apiserver /CN=kube-apiserver "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.$CLUSTER_DOMAIN,DNS:localhost,DNS:$NODE_NAME,IP:127.0.0.1,IP:$KUBERNETES_SVC_IP,IP:$NODE_IP"
	cert apiserver-kubelet-client /CN=kube-apiserver "$client"
	cert admin "/O=system:masters/CN=kubernetes-admin" "$client"
	cert controller-manager /CN=system:kube-controller-manager "$client"
	cert scheduler /CN=system:kube-scheduler "$client"
	cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" "$client"
	cert kube-proxy /CN=system:kube-proxy "$client"
	cert coredns /CN=system:coredns-host "$client"
	cert kube-router /CN=system:kube-router "$client"
	if [ ! -f "$PKI/sa.key" ]; then
		openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
		openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	fi
}

kubeconfig() { # kubeconfig <file> <cert-name> [server]
	local f=$1 n=$2 server=${3:-https://127.0.0.1:6443}
	cat >"$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: $n
  user:
    client-certificate-data: $(base64 -w0 <"$PKI/$n.crt")
    client-key-data: $(base64 -w0 <"$PKI/$n.key")
contexts:
- name: local
  context: {cluster: local, user: $n, namespace: default}
current-context: local
EOF
	chmod 600 "$f"
}

# ---------------------------------------------------------------------------
# Host preparation, remembered so down can put things back.

prepare_host() {
	mkdir -p "$RUNDIR" "$BASE" "$CONF" "$LC"
	if [ ! -f "$RUNDIR/sysctl.orig" ]; then
		sysctl -n net.ipv4.ip_forward fs.inotify.max_user_instances fs.inotify.max_user_watches \
			kernel.panic kernel.panic_on_oops vm.overcommit_memory vm.panic_on_oom >"$RUNDIR/sysctl.orig"
	fi
	sysctl -qw net.ipv4.ip_forward=1 fs.inotify.max_user_instances=8192 fs.inotify.max_user_watches=524288
	# kubelet bind-mounts its root dir rshared; make / shared like a systemd host.
	mount --make-rshared / 2>/dev/null || true
	mkdir -p "$HOSTPATH_PV"
}

restore_host() {
	if [ -f "$RUNDIR/sysctl.orig" ]; then
		local names=(net.ipv4.ip_forward fs.inotify.max_user_instances fs.inotify.max_user_watches
			kernel.panic kernel.panic_on_oops vm.overcommit_memory vm.panic_on_oom) i=0 v
		while read -r v; do
			sysctl -qw "${names[$i]}=$v" || true
			i=$((i + 1))
		done <"$RUNDIR/sysctl.orig"
	fi
	# Drop every chain and rule kube-proxy, kubelet and the CNI plugins made
	# (their chains are all named KUBE-* or CNI-*), keeping anything else.
	local save rules
	for save in iptables ip6tables; do
		rules=$("$save-save" 2>/dev/null) || continue
		if grep -qE 'KUBE-|CNI-' <<<"$rules"; then
			grep -vE 'KUBE-|CNI-' <<<"$rules" | "$save-restore" || true
		fi
	done
	# kube-router's ipsets (KUBE-* and kube-router-*), now that no rule uses them.
	local set
	for set in $(ipset list -n 2>/dev/null | grep -E '^(KUBE-|kube-router)'); do
		ipset destroy "$set" 2>/dev/null || true
	done
	# kube-proxy and kubelet may also leave nftables tables of their own.
	local t
	for t in $(nft list tables 2>/dev/null | awk '$3 ~ /^kube-proxy$|^kubelet$/ {print $2 ":" $3}'); do
		nft delete table "${t%%:*}" "${t##*:}" 2>/dev/null || true
	done
}

# ---------------------------------------------------------------------------
# Configuration files.

write_configs() {
	mkdir -p "$CONF" "$BASE/cni/net.d"
	kubeconfig "$CONF/admin.kubeconfig" admin
	cp "$CONF/admin.kubeconfig" "$KUBECONFIG_FILE"
	kubeconfig "$CONF/controller-manager.kubeconfig" controller-manager
	kubeconfig "$CONF/scheduler.kubeconfig" scheduler
	kubeconfig "$CONF/kubelet.kubeconfig" kubelet
	kubeconfig "$CONF/kube-proxy.kubeconfig" kube-proxy
	kubeconfig "$CONF/coredns.kubeconfig" coredns
	kubeconfig "$CONF/kube-router.kubeconfig" kube-router

	cat >"$CONF/containerd.toml" <<EOF
version = 2
root = "$BASE/containerd"
state = "$RUNDIR/containerd"
[grpc]
  address = "$CONTAINERD_SOCK"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  enable_selinux = false
  # This VM withholds CAP_SYS_RESOURCE even from root, so no process may lower
  # its oom_score_adj below 0; without this, runc fails to start every Pod
  # sandbox (-998) and Guaranteed container (-997). Clamp to containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUNDIR/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$BASE/cni/net.d"
    max_conf_num = 1
  # Per-registry settings (hosts.toml), read at each pull: the bed's registry
  # speaks plain HTTP.
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$CONF/certs.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "$BASE/containerd-opt"
EOF
	local h
	for h in "$REGISTRY" "127.0.0.1:$REGISTRY_PORT"; do
		mkdir -p "$CONF/certs.d/$h"
		cat >"$CONF/certs.d/$h/hosts.toml" <<EOF
server = "http://$h"
[host."http://$h"]
  capabilities = ["pull", "resolve", "push"]
EOF
	done

	# The registry keeps its blobs with the cluster's state (down deletes them).
	cat >"$CONF/registry.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog: {disabled: true}
storage:
  filesystem: {rootdirectory: $BASE/registry}
  delete: {enabled: true}
http:
  addr: 127.0.0.1:$REGISTRY_PORT
EOF

	cat >"$BASE/cni/net.d/10-local.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "etcd-operator-dev",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "mtu": $NODE_MTU,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": "$BASE/cni/ipam"}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

	cat >"$CONF/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $CONF/scheduler.kubeconfig
leaderElection:
  leaderElect: false
EOF

	cat >"$CONF/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization:
  mode: Webhook
clusterDNS: [$DNS_IP]
clusterDomain: $CLUSTER_DOMAIN
resolvConf: /etc/resolv.conf
# Imported images cannot be pulled again: never garbage-collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 2Gi
  imagefs.available: 2Gi
  nodefs.inodesFree: 5%
serializeImagePulls: false
shutdownGracePeriod: 0s
podPidsLimit: 4096
EOF

	cat >"$CONF/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $CONF/kube-proxy.kubeconfig
hostnameOverride: $NODE_NAME
bindAddress: $NODE_IP
mode: iptables
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF

	# As kubeadm writes it since v1.32 (kubernetes/kubernetes#128359): the cache
	# plugin does not cache the cluster domain. The kubernetes plugin answers
	# from its own watch, so caching only delays changes; cached denials in
	# particular keep a new Pod's name (<host>.<subdomain>.<ns>.svc) NXDOMAIN
	# for 30 s after its first lookup, even once the Pod has its address.
	cat >"$CONF/Corefile" <<EOF
.:53 {
    bind $NODE_IP
    errors
    health 127.0.0.1:18080
    ready 127.0.0.1:18181
    kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $CONF/coredns.kubeconfig local
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    forward . /etc/resolv.conf
    cache 30 {
        disable success $CLUSTER_DOMAIN
        disable denial $CLUSTER_DOMAIN
    }
    loop
    loadbalance
}
EOF
}

# ---------------------------------------------------------------------------
# Objects every cluster needs, applied once the apiserver answers.

bootstrap_objects() {
	kc apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kube-apiserver-kubelet-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kubelet-api-admin"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: kube-apiserver}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns-host"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns-host"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns-host"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:coredns-host"}]
---
# kube-router's NetworkPolicy firewall reads what it enforces; it writes nothing.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:kube-router"}
rules:
- apiGroups: [""]
  resources: [namespaces, pods, services, endpoints, nodes]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:kube-router"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kube-router"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:kube-router"}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
---
# CoreDNS runs on the host; this selector-less Service sends cluster DNS to it.
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
spec:
  clusterIP: $DNS_IP
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-host
  namespace: kube-system
  labels: {kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: etcd-operator-dev}
addressType: IPv4
ports:
- {name: dns, port: 53, protocol: UDP}
- {name: dns-tcp, port: 53, protocol: TCP}
endpoints:
- addresses: ["$NODE_IP"]
  conditions: {ready: true}
EOF
}

# ---------------------------------------------------------------------------

pause_image() {
	local src archive key
	src=$(cd "$REPO/hack/tools/kubernetes" && GOFLAGS=-mod=mod GOWORK=off GOSUMDB=off \
		go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c
	key=$(cat "$src" | sha256sum | cut -c1-12)
	archive=$(image_archive "$PAUSE_IMAGE" "$key")
	if [ ! -f "$archive" ]; then
		local d
		d=$(mktemp -d)
		gcc -Os -Wall -Werror -static -DVERSION=v3.10.1-local -o "$d/pause" "$src"
		build_image_from_dir "$PAUSE_IMAGE" "$key" "$d" '["/pause"]' 65535:65535
		rm -rf "$d"
	else
		import_archive "$archive"
	fi
}

dns_answers() {
	local out
	out=$(busybox nslookup "kubernetes.default.svc.$CLUSTER_DOMAIN" "$DNS_IP" 2>/dev/null) &&
		grep -q "$KUBERNETES_SVC_IP" <<<"$out"
}

node_ready() {
	[ "$(kc get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# True when every component is running: then up has nothing to do.
all_running() {
	local c
	for c in $COMPONENTS; do running "$c" || return 1; done
}

up() {
	local t0
	t0=$(date +%s)
	[ -n "$NODE_IP" ] || die "cannot find this machine's address (no default route?)"
	mkdir -p "$LC"
	# A component that stopped (or a machine that rebooted) is started again on
	# the state it left: the cluster's etcd, PersistentVolumes and namespaces
	# are kept. Only `down` deletes them.
	if [ -d "$RUNDIR/pids" ] && ! all_running; then
		local c stopped=""
		for c in $COMPONENTS; do running "$c" || stopped="$stopped $c"; done
		log "found a partly running cluster (stopped:$stopped); starting what is missing, state kept (make cluster-down resets)"
	fi
	if [ ! -d "$RUNDIR/pids" ]; then
		# A fresh start: keep the previous run's logs one generation back.
		rm -rf "$LOGDIR.prev"
		[ -d "$LOGDIR" ] && mv "$LOGDIR" "$LOGDIR.prev"
	fi
	mkdir -p "$LOGDIR"
	ln -sfn "$LOGDIR" "$LOGS"
	log "building or reusing pinned tools"
	# cert-manager (installed last) builds beside Kubernetes on a cold machine,
	# so a cold start does not wait for the two builds one after the other.
	local cm_pid cm_log=$LOGDIR/cert-manager-build.log
	"$REPO/hack/tools/build.sh" cert-manager >"$cm_log" 2>&1 &
	cm_pid=$!
	# kube-rbac-proxy is only needed when the operator is deployed (its image,
	# hack/images.sh): start it now so that it overlaps the Kubernetes build,
	# without making cluster-up wait for it.
	"$REPO/hack/tools/build.sh" kube-rbac-proxy >"$LOGDIR/kube-rbac-proxy-build.log" 2>&1 </dev/null &
	# In parallel first (hack/tools.sh); the lookups below are then instant.
	"$REPO/hack/tools.sh" kubernetes etcd-3.6.16 coredns registry kube-router
	K8S_BIN=$(tool_bin kubernetes)
	ETCD_BIN=$(tool_bin etcd-3.6.16)
	COREDNS_BIN=$(tool_bin coredns)
	REGISTRY_BIN=$(tool_bin registry)
	KUBE_ROUTER_BIN=$(tool_bin kube-router)

	prepare_host
	make_pki
	write_configs

	log "containerd"
	# A bed started before a change of containerd.toml runs the old settings:
	# restart containerd (its shims, and so every container, keep running).
	local sum
	sum=$(sha256sum <"$CONF/containerd.toml" | cut -c1-16)
	if running containerd && [ "$(cat "$RUNDIR/containerd.toml.sum" 2>/dev/null)" != "$sum" ]; then
		log "containerd.toml changed: restarting containerd (containers keep running)"
		stop_component containerd
	fi
	supervise containerd containerd --config "$CONF/containerd.toml"
	echo "$sum" >"$RUNDIR/containerd.toml.sum"
	wait_for 60 "containerd" ctr --address "$CONTAINERD_SOCK" version
	pause_image

	log "etcd (control plane)"
	supervise etcd "$ETCD_BIN/etcd" --name control-plane --data-dir "$BASE/etcd" \
		--listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
		--advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "control-plane=http://127.0.0.1:$ETCD_PEER_PORT" \
		--quota-backend-bytes 4294967296 --log-level warn
	wait_for 60 "etcd" curl -fsS "http://127.0.0.1:$ETCD_CLIENT_PORT/health"

	log "kube-apiserver"
	supervise kube-apiserver "$K8S_BIN/kube-apiserver" \
		--etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
		--bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$NODE_IP" \
		--service-cluster-ip-range "$SERVICE_CIDR" \
		--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--client-ca-file "$PKI/ca.crt" \
		--kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
		--kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
		--service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
		--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
		--authorization-mode Node,RBAC \
		--enable-admission-plugins NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,Priority,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,ResourceQuota,NodeRestriction,PodSecurity,StorageObjectInUseProtection,PersistentVolumeClaimResize \
		--kubelet-preferred-address-types InternalIP,Hostname \
		--allow-privileged=true --profiling=false --v=1
	wait_for 120 "kube-apiserver /readyz" kc get --raw /readyz

	bootstrap_objects

	log "kube-controller-manager and kube-scheduler"
	supervise kube-controller-manager "$K8S_BIN/kube-controller-manager" \
		--kubeconfig "$CONF/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$CONF/controller-manager.kubeconfig" \
		--authorization-kubeconfig "$CONF/controller-manager.kubeconfig" \
		--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
		--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
		--use-service-account-credentials --service-cluster-ip-range "$SERVICE_CIDR" \
		--controllers '*' --enable-hostpath-provisioner=true --leader-elect=false \
		--bind-address 127.0.0.1 --v=1
	supervise kube-scheduler "$K8S_BIN/kube-scheduler" --config "$CONF/scheduler.yaml" \
		--authentication-kubeconfig "$CONF/scheduler.kubeconfig" \
		--authorization-kubeconfig "$CONF/scheduler.kubeconfig" --bind-address 127.0.0.1 --v=1
	# The hostPath provisioner creates volume directories with mode 0750 as root;
	# etcd Pods run as a non-root user, so open each new directory up at once.
	supervise pv-permissions bash -c "inotifywait -qm -e create -e moved_to --format '%w%f' '$HOSTPATH_PV' |
		while read -r d; do chmod 0777 \"\$d\"; done"

	log "kubelet and kube-proxy"
	supervise kubelet "$K8S_BIN/kubelet" --config "$CONF/kubelet.yaml" \
		--kubeconfig "$CONF/kubelet.kubeconfig" --hostname-override "$NODE_NAME" \
		--node-ip "$NODE_IP" --root-dir "$BASE/kubelet" --v=1
	supervise kube-proxy "$K8S_BIN/kube-proxy" --config "$CONF/kube-proxy.yaml" --v=1
	# NetworkPolicy enforcement: kube-router with only its firewall (iptables + ipset
	# on the pod traffic the bridge forwards, seen through br_netfilter); routing and
	# the service proxy stay with the bridge CNI and kube-proxy.
	log "kube-router (NetworkPolicy firewall)"
	supervise kube-router "$KUBE_ROUTER_BIN/kube-router" --kubeconfig "$CONF/kube-router.kubeconfig" \
		--hostname-override "$NODE_NAME" --run-firewall=true --run-router=false \
		--run-service-proxy=false --enable-cni=false --service-cluster-ip-range "$SERVICE_CIDR" \
		--health-port 20244 --metrics-port 0 --v=0

	log "coredns"
	supervise coredns "$COREDNS_BIN/coredns" -conf "$CONF/Corefile"

	log "registry ($REGISTRY)"
	mkdir -p "$BASE/registry"
	supervise registry env OTEL_TRACES_EXPORTER=none "$REGISTRY_BIN/registry" serve "$CONF/registry.yml"
	wait_for 60 "the registry at $REGISTRY" curl -fsS "http://$REGISTRY/v2/"

	log "waiting for the node to be Ready"
	wait_for 180 "node $NODE_NAME Ready" node_ready
	# kubelet turns kernel.panic_on_oops on at start; on this VM an oops would
	# then reboot the machine. Put back the value the host had.
	sysctl -qw "kernel.panic_on_oops=$(sed -n 5p "$RUNDIR/sysctl.orig")" || true
	wait_for 120 "the default ServiceAccount" kc -n default get serviceaccount default
	log "waiting for cluster DNS"
	wait_for 120 "cluster DNS at $DNS_IP" dns_answers
	log "cert-manager"
	wait "$cm_pid" || die "building cert-manager failed; see $cm_log"
	"$REPO/hack/cert-manager.sh"
	if [ "${EO_WORKERS:-4}" -gt 0 ]; then
		log "worker nodes (EO_WORKERS=${EO_WORKERS:-4})"
		"$REPO/hack/nodes.sh" up "${EO_WORKERS:-4}" ${EO_WORKERS_OPEN:+--open}
	fi
	log "cluster up in $(($(date +%s) - t0))s; kubeconfig: $KUBECONFIG_FILE"
}

down() {
	local t0 c
	t0=$(date +%s)
	# Worker nodes (hack/nodes.sh) first: they use the control plane to leave.
	if [ -d "$BASE/nodes" ] || [ -d "$RUNDIR/nodes" ]; then
		"$REPO/hack/nodes.sh" down || true
	fi
	for c in registry coredns kube-router kube-proxy kubelet pv-permissions kube-scheduler kube-controller-manager; do
		stop_component "$c"
	done
	# Containers: stop every task, then the shims, before containerd goes.
	if running containerd; then
		local id
		for id in $(ctrk tasks ls -q 2>/dev/null); do
			ctrk tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
		done
	fi
	kill_cgroup_procs
	pkill -KILL -f "containerd-shim-runc-v2 .*-address $CONTAINERD_SOCK" 2>/dev/null || true
	for c in kube-apiserver etcd containerd; do
		stop_component "$c"
	done
	kill_cgroup_procs
	# Mounts made by kubelet and containerd (volumes, rootfs, network namespaces).
	local m
	for m in $(awk -v a="$BASE" -v b="$RUNDIR" '$2 ~ "^"a || $2 ~ "^"b || $2 ~ "^/run/netns/cni-" {print $2}' /proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	for m in /run/netns/cni-*; do
		[ -e "$m" ] && { umount -l "$m" 2>/dev/null || true; rm -f "$m"; }
	done
	ip link del cni0 2>/dev/null || true
	restore_host
	remove_cgroups
	sweep
	rm -rf "$BASE" "$RUNDIR" "$HOSTPATH_PV" "$KUBECONFIG_FILE"
	local left
	left=$(leftovers)
	if [ -n "$left" ]; then
		log "still running after down:"
		echo "$left" >&2
		exit 1
	fi
	log "cluster down in $(($(date +%s) - t0))s"
}

# Every process in a kubepods cgroup belongs to a Pod of this cluster.
kill_cgroup_procs() {
	local f
	for f in $(find /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods -name cgroup.procs 2>/dev/null); do
		# the cgroup may vanish between find and read: quiet, and not an error
		{ xargs -r kill -KILL <"$f"; } 2>/dev/null || true
	done
}

remove_cgroups() {
	local d
	for d in $(find /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods -depth -type d 2>/dev/null); do
		rmdir "$d" 2>/dev/null || true
	done
}

# The last resort of down: whatever of this cluster a step above could not stop (a worker
# whose state is gone, a supervisor whose pidfile was lost) still names the cluster's state
# or run directory on its command line; and worker network namespaces and their bridge
# without a worker. Killed and removed, each said.
sweep() {
	local p ns
	for p in $(pgrep -f "$BASE/|$RUNDIR/" 2>/dev/null); do
		[ "$p" = $$ ] && continue
		alive "$p" || continue
		log "left running, killed: $(ps -o pid=,args= -p "$p" 2>/dev/null | cut -c1-160)"
		kill -KILL "$p" 2>/dev/null || true
	done
	local f
	for f in $(find /sys/fs/cgroup/*/eo-worker-* -name cgroup.procs 2>/dev/null); do
		{ xargs -r kill -KILL <"$f"; } 2>/dev/null || true
	done
	for ns in $(ip netns list 2>/dev/null | sed -n 's/^\(eo-worker-[0-9]*\).*/\1/p'); do
		log "worker network namespace $ns left, removed"
		ip netns del "$ns" 2>/dev/null || true
	done
	if ip link show eo-nodes >/dev/null 2>&1; then
		ip link del eo-nodes 2>/dev/null || true
	fi
}

leftovers() {
	local p
	for p in $(pgrep -f "$BASE|$RUNDIR|inotifywait -qm -e create -e moved_to $HOSTPATH_PV" 2>/dev/null); do
		[ "$p" = $$ ] && continue
		alive "$p" || continue
		ps -o pid=,args= -p "$p" 2>/dev/null
	done
	local f
	for f in $(find /sys/fs/cgroup/*/kubepods -name cgroup.procs 2>/dev/null); do
		[ -s "$f" ] && echo "processes left in $f"
	done
	return 0
}

status() {
	local c
	for c in $COMPONENTS; do
		if running "$c"; then echo "$c: running (pid $(cat "$(pidfile "$c")"))"; else echo "$c: stopped"; fi
	done
	[ -d "$BASE/nodes" ] && "$REPO/hack/nodes.sh" status
	return 0
}

bundle_logs() {
	local out
	out=$LC/logs-$(date -u +%Y%m%dT%H%M%SZ).tar.gz
	[ -d "$LOGDIR" ] || die "no logs at $LOGDIR"
	mkdir -p "$LC"
	tar -C "$(dirname "$LOGDIR")" -czf "$out" "$(basename "$LOGDIR")"
	log "component logs bundled"
	echo "$out"
}

# One up or down at a time on this machine: several checkouts share the one
# cluster, and two concurrent first starts would each write half of the PKI.
# (The supervised components close this descriptor, see supervise.)
host_lock() {
	exec 7>/tmp/etcd-operator-cluster-up.lock
	if ! flock -n 7; then
		log "another 'cluster.sh up/down' is running; waiting for it"
		flock 7
	fi
	# hack/nodes.sh, run by up and down, holds it through this process.
	export EO_HOST_LOCKED=1
}

case ${1:-} in
up) host_lock && up ;;
down) host_lock && down ;;
status) status ;;
logs) bundle_logs ;;
*)
	echo "usage: $0 up|down|status|logs" >&2
	exit 2
	;;
esac

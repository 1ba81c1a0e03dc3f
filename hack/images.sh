#!/usr/bin/env bash
# Build the images the local cluster runs and import them into its containerd.
# No registry is involved: every image is assembled here with buildah, cached
# as an archive under ~/.cache/etcd-operator/images, and imported with ctr (the
# bed's registry at localhost:15000 is for make docker-push, hack/registry-test.sh).
#
#   hack/images.sh            etcd images, the e2e tools image, MinIO, kube-rbac-proxy, the operator image
#   hack/images.sh etcd|tools|minio|cert-manager|kube-rbac-proxy|operator
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

[ -S "$CONTAINERD_SOCK" ] || die "the local cluster is not up (no $CONTAINERD_SOCK); run 'make cluster-up'"
# One import at a time on this machine: `make check` starts one in the background
# (cluster-bg) that the e2e's own call may meet; the second finds the images there.
exec 6>/tmp/etcd-operator-images.lock
flock -n 6 || { log "waiting for another hack/images.sh to finish"; flock 6; }

# etcd versions with images, as the operator references them by default
# (quay.io/coreos/etcd:v<version>): the seeds' 3.6.11, the latest 3.7, 3.6 and 3.5.
ETCD_TOOLS="etcd-3.6.11 etcd-3.6.16 etcd-3.5.35 etcd-3.7.3"
TOOLS_IMAGE=localhost/etcd-operator-dev/busybox:1.35

# A minimal root filesystem like the distroless base upstream etcd images use:
# users root, nobody and nonroot (65532), a sticky /tmp, no shell.
base_rootfs() {
	local r=$1
	mkdir -p "$r/etc" "$r/tmp" "$r/var/lib/etcd" "$r/var/etcd" "$r/usr/local/bin"
	chmod 1777 "$r/tmp"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$r/etc/group"
	printf 'hosts: files dns\n' >"$r/etc/nsswitch.conf"
	mkdir -p "$r/etc/ssl/certs"
	cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/" 2>/dev/null || true
}

etcd_images() {
	local t bin version key r
	for t in $ETCD_TOOLS; do
		bin=$(tool_bin "$t")
		version=v${t#etcd-}
		key=$(cat "$bin/etcd" "$bin/etcdctl" "$bin/etcdutl" | sha256sum | cut -c1-12)
		r=$(mktemp -d)
		base_rootfs "$r"
		cp "$bin/etcd" "$bin/etcdctl" "$bin/etcdutl" "$r/usr/local/bin/"
		build_image_from_dir "quay.io/coreos/etcd:$version" "$key" "$r" '[]' 0:0 '["/usr/local/bin/etcd"]' \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		rm -rf "$r"
		log "imported quay.io/coreos/etcd:$version"
	done
}

# A shell and the usual applets (sh, nc, nslookup, httpd) for test Pods, from
# Debian's static busybox. Its wget crashes (also on the host), so tests speak
# HTTP with nc. Also /bin/lincheck, the linearizability checker of the chaos
# cases (test/lincheck, a static Go build: hack/tools/build.sh lincheck).
tools_image() {
	local key r a lc
	lc=$(tool_bin lincheck)/lincheck
	key=$(cat /bin/busybox /lib/x86_64-linux-gnu/libc.so.6 "$lc" | sha256sum | cut -c1-12)
	r=$(mktemp -d)
	base_rootfs "$r"
	mkdir -p "$r/bin" "$r/lib/x86_64-linux-gnu" "$r/lib64"
	cp /bin/busybox "$r/bin/busybox"
	cp "$lc" "$r/bin/lincheck"
	# The static busybox still loads glibc's NSS modules to resolve names
	# (nc, ping); give it the host's, which match the glibc it was built with.
	cp -L /lib/x86_64-linux-gnu/{libc.so.6,libnss_files.so.2,libnss_dns.so.2,libresolv.so.2} "$r/lib/x86_64-linux-gnu/"
	cp -L /lib64/ld-linux-x86-64.so.2 "$r/lib64/"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$r/bin/$a"
	done
	build_image_from_dir "$TOOLS_IMAGE" "$key" "$r" '[]' 0:0 '["/bin/sh"]' PATH=/bin
	rm -rf "$r"
	log "imported $TOOLS_IMAGE"
}

# MinIO for the snapshot suites (S3 destination), from the pinned, statically
# linked binary of hack/tools/build.sh minio. Runs as nonroot on /data.
MINIO_IMAGE=localhost/etcd-operator-dev/minio:e2e
minio_image() {
	local bin key r
	bin=$(tool_bin minio)
	key=$(sha256sum <"$bin/minio" | cut -c1-12)
	r=$(mktemp -d)
	base_rootfs "$r"
	mkdir -p "$r/data"
	chmod 1777 "$r/data"
	cp "$bin/minio" "$r/usr/local/bin/minio"
	build_image_from_dir "$MINIO_IMAGE" "$key" "$r" '["/usr/local/bin/minio"]' 65532:65532 \
		'["server","/data","--address",":9000"]' PATH=/usr/local/bin HOME=/tmp
	rm -rf "$r"
	log "imported $MINIO_IMAGE"
}

# cert-manager's controller, webhook and cainjector under the names and tags its
# chart uses (quay.io/jetstack/cert-manager-<name>:<version>), from the pinned
# build of hack/tools/build.sh cert-manager. Each runs as nonroot (65532), as
# upstream's images do; the chart passes only arguments, so the binary is the
# entrypoint.
cert_manager_images() {
	local bin version c key r
	bin=$(tool_bin cert-manager)
	version=$(sed -n 's,^// version: ,,p' "$REPO/hack/tools/cert-manager/go.mod" | head -n1)
	for c in controller webhook cainjector; do
		key=$(sha256sum <"$bin/cert-manager-$c" | cut -c1-12)
		r=$(mktemp -d)
		base_rootfs "$r"
		cp "$bin/cert-manager-$c" "$r/usr/local/bin/cert-manager-$c"
		build_image_from_dir "quay.io/jetstack/cert-manager-$c:$version" "$key" "$r" \
			"[\"/usr/local/bin/cert-manager-$c\"]" 65532:65532 '' PATH=/usr/local/bin
		rm -rf "$r"
		log "imported quay.io/jetstack/cert-manager-$c:$version"
	done
}

# kube-rbac-proxy, the chart's metrics sidecar (kubeRbacProxy.enabled, the
# default), under the chart's own image reference, so the default values work
# here without a pull: built from hack/tools/build.sh kube-rbac-proxy, on the
# same distroless-like base as upstream's image, as nonroot (65532).
kube_rbac_proxy_image() {
	local values=$REPO/charts/etcd-operator/values.yaml bin version repo tag key r
	bin=$(tool_bin kube-rbac-proxy)
	version=$(sed -n 's,^// version: ,,p' "$REPO/hack/tools/kube-rbac-proxy/go.mod" | head -n1)
	repo=$(sed -n '/^kubeRbacProxy:/,/^[a-z]/s/^    repository: //p' "$values")
	tag=$(sed -n '/^kubeRbacProxy:/,/^[a-z]/s/^    tag: //p' "$values")
	[ "$tag" = "$version" ] ||
		die "charts/etcd-operator/values.yaml has kubeRbacProxy.image.tag '$tag' but hack/tools/kube-rbac-proxy pins '$version'; keep them equal"
	key=$(sha256sum <"$bin/kube-rbac-proxy" | cut -c1-12)
	r=$(mktemp -d)
	base_rootfs "$r"
	cp "$bin/kube-rbac-proxy" "$r/usr/local/bin/kube-rbac-proxy"
	build_image_from_dir "$repo:$tag" "$key" "$r" '["/usr/local/bin/kube-rbac-proxy"]' 65532:65532 '' \
		PATH=/usr/local/bin
	rm -rf "$r"
	log "imported $repo:$tag"
}

operator_image() {
	"$REPO/hack/operator-image.sh" "$(operator_image_ref)"
}

what=${1:-all}
case $what in
all)
	etcd_images
	tools_image
	minio_image
	kube_rbac_proxy_image
	operator_image
	;;
etcd) etcd_images ;;
tools) tools_image ;;
minio) minio_image ;;
cert-manager) cert_manager_images ;;
kube-rbac-proxy) kube_rbac_proxy_image ;;
operator) operator_image ;;
*) die "unknown image set '$what' (all, etcd, tools, minio, cert-manager, kube-rbac-proxy, operator)" ;;
esac

# etcd-operator image: the operator binary, the shared libraries it links
# against and nothing else (no shell, no package manager), running as a
# non-root user.
#
#   make docker-build IMG=<repository>:<tag>   (buildah bud, hack/operator-image.sh)
#   docker build -t etcd-operator:dev .         (any OCI builder works as well)
#
# The same image (OPERATOR_IMAGE) runs the controller manager and the agent
# subcommands of src/agent (src/agent/cli.c): snapshot-agent in an EtcdSnapshot's
# Job, snapshot-prune in a schedule's prune Job, restore-agent and restore-rebuild
# in the init containers of a restored cluster's seed, adopt-data in the init
# container of a member adopted from the aenix operator (docs/migration.md).
# Only bin/etcd-operator goes
# in (the kubectl-etcd plugin runs on workstations). Everything lives under
# /opt/etcd-operator so it can be copied whole into another container (the
# restore init container does, with --install-self) and started there through
# its own loader:
#   /opt/etcd-operator/lib/ld-linux-x86-64.so.2 --library-path /opt/etcd-operator/lib \
#       /opt/etcd-operator/bin/etcd-operator ...

ARG DEBIAN_RELEASE=bookworm

FROM debian:${DEBIAN_RELEASE} AS build
RUN apt-get update \
	&& apt-get install -y --no-install-recommends \
		build-essential pkg-config ca-certificates \
		libcurl4-openssl-dev libjansson-dev libyaml-dev libssl-dev libmicrohttpd-dev zlib1g-dev \
	&& rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY src/ src/
COPY cmd/ cmd/
RUN make -j"$(nproc)" all CFLAGS="-O2 -fstack-protector-strong -D_FORTIFY_SOURCE=2" \
	&& strip bin/*
# Collect the binary with exactly the libraries the dynamic loader resolves for
# it, plus CA certificates and the passwd/group entries of the runtime user.
RUN set -eu; \
	root=/rootfs/opt/etcd-operator; \
	mkdir -p "$root/bin" "$root/lib" /rootfs/etc/ssl/certs /rootfs/tmp /rootfs/lib64; \
	cp bin/etcd-operator "$root/bin/"; \
	for lib in $(ldd bin/etcd-operator | awk '/=> \// {print $3} /^\t\/lib/ {print $1}'); do \
		cp -L "$lib" "$root/lib/"; \
	done; \
	cp -L /lib64/ld-linux-x86-64.so.2 /rootfs/lib64/; \
	ln -s /opt/etcd-operator/bin/etcd-operator /rootfs/etcd-operator; \
	cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/; \
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >/rootfs/etc/passwd; \
	printf 'root:x:0:\nnonroot:x:65532:\n' >/rootfs/etc/group; \
	chmod 1777 /rootfs/tmp

FROM scratch
COPY --from=build /rootfs/ /
ENV LD_LIBRARY_PATH=/opt/etcd-operator/lib \
	SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
ENTRYPOINT ["/etcd-operator"]

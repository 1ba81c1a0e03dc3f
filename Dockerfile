# etcd-operator image: the operator binary on a slim Debian base with only the
# runtime libraries it links against, running as a non-root user.
#
#   docker build -t etcd-operator:dev .
#
# The same image runs the controller manager and the agent subcommands used by
# snapshot Jobs and restore init containers (OPERATOR_IMAGE).

ARG DEBIAN_RELEASE=bookworm

FROM debian:${DEBIAN_RELEASE} AS build
RUN apt-get update \
	&& apt-get install -y --no-install-recommends \
		build-essential pkg-config \
		libcurl4-openssl-dev libjansson-dev libyaml-dev libssl-dev libmicrohttpd-dev \
	&& rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY src/ src/
COPY cmd/ cmd/
RUN make -j"$(nproc)" all CFLAGS="-O2 -fstack-protector-strong -D_FORTIFY_SOURCE=2" \
	&& strip bin/*

FROM debian:${DEBIAN_RELEASE}-slim
RUN apt-get update \
	&& apt-get install -y --no-install-recommends \
		ca-certificates libcurl4 libjansson4 libyaml-0-2 libssl3 libmicrohttpd12 \
	&& rm -rf /var/lib/apt/lists/*
COPY --from=build /src/bin/etcd-operator /etcd-operator
USER 65532:65532
ENTRYPOINT ["/etcd-operator"]

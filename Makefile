# etcd-operator build. `make` builds bin/etcd-operator; `make test` runs the unit
# tests (plain and under ASan/UBSan; the Go tests of the e2e linearizability
# checker, test/lincheck), the fuzz targets for a bounded time and the
# integration tests; `make check` adds the end-to-end suite on the local cluster
# (see docs/development.md).

CC      ?= gcc
.DEFAULT_GOAL := all
PKGS    := libcurl jansson yaml-0.1 openssl libmicrohttpd zlib
# The library flags are asked of pkg-config when a recipe first needs them (and
# then kept), not when the Makefile is read: on a fresh machine the packages are
# installed by the deps stamp below, after this file has been parsed.
PKG_CFLAGS = $(eval PKG_CFLAGS := $$(call pkgconf,--cflags))$(PKG_CFLAGS)
PKG_LIBS   = $(eval PKG_LIBS := $$(call pkgconf,--libs) -lpthread -lm)$(PKG_LIBS)
pkgconf = $(if $(shell pkg-config --exists $(PKGS) 2>/dev/null && echo y),$(shell pkg-config $(1) $(PKGS)),$(error pkg-config does not know all of $(PKGS): run 'make deps' (hack/deps.sh)))
# Every compile waits for the Debian packages (hack/deps.sh), once per change of
# the package list.
DEPS_STAMP := build/.deps-$(shell cat .ci/packages hack/deps.sh 2>/dev/null | cksum | cut -d' ' -f1)
WARN    := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes
BASEFLAGS = -std=c17 -D_GNU_SOURCE -Isrc $(WARN) $(PKG_CFLAGS) -g
CFLAGS  ?= -O2
SANFLAGS := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_SRCS  := $(sort $(shell find src -name '*.c' 2>/dev/null))
# Test-only code (the fake apiserver, shared unit-test helpers): linked into the
# unit and integration tests, never into libeo.a or the operator binary.
TEST_SUPPORT_SRCS := $(sort $(wildcard test/support/*.c))
UNIT_SRCS := $(sort $(wildcard test/unit/test_*.c))
UNIT_NAMES := $(patsubst test/unit/%.c,%,$(UNIT_SRCS))
INT_SRCS  := $(sort $(wildcard test/integration/test_*.c))
INT_NAMES := $(patsubst test/integration/%.c,%,$(INT_SRCS))
CMD_NAMES := $(notdir $(wildcard cmd/*))

# $(1) = build flavour dir, $(2) = extra flags
define flavour
$(1)/obj/%.o: %.c | $$(DEPS_STAMP)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASEFLAGS) $(2) -MMD -MP -c $$< -o $$@
$(1)/obj/test/%.o: test/%.c | $$(DEPS_STAMP)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(BASEFLAGS) -Itest $(2) -MMD -MP -c $$< -o $$@
$(1)/libeotest.a: $$(patsubst %.c,$(1)/obj/%.o,$$(TEST_SUPPORT_SRCS))
	@mkdir -p $$(dir $$@)
	rm -f $$@
	$$(if $$^,ar rcs $$@ $$^,ar rcs $$@)
$(1)/libeo.a: $$(patsubst %.c,$(1)/obj/%.o,$$(LIB_SRCS))
	@mkdir -p $$(dir $$@)
	rm -f $$@
	$$(if $$^,ar rcs $$@ $$^,ar rcs $$@)
$(1)/test/%: $(1)/obj/test/unit/%.o $(1)/libeotest.a $(1)/libeo.a
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) $$< $(1)/libeotest.a $(1)/libeo.a -lcmocka $$(PKG_LIBS) -o $$@
$(1)/itest/%: $(1)/obj/test/integration/%.o $(1)/libeotest.a $(1)/libeo.a
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) $$< $(1)/libeotest.a $(1)/libeo.a -lcmocka $$(PKG_LIBS) -o $$@
endef

$(eval $(call flavour,build,$(CFLAGS)))
$(eval $(call flavour,build/asan,$(SANFLAGS)))

# libFuzzer targets (test/fuzz/fuzz_*.c, docs/development.md): clang, the library
# built with coverage instrumentation and ASan/UBSan. `make fuzz` replays every
# target's seeds and regressions, then fuzzes each with a fixed count of inputs (test/fuzz/run.sh;
# FUZZ_SECONDS=0: replay only; FUZZ_RUNS=0: fuzz for FUZZ_SECONDS instead).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 20
FUZZ_SAN     := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_NAMES   := $(patsubst test/fuzz/%.c,%,$(sort $(wildcard test/fuzz/fuzz_*.c)))
# The kubeconfig target confines file reads to its scratch directory and never starts an exec
# credential plugin (its stand-in answers from the input).
FUZZ_LDFLAGS_fuzz_kubeconfig := -Wl,--wrap=fopen -Wl,--wrap=eo__kube_exec_launch

build/fuzz/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASEFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
build/fuzz/libeo.a: $(patsubst %.c,build/fuzz/obj/%.o,$(LIB_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^
build/fuzz/bin/%: build/fuzz/obj/test/fuzz/%.o build/fuzz/libeo.a
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $< build/fuzz/libeo.a $(PKG_LIBS) $(FUZZ_LDFLAGS_$*) -o $@

.PHONY: deps all lint test test-build unit unit-asan lincheck-test integration e2e check demo format format-check clean \
        tools cluster-up cluster-down cluster-logs images deploy undeploy bench fuzz fuzz-build \
        kubectl-etcd install uninstall run build-dist-manifests docker-build docker-push registry-test \
        tools-bg cluster-bg rules-test monitoring-up monitoring-down
.SECONDARY:

all: $(patsubst %,bin/%,$(CMD_NAMES))

# The kubectl plugin alone (docs/kubectl-etcd.md): bin/kubectl-etcd.
kubectl-etcd: bin/kubectl-etcd

bin/%: build/obj/cmd/%/main.o build/libeo.a
	@mkdir -p bin
	$(CC) $(CFLAGS) $< build/libeo.a $(PKG_LIBS) -o $@

-include $(shell find build -name '*.d' 2>/dev/null)

unit: $(patsubst %,build/test/%,$(UNIT_NAMES))
	@set -e; for t in $^; do echo "== $$t"; $$t; done

unit-asan: $(patsubst %,build/asan/test/%,$(UNIT_NAMES))
	@set -e; for t in $^; do echo "== $$t (asan+ubsan)"; ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1 $$t; done

fuzz-build: $(patsubst %,build/fuzz/bin/%,$(FUZZ_NAMES))

fuzz: fuzz-build
	test/fuzz/run.sh $(FUZZ_SECONDS) $(patsubst %,build/fuzz/bin/%,$(FUZZ_NAMES))

# The etcd versions run ITEST_JOBS at a time (test/integration/run.sh, EO_ITEST_JOBS).
ITEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
integration: all $(patsubst %,build/itest/%,$(INT_NAMES))
	EO_ITEST_JOBS=$${EO_ITEST_JOBS:-$(ITEST_JOBS)} test/integration/run.sh $(patsubst %,build/itest/%,$(INT_NAMES))

# Generated files must match their sources, and C layout must match .clang-format.
lint: $(DEPS_STAMP) format-check
	hack/layers.sh
	hack/sync-crds.sh --check
	hack/render-manifests.sh --check
	hack/chart-lint.sh

# Every binary `make test` runs, compiled first with one job per core (TEST_JOBS): the test
# runs themselves are mostly one process at a time, so a serial build leaves a core idle.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test-build: | $(DEPS_STAMP)
	$(MAKE) --no-print-directory -j$(TEST_JOBS) all $(patsubst %,build/test/%,$(UNIT_NAMES)) \
		$(patsubst %,build/asan/test/%,$(UNIT_NAMES)) fuzz-build $(patsubst %,build/itest/%,$(INT_NAMES))

test: test-build all lint unit unit-asan lincheck-test rules-test fuzz integration

# The chart's alerting rules as users install them: rendered by helm, checked and unit-tested
# by promtool (hack/rules-test.sh, test/monitoring/rules-test.yaml, docs/monitoring.md).
rules-test:
	hack/rules-test.sh

# The e2e linearizability checker's own tests (test/lincheck, Go test tooling):
# only its porcupine model package, which catches a hand-made stale read. The Go
# caches are the ones hack/tools/build.sh uses.
lincheck-test:
	cd test/lincheck && PATH="$$PATH:/usr/local/go/bin" GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local \
		GOSUMDB=off CGO_ENABLED=0 GOCACHE="$${GOCACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/go-build}" \
		go test ./kvcheck/

# --- local cluster, images, end-to-end (hack/, docs/development.md) ---
deps:
	hack/deps.sh

# (An image build copies only the sources, and installs the packages itself.)
$(DEPS_STAMP):
	$(if $(wildcard hack/deps.sh),hack/deps.sh,@echo "make: no hack/deps.sh here; the packages must be installed already")
	@mkdir -p build && rm -f build/.deps-* && touch $@

tools: deps
	hack/tools.sh all

cluster-up: deps
	hack/cluster.sh up
	@if [ -f build/cluster-bg.log ] && grep -q 'error' build/cluster-bg.log; then \
		echo "make: the background start (cluster-bg) failed; its log, build/cluster-bg.log, ends:"; \
		tail -n 15 build/cluster-bg.log; fi

cluster-down:
	hack/cluster.sh down

cluster-logs:
	hack/cluster.sh logs

images:
	hack/images.sh

# The installation guide's targets (docs/installation.md). They act on the
# cluster $KUBECONFIG names, else on the local bed; hack/install.sh says which.
IMG          ?=
NAMESPACE    ?= etcd-operator-system
HELM_RELEASE ?= etcd-operator
INSTALL_ENV   = IMG='$(IMG)' NAMESPACE='$(NAMESPACE)' HELM_RELEASE='$(HELM_RELEASE)'

install:
	$(INSTALL_ENV) hack/install.sh install

uninstall:
	$(INSTALL_ENV) hack/install.sh uninstall

deploy:
	$(INSTALL_ENV) hack/install.sh deploy

undeploy:
	$(INSTALL_ENV) hack/install.sh undeploy

run: all
	$(INSTALL_ENV) hack/install.sh run

build-dist-manifests:
	$(INSTALL_ENV) hack/install.sh dist

docker-build:
	$(INSTALL_ENV) hack/install.sh docker-build

docker-push:
	$(INSTALL_ENV) hack/install.sh docker-push

e2e: cluster-up bin/kubectl-etcd
	hack/e2e.sh

# The monitoring bed (hack/monitoring.sh, docs/monitoring.md): prometheus-operator and a
# Prometheus built from their pinned modules, reading the chart's monitors and rules. Only
# the e2e case operator/alerts-fire and these targets start it, not cluster-up.
monitoring-up: cluster-up
	hack/monitoring.sh up

monitoring-down:
	hack/monitoring.sh down

# docker-build + docker-push to the bed's registry, then a Pod pulls and runs it.
registry-test: cluster-up
	hack/registry-test.sh

# Every pinned tool `make check` needs is built in the background from the start, one at a time
# in the order the run needs them: helm (lint) and promtool (rules-test), the etcd versions and
# MinIO (integration), the bed's components (cluster-up), the e2e checker, cert-manager and
# kube-rbac-proxy (the operator's deploy), then prometheus-operator and the Prometheus server
# (the e2e case operator/alerts-fire). On a warm machine each is found cached at once. Cold,
# the builds fill the time the tests leave a core idle (single test processes, valgrind), so
# cluster-up finds the bed built instead of starting a 10-minute build when the tests end. A
# step that needs a tool still being built waits for it (hack/tools/build.sh holds a per-tool
# lock); one whose build failed here builds it again itself.
TOOLS_BG := helm prometheus etcd-3.6.11 etcd-3.5.35 etcd-3.6.16 etcd-3.7.3 minio kubernetes \
	coredns registry kube-router chainsaw lincheck cert-manager kube-rbac-proxy \
	prometheus-operator prometheus-server
# The bed starts in the background as well (cluster-bg: hack/cluster.sh up, then the e2e's
# images), beside the tests: from no cluster that is about six minutes of image imports and
# component starts, which the tests' CPU-bound work leaves room for. `e2e` runs cluster-up
# again, which waits for the background one (the machine-wide lock) and finds it running;
# hack/images.sh likewise. The background start's output: build/cluster-bg.log.
check: deps tools-bg cluster-bg test e2e registry-test

cluster-bg: deps
	@mkdir -p build
	@echo "make: the local cluster starts in the background (build/cluster-bg.log)"
	@{ hack/cluster.sh up && hack/images.sh; } >build/cluster-bg.log 2>&1 </dev/null &

tools-bg:
	@mkdir -p build
	@{ for t in $(TOOLS_BG); do hack/tools/build.sh $$t >build/$$t-build.log 2>&1; done; } </dev/null &

demo: deps all
	hack/demo.sh

# all: the loopback snapshot figures (bench/snapshot.sh) run this tree's bin/etcd-operator.
bench: all
	bench/run.sh

format:
	clang-format -i $(shell find src cmd test -name '*.[ch]' 2>/dev/null)

format-check: | $(DEPS_STAMP)
	clang-format --dry-run --Werror $(shell find src cmd test -name '*.[ch]' 2>/dev/null)

clean:
	rm -rf build bin

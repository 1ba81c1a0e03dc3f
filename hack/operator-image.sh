#!/usr/bin/env bash
# Build the operator image from the project's own Dockerfile, without a
# registry or a Docker engine: the Debian base images the Dockerfile names are
# made locally with debootstrap, then `buildah bud` runs the Dockerfile as is.
# The result is cached as an archive and imported into the cluster's containerd.
#
#   hack/operator-image.sh [image-ref]     default: operator_image_ref (hack/lib.sh)
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

ref=${1:-$(operator_image_ref)}
release=bookworm

# The Debian base, once per machine: debootstrap's minbase variant is close to
# the official debian:<release>-slim image, and serves for both tags.
base_images() {
	local tarball=$IMAGE_CACHE/debian-$release-minbase.tar c
	if buildah inspect --type image "docker.io/library/debian:$release" >/dev/null 2>&1 &&
		buildah inspect --type image "docker.io/library/debian:$release-slim" >/dev/null 2>&1; then
		return 0
	fi
	mkdir -p "$IMAGE_CACHE"
	if [ ! -f "$tarball" ]; then
		local root
		root=$(mktemp -d)
		log "debootstrap $release (once per machine)"
		debootstrap --variant=minbase "$release" "$root" http://deb.debian.org/debian >"$LOGDIR/debootstrap.log" 2>&1 ||
			{ mkdir -p "$LOGDIR"; die "debootstrap failed; see $LOGDIR/debootstrap.log"; }
		rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
		tar -C "$root" -cf "$tarball.tmp" .
		mv "$tarball.tmp" "$tarball"
		rm -rf "$root"
	fi
	c=$(buildah from scratch)
	buildah add "$c" "$tarball" / >/dev/null
	buildah config --cmd '["bash"]' --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
	buildah commit -q "$c" "docker.io/library/debian:$release" >/dev/null
	buildah tag "docker.io/library/debian:$release" "docker.io/library/debian:$release-slim"
	buildah rm "$c" >/dev/null
}

# The image is keyed by everything the Dockerfile copies in.
key=$(operator_source_key)
archive=$(image_archive "$ref" "$key")
if [ ! -f "$archive" ]; then
	mkdir -p "$LOGDIR"
	base_images
	log "buildah bud -f Dockerfile -t $ref (log: $LOGDIR/operator-image.log)"
	# The context is a clean export of what the Dockerfile needs, so local
	# build outputs never leak into the image.
	ctx=$(mktemp -d)
	(cd "$REPO" && tar -cf - Dockerfile Makefile src cmd) | tar -C "$ctx" -xf -
	buildah bud --isolation chroot --network host --layers --pull-never -f "$ctx/Dockerfile" -t "$ref" "$ctx" \
		>"$LOGDIR/operator-image.log" 2>&1 || { rm -rf "$ctx"; die "image build failed; see $LOGDIR/operator-image.log"; }
	rm -rf "$ctx"
	rm -f "$archive.tmp"
	buildah push -q "$ref" "docker-archive:$archive.tmp:$ref"
	mv "$archive.tmp" "$archive"
	# Keep one archive per repository: every source change makes a new one.
	prefix=$(echo "${ref%:*}" | tr '/:' '__')_
	find "$IMAGE_CACHE" -maxdepth 1 -name "$prefix*.tar" ! -path "$archive" -delete
	buildah rmi "$ref" >/dev/null 2>&1 || true
fi
if [ -S "$CONTAINERD_SOCK" ]; then
	import_archive "$archive"
	log "imported $ref"
else
	log "built $ref ($archive); the local cluster is not up, so it was not imported"
fi

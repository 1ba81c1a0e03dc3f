#!/usr/bin/env bash
# Install the Debian packages the build, the tests and the local cluster need
# (the list is .ci/packages). A no-op when they are all present.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t pkgs < <(grep -v '^#' .ci/packages)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps.sh: installing ${missing[*]}" >&2
	[ "$(id -u)" = 0 ] || { echo "deps.sh: run as root (apt-get)" >&2; exit 1; }
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || { echo "deps.sh: Go (1.25+) is required, at /usr/local/go or on PATH" >&2; exit 1; }

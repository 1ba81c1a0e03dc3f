#!/usr/bin/env bash
# Certificates for the TLS end-to-end cases. The commands are not copied here: they are
# read from the "Making the certificates" block of docs/operations.md and run as written
# (placeholders filled in), so the documented recipe is what the tests use.
#
#   tlscerts.sh DIR CLUSTER NS [DOMAIN]
#
# Writes into DIR what the docs make - ca.crt/ca.key, server.crt/key (serverAuth+clientAuth,
# the runbook's SANs), op-client.crt/key (clientAuth), peer.crt/key, peer-ca.crt - and, with
# the docs' own leaf function, the variants the tests need: server2.* and op-client2.* (new
# leaves of the same CA, for rotation), server-noclient.* (serverAuth only), and
# op-client-other.* with other-ca.crt (a client certificate from a CA etcd does not trust),
# and peer-other.* (a peer leaf of that other CA, for a CA rotation).
set -euo pipefail
dir=$1 cluster=$2 ns=$3 domain=${4:-cluster.local}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$dir"
cd "$dir"

awk '/^### Making the certificates/ { f = 1 } f && /^```sh$/ { c = 1; next } c && /^```$/ { exit } c { print }' \
	"$repo/docs/operations.md" |
	sed "s/<cluster-domain>/$domain/g; s/<cluster>/$cluster/g; s/<ns>/$ns/g" >docs-certs.sh
grep -q '^leaf server ' docs-certs.sh || { echo "tlscerts.sh: no recipe in docs/operations.md" >&2; exit 1; }
# shellcheck disable=SC1091
. ./docs-certs.sh >/dev/null 2>&1

SERVER_SANS="DNS:*.$cluster.$ns.svc,DNS:*.$cluster.$ns.svc.$domain,DNS:$cluster.$ns.svc,DNS:$cluster-client.$ns.svc,DNS:localhost,IP:127.0.0.1"
{
	leaf server2 "$cluster-server" serverAuth,clientAuth "$SERVER_SANS"
	leaf op-client2 "$cluster-operator" clientAuth ""
	leaf server-noclient "$cluster-server" serverAuth "$SERVER_SANS"
	# Another CA, with the same commands in a directory of its own.
	mkdir -p other && cd other
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=other-ca" \
		-keyout ca.key -out ca.crt \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign
	leaf op-client-other "$cluster-operator" clientAuth ""
	leaf peer-other "$cluster-peer" serverAuth,clientAuth "DNS:*.$cluster.$ns.svc,DNS:*.$cluster.$ns.svc.$domain"
	cd ..
	mv other/op-client-other.crt other/op-client-other.key other/peer-other.crt other/peer-other.key .
	mv other/ca.crt other-ca.crt
	rm -rf other
} >/dev/null 2>&1
rm -f ./*.srl ./*.csr ./*.ext docs-certs.sh
for f in ca.crt server.crt server.key op-client.crt op-client.key peer.crt peer.key peer-ca.crt \
	server2.crt op-client2.crt server-noclient.crt op-client-other.crt other-ca.crt peer-other.crt; do
	[ -s "$f" ] || { echo "tlscerts.sh: $f was not made" >&2; exit 1; }
done

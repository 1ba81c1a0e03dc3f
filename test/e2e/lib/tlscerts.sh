#!/usr/bin/env bash
# Certificates for the TLS end-to-end cases, made with the openssl commands of
# docs/operations.md ("TLS with your own Secrets"), run as written there.
#
#   tlscerts.sh DIR CLUSTER NS [DOMAIN]
#
# Writes into DIR: ca.crt/ca.key, server.crt/key (serverAuth+clientAuth, the SANs the
# runbook asks for), op-client.crt/key (clientAuth), peer.crt/key and peer-ca.crt (the same
# CA), plus the variants the tests need: server2.* and op-client2.* (new leaves of the same
# CA, for rotation), server-noclient.* (serverAuth only), and other-ca.* with
# op-client-other.* (a client certificate from a CA etcd does not trust).
set -euo pipefail
dir=$1 cluster=$2 ns=$3 domain=${4:-cluster.local}
mkdir -p "$dir"
cd "$dir"

leaf() { # name cn extended-key-usage subject-alt-names ca
	local name=$1 cn=$2 eku=$3 san=$4 ca=${5:-ca}
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=$eku"
		[ -z "$san" ] || echo "subjectAltName=$san"
	} >"$name.ext"
	openssl req -new -newkey rsa:2048 -nodes -subj "/CN=$cn" \
		-keyout "$name.key" -out "$name.csr" 2>/dev/null
	openssl x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial \
		-days 365 -extfile "$name.ext" -out "$name.crt" 2>/dev/null
	rm -f "$name.csr" "$name.ext"
}

# --- the docs' commands, with <cluster>, <ns> and <cluster-domain> filled in ---
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$cluster-ca" \
	-keyout ca.key -out ca.crt \
	-addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
SERVER_SANS="DNS:*.$cluster.$ns.svc,DNS:*.$cluster.$ns.svc.$domain,DNS:$cluster.$ns.svc,DNS:$cluster-client.$ns.svc,DNS:localhost,IP:127.0.0.1"
PEER_SANS="DNS:*.$cluster.$ns.svc,DNS:*.$cluster.$ns.svc.$domain"
leaf server "$cluster-server" serverAuth,clientAuth "$SERVER_SANS"
leaf op-client "$cluster-operator" clientAuth ""
leaf peer "$cluster-peer" serverAuth,clientAuth "$PEER_SANS"
cp ca.crt peer-ca.crt

# --- variants for the tests ---
leaf server2 "$cluster-server" serverAuth,clientAuth "$SERVER_SANS"
leaf op-client2 "$cluster-operator" clientAuth ""
leaf server-noclient "$cluster-server" serverAuth "$SERVER_SANS"
openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=other-ca" \
	-keyout other-ca.key -out other-ca.crt \
	-addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
leaf op-client-other "$cluster-operator" clientAuth "" other-ca
rm -f ./*.srl

#!/usr/bin/env bash
# Regenerates the TLS fixtures of test_etcd_tlscheck.c and test_controller_tlsload.c (test-only
# keys, never used anywhere else). Every certificate is valid for 3650 days from the day it was
# made (November 2026); the tests pass their own "now" (2027-06-01, and 2040 / 2020 for the
# expired and not-yet-valid cases), so the files never expire under them.
set -euo pipefail
cd "$(dirname "$0")"
rm -f *.pem *.srl
ext() { printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n%s\n' "$1"; }
ca() { # name cn
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1-key.pem" \
		-out "$1.pem" -subj "/CN=$2" -days 3650 \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
}
leaf() { # name ca extension-lines
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1-key.pem" \
		-out "$1.csr" -subj "/CN=$1" 2>/dev/null
	openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2-key.pem" -CAcreateserial \
		-days 3650 \
		-extfile <(ext "$3") -out "$1.pem" 2>/dev/null
	rm -f "$1.csr"
}
ca ca "test CA"
ca other-ca "other CA"
leaf server ca "extendedKeyUsage=serverAuth,clientAuth
subjectAltName=DNS:localhost,IP:127.0.0.1"
leaf server-noclient ca "extendedKeyUsage=serverAuth"
leaf client ca "extendedKeyUsage=clientAuth"
leaf client-other other-ca "extendedKeyUsage=clientAuth"
leaf noeku ca "subjectAltName=DNS:localhost"
rm -f *.srl

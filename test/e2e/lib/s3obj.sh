#!/usr/bin/env bash
# Reads and writes objects of the e2e MinIO (Service minio:9000 in $NAMESPACE, credentials
# in the Secret s3-creds) from the machine that runs Chainsaw: kubectl port-forward to a
# loopback port, and curl's own AWS SigV4 signing.
#
#   s3obj.sh get <key> <file>      download snaps/<key> to file
#   s3obj.sh put <key> <file>      upload file as snaps/<key>
#   s3obj.sh list <prefix>         the keys under prefix, one a line (ListObjectsV2)
#   s3obj.sh uploads <prefix>      the keys of unfinished multipart uploads under prefix
#   s3obj.sh etag <key>            the object's ETag ("<md5>-<parts>" after a multipart upload)
#   s3obj.sh corrupt <file>        overwrite 16 bytes in the middle of file (not its size)
set -euo pipefail

ns=${NAMESPACE:?NAMESPACE must be set (Chainsaw sets it)}
bucket=${S3OBJ_BUCKET:-snaps}

secret() {
	kubectl -n "$ns" get secret s3-creds -o "jsonpath={.data.$1}" | base64 -d
}

# shellcheck source=forward.sh
. "$(dirname "$0")/forward.sh"

minio_ready() { curl -sf -o /dev/null "$FWD_URL/minio/health/ready"; }

with_forward() {
	local rc=0
	forward_start "$ns" svc/minio 9000 minio_ready || return 1
	"$@" "$FWD_URL" || rc=$?
	forward_stop
	return $rc
}

sign() {
	echo --aws-sigv4 "aws:amz:us-east-1:s3" --user "$(secret AWS_ACCESS_KEY_ID):$(secret AWS_SECRET_ACCESS_KEY)"
}

do_get() { # key file url
	local key=$1 file=$2 url=$3
	# shellcheck disable=SC2046
	curl -sSf $(sign) -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
		-o "$file" "$url/$bucket/$key"
}

do_put() { # key file url
	local key=$1 file=$2 url=$3 sha
	sha=$(sha256sum <"$file" | cut -d' ' -f1)
	# shellcheck disable=SC2046
	curl -sSf $(sign) -H "x-amz-content-sha256: $sha" -T "$file" "$url/$bucket/$key" >/dev/null
}

EMPTY_SHA=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

do_query() { # query url: the bucket's XML answer to a GET with an already canonical query
	# shellcheck disable=SC2046
	curl -sSf $(sign) -H "x-amz-content-sha256: $EMPTY_SHA" "$2/$bucket?$1"
}

do_etag() { # key url
	# shellcheck disable=SC2046
	curl -sSf -I $(sign) -H "x-amz-content-sha256: $EMPTY_SHA" "$2/$bucket/$1" |
		tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: *//p'
}

keys() { grep -o "<$1>[^<]*</$1>" | sed "s|</*$1>||g"; }

case ${1:-} in
list) with_forward do_query "list-type=2&prefix=${2//\//%2F}" | keys Key ;;
uploads) with_forward do_query "prefix=${2//\//%2F}&uploads=" | keys Key ;;
etag) with_forward do_etag "$2" ;;
get) with_forward do_get "$2" "$3" ;;
put) with_forward do_put "$2" "$3" ;;
corrupt)
	size=$(stat -c %s "$2")
	printf 'CORRUPTEDCORRUPT' | dd of="$2" bs=1 seek=$((size / 2)) conv=notrunc status=none
	;;
*)
	echo "usage: $0 get|put <key> <file> | corrupt <file>" >&2
	exit 2
	;;
esac

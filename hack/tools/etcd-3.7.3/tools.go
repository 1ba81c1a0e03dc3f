//go:build tools

// Package tools pins etcd-3.7.3 v3.7.3 for the local test infrastructure; not product code.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
)

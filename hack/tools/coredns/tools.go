//go:build tools

// Package tools pins coredns v1.15.0 for the local test infrastructure; not product code.
package tools

import (
	_ "github.com/coredns/coredns"
)

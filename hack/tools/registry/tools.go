//go:build tools

// Package tools pins the distribution registry v3.0.0 (the CNCF OCI registry) for the
// local test infrastructure; not product code.
package tools

import (
	_ "github.com/distribution/distribution/v3/cmd/registry"
)

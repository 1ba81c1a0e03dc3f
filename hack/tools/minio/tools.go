//go:build tools

// Package tools pins minio RELEASE.2026-02-12T20-18-48Z-7aac2a2c5b7c for the local test infrastructure; not product code.
package tools

import (
	_ "github.com/minio/minio"
)

// Package static holds the lab's browser assets, embedded in the binary.
package static

import "embed"

// Files are the assets served under /static/.
//
//go:embed *.css *.js vendor
var Files embed.FS

// Package static embeds the portal's CSS, JavaScript and images so the binary
// serves them from any directory, air-gapped.
package static

import "embed"

// FS holds css/, js/ and img/.
//
//go:embed css js img
var FS embed.FS

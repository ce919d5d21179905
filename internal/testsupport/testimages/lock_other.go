//go:build !unix

package testimages

// lockFile is a no-op where flock is unavailable; the in-process mutex
// still serialises callers of one test binary.
func lockFile(string) (func(), error) { return func() {}, nil }

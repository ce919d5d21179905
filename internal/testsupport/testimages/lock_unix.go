//go:build unix

package testimages

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockFile takes an exclusive lock shared by every process on this host,
// so test binaries of several packages (go test ./... runs them in
// parallel) build a given image once instead of racing and leaving
// untagged duplicates behind.
func lockFile(name string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

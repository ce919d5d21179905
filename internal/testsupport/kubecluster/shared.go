package kubecluster

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sharedPrefix names the directories of shared control planes in the
// system's temporary directory: workbench-kubecluster-<pid>-<random>.
const sharedPrefix = "workbench-kubecluster-"

var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared returns a Cluster on the one control plane of this test binary,
// started by the first caller, with a namespace of the caller's own
// (deleted, with its pods, when the caller ends). Use it where tests need
// only a namespace: it saves each test the seconds of a start.
//
// What is cluster-wide is shared: nodes (give AddGPUNodes a prefix of the
// test's own; they are deleted when the test ends, but other tests' pods may
// be scheduled to them while they exist), StorageClasses, ClusterRoles.
// Tests that count nodes or capacity want Start.
//
// The control plane lives until the test binary exits (its processes die
// with it); its directory stays in the temporary directory until the next
// Shared of a later binary removes it.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	shared.once.Do(func() {
		removeStaleShared()
		began := time.Now()
		c, dir, err := startRetrying(func() (string, error) {
			return os.MkdirTemp("", sharedPrefix+strconv.Itoa(os.Getpid())+"-")
		})
		if err != nil {
			if c != nil {
				c.cp.stop(c.Client)
			}
			if dir != "" {
				_ = os.RemoveAll(dir)
			}
			shared.err = err
			return
		}
		shared.c = c
		t.Logf("kubecluster: shared control plane ready in %s at %s (logs in %s)", time.Since(began).Round(time.Millisecond), c.Config.Host, dir)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	c := *shared.c
	c.Namespace = c.newNamespace(t, true)
	return &c
}

// removeStaleShared removes the directories of shared control planes whose
// test binary has exited.
func removeStaleShared() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), sharedPrefix+"*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), sharedPrefix)
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(d)
		}
	}
}

package kubecluster

import (
	"os"
	"strings"

	"workbench/internal/testsupport/freeport"
)

// The control plane's ports are chosen before its components start, and
// the last of them (kwok) binds its port up to a minute later on a busy
// machine: freeport keeps them out of the range outgoing connections take,
// and a start whose component still finds its port taken is tried again
// with fresh ports.

// portTaken says whether a start failed because a component could not bind
// its port (its log, carried in the error, says so).
func portTaken(err error) bool {
	return err != nil && strings.Contains(err.Error(), "address already in use")
}

// componentPort chooses a component's port; a test makes one taken.
var componentPort = func(component string) (int, error) { return freeport.Port() }

// startTries bounds the starts with fresh ports.
const startTries = 3

// startRetrying starts a control plane in a directory from mkdir, again in
// a new one with new ports when a component found its port taken. A failed
// try is stopped and its directory removed; the last error is returned
// with whatever of that try did start.
func startRetrying(mkdir func() (string, error)) (*Cluster, string, error) {
	for try := 1; ; try++ {
		dir, err := mkdir()
		if err != nil {
			return nil, "", err
		}
		c, err := start(dir)
		if try == startTries || !portTaken(err) {
			return c, dir, err
		}
		if c != nil {
			c.cp.stop(c.Client)
		}
		_ = os.RemoveAll(dir)
	}
}

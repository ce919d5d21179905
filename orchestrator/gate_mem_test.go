package orchestrator

import (
	"sync"
	"testing"
	"time"
)

// gate holds the calls of a wrapped engine method until it is opened: the
// portal process "dies" in that call, or the engine takes its time. The
// first call to arrive is signalled.
type gate struct {
	arrivedCh, openCh chan struct{}
	arrivedOnce       sync.Once
	openOnce          sync.Once
}

func newGate() *gate { return &gate{arrivedCh: make(chan struct{}), openCh: make(chan struct{})} }

// hold is what the wrapped method calls: it signals its arrival and waits
// for the gate to open.
func (g *gate) hold() {
	g.arrivedOnce.Do(func() { close(g.arrivedCh) })
	<-g.openCh
}

// open lets the held calls, and those to come, go on.
func (g *gate) open() { g.openOnce.Do(func() { close(g.openCh) }) }

// arrived waits for the first call (a minute at most: only a broken test
// takes that long).
func (g *gate) arrived(t *testing.T, what string) {
	t.Helper()
	select {
	case <-g.arrivedCh:
	case <-time.After(time.Minute):
		t.Fatalf("%s never happened", what)
	}
}

package freeport

import "testing"

// TestFreePortsLieBelowTheEphemeralRange: the ports outgoing connections
// take their local port from are never handed out, nor one port twice.
func TestFreePortsLieBelowTheEphemeralRange(t *testing.T) {
	top := ephemeralStart()
	if top-lowestPort < 1000 {
		t.Skipf("the ephemeral range starts at %d: no room below it", top)
	}
	seen := map[int]bool{}
	for range 50 {
		port, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if port < lowestPort || port >= top {
			t.Fatalf("Port() = %d, want in [%d, %d) below the ephemeral range", port, lowestPort, top)
		}
		if seen[port] {
			t.Fatalf("Port() handed out %d twice", port)
		}
		seen[port] = true
	}
}

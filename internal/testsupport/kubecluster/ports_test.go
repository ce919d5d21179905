package kubecluster

import (
	"net"
	"testing"
)

// TestStartTriesAgainWhenAPortIsTaken: a component that finds its port
// taken (here kwok's, held by the test) costs a second try with fresh
// ports, not the test.
func TestStartTriesAgainWhenAPortIsTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kubernetes control plane")
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port

	kwokPorts := 0
	choose := componentPort
	componentPort = func(component string) (int, error) {
		if component != "kwok" {
			return choose(component)
		}
		kwokPorts++
		if kwokPorts == 1 {
			return heldPort, nil
		}
		return choose(component)
	}
	t.Cleanup(func() { componentPort = choose })

	c := Start(t)
	if kwokPorts != 2 {
		t.Fatalf("kwok was given a port %d times, want 2 (the held one, then a fresh one)", kwokPorts)
	}
	if len(c.cp.procs) != 5 {
		t.Errorf("the control plane runs %d processes, want 5", len(c.cp.procs))
	}
}

// TestPortTakenReadsTheComponentsLog: only a bind failure is tried again.
func TestPortTakenReadsTheComponentsLog(t *testing.T) {
	bind := `kubecluster: waiting for kube-scheduler /readyz: kwok exited (exit status 1); the end of its log:
{"level":"ERROR","msg":"Failed to run server","err":"listen tcp 127.0.0.1:34919: bind: address already in use"}`
	if !portTaken(errString(bind)) {
		t.Error("a component's bind failure is not read as a taken port")
	}
	if portTaken(errString("kubecluster: kube-apiserver /readyz not ready: context deadline exceeded")) {
		t.Error("a timeout is read as a taken port")
	}
	if portTaken(nil) {
		t.Error("success is read as a taken port")
	}
}

type errString string

func (e errString) Error() string { return string(e) }

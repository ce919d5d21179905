package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// TestEgressRemoveCommand: `workbench egress remove` deletes the install's
// chains and jumps (the uninstall step), and a second run is a no-op.
func TestEgressRemoveCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: egress rules need root")
	}
	fw := runtime.NewFirewall(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	if err := fw.Check(ctx); err != nil {
		t.Skipf("SKIP: %v", err)
	}
	dir := t.TempDir()
	store, err := models.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	id, err := store.InstallID(ctx)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	// A veth pair stands in for the install's bridge; no packet of anyone
	// else crosses it.
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	iface := "wbcli" + hex.EncodeToString(b)
	if out, err := exec.Command("ip", "link", "add", iface, "type", "veth", "peer", "name", iface+"p").CombinedOutput(); err != nil {
		t.Skipf("SKIP: cannot create a veth pair: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", iface).Run() })
	fwd, in := runtime.EgressChains(id)
	t.Cleanup(func() { _ = fw.Remove(ctx, id) })
	if err := fw.Apply(ctx, id, iface, runtime.DefaultEgressPolicy); err != nil {
		t.Fatal(err)
	}
	if rules := iptablesAll(t); !strings.Contains(rules, "-j "+fwd) || !strings.Contains(rules, "-j "+in) {
		t.Fatalf("rules not installed:\n%s", rules)
	}
	for i := 0; i < 2; i++ {
		out, _, err := runCLI(t, "", "egress", "remove", "--data-dir", dir)
		if err != nil || !strings.Contains(out, id) {
			t.Fatalf("egress remove #%d: %q %v", i+1, out, err)
		}
	}
	if rules := iptablesAll(t); strings.Contains(rules, fwd) || strings.Contains(rules, in) {
		t.Errorf("rules left after egress remove:\n%s", rules)
	}
}

func iptablesAll(t *testing.T) string {
	out, err := exec.Command("iptables", "-w", "-S").Output()
	if err != nil {
		t.Fatalf("iptables -S: %v", err)
	}
	return string(out)
}

package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"workbench/models"
)

// A start on a port in use (the portal's or the metrics one) fails before
// anything is set up: the first admin's one-time password is not printed,
// and so not used up by a start that never served.
func TestServeOnAPortInUseSetsNothingUp(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, args := range [][]string{
		{"--addr", busy.Addr().String()},
		{"--addr", "127.0.0.1:0", "--metrics-addr", busy.Addr().String()},
	} {
		dir := t.TempDir()
		out, _, err := runCLI(t, "", append([]string{"serve", "--data-dir", dir, "--gpus", "none"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("serve %v on a port in use: %v", args, err)
		}
		if strings.Contains(out, "First start") {
			t.Errorf("serve %v printed the first admin's password though it never served", args)
		}
		if _, err := os.Stat(filepath.Join(dir, models.DBFileName)); err == nil {
			t.Errorf("serve %v set up a database though it never served", args)
		}
	}
}

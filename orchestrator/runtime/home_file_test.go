package runtime

import (
	"archive/tar"
	"context"
	"io"
	"testing"
	"time"

	"workbench/internal/testsupport/testimages"
)

// On the real engine: the preemption notice is written into a running
// container's home, owned by the workbench's user, its directory created;
// writing again replaces it (empty, after a resume).
func TestWriteHomeFileOnARunningContainer(t *testing.T) {
	e := newEngineEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vol := "wbtest-" + e.run + "-home"
	if _, err := e.d.EnsureVolume(ctx, vol, e.labels()); err != nil {
		t.Fatal(err)
	}
	s := e.spec("notice", e.network(t, ctx, "notice"), vol)
	info, _ := e.start(t, ctx, s)
	read := func() (string, int) {
		t.Helper()
		rc, _, err := e.d.cli.CopyFromContainer(ctx, info.ID, testimages.FakeJupyterHome+"/.workbench/preempt-at")
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		tr := tar.NewReader(rc)
		hdr, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		return string(b), hdr.Uid
	}
	if err := e.d.WriteHomeFile(ctx, info.ID, testimages.FakeJupyterHome, "1000", ".workbench/preempt-at", []byte("2026-12-01T05:00:00Z\n")); err != nil {
		t.Fatal(err)
	}
	if body, uid := read(); body != "2026-12-01T05:00:00Z\n" || uid != 1000 {
		t.Fatalf("notice %q owned by %d, want the time owned by 1000", body, uid)
	}
	if err := e.d.WriteHomeFile(ctx, info.ID, testimages.FakeJupyterHome, "1000", ".workbench/preempt-at", nil); err != nil {
		t.Fatal(err)
	}
	if body, _ := read(); body != "" {
		t.Fatalf("after clearing: %q", body)
	}
}

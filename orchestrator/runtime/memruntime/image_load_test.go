package memruntime

import (
	"archive/tar"
	"bytes"
	"context"
	"strings"
	"testing"
)

// LoadImage reads a docker-save layout's manifest.json like the engine: the
// RepoTags become present; anything else is an error.
func TestLoadImageReadsManifest(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range map[string]string{
		"manifest.json": `[{"Config":"c.json","RepoTags":["lab/cuda-notebook:1"],"Layers":["l/layer.tar"]}]`,
		"l/layer.tar":   strings.Repeat("x", 1024),
	} {
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))})
		_, _ = tw.Write([]byte(body))
	}
	_ = tw.Close()
	r := New()
	ctx := context.Background()
	names, err := r.LoadImage(ctx, &buf)
	if err != nil || len(names) != 1 || names[0] != "lab/cuda-notebook:1" {
		t.Fatalf("loaded %v %v", names, err)
	}
	if present, _, _ := r.ImageSize(ctx, "lab/cuda-notebook:1"); !present {
		t.Error("not present after the load")
	}
	if _, err := r.LoadImage(ctx, strings.NewReader("not a tar")); err == nil {
		t.Error("garbage loaded")
	}
}

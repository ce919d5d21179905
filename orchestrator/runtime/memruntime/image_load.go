package memruntime

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// LoadImage reads a `docker save` archive's manifest.json as the engine
// does and makes each RepoTags name present (sized by the archive).
func (r *Runtime) LoadImage(ctx context.Context, archive io.Reader) ([]string, error) {
	r.mu.Lock()
	err := r.begin(ctx, "LoadImage")
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(archive)
	var names []string
	var size int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("load image: %w", err)
		}
		size += h.Size
		if h.Name != "manifest.json" {
			continue
		}
		var m []struct{ RepoTags []string }
		if err := json.NewDecoder(tr).Decode(&m); err != nil {
			return nil, fmt.Errorf("load image: manifest.json: %w", err)
		}
		for _, e := range m {
			names = append(names, e.RepoTags...)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("load image: the archive held no image (is it a `docker save` archive?)")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		r.images[n] = size
	}
	return names, nil
}

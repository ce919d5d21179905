package testimages

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
)

// contextFile is one file of a build context.
type contextFile struct {
	name string
	mode int64
	data []byte
}

// tarContext packs files into the tar stream ImageBuild wants.
func tarContext(files []contextFile) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// A fixed mtime keeps the context, and so the builder's cache keys,
	// identical between runs.
	mtime := time.Unix(0, 0)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}

// buildImage runs a classic (non-BuildKit) build: engines reached through
// the plain API, like the 20.10 one in CI, need no BuildKit session then.
//
// It gives the image no labels: they would be inherited by everything made
// from it (see TestLabel).
func buildImage(ctx context.Context, cli client.APIClient, tag string, files []contextFile) error {
	tarball, err := tarContext(files)
	if err != nil {
		return fmt.Errorf("build context: %w", err)
	}
	resp, err := cli.ImageBuild(ctx, tarball, build.ImageBuildOptions{
		Tags:        []string{tag},
		Remove:      true,
		ForceRemove: true, // no intermediate containers left behind, even on failure
		Version:     build.BuilderV1,
	})
	if err != nil {
		return fmt.Errorf("build image %s: %w", tag, err)
	}
	defer resp.Body.Close()
	var log bytes.Buffer
	dec := json.NewDecoder(resp.Body)
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("build image %s: reading output: %w", tag, err)
		}
		log.WriteString(m.Stream)
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			m.Error = m.ErrorDetail.Message
		}
		if m.Error != "" {
			return fmt.Errorf("build image %s: %s\n%s", tag, m.Error, log.String())
		}
	}
}

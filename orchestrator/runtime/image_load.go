package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/docker/docker/client"
)

// LoadImage loads images from a `docker save` archive (tar, as the engine
// reads it) into the engine, for servers that cannot reach a registry, and
// returns the names it loaded ("repo:tag", or "sha256:…" for an image saved
// by ID).
func (d *Docker) LoadImage(ctx context.Context, archive io.Reader) ([]string, error) {
	res, err := d.cli.ImageLoad(ctx, archive, client.ImageLoadWithQuiet(true))
	if err != nil {
		if client.IsErrConnectionFailed(err) {
			return nil, engineErr("load image", err)
		}
		return nil, fmt.Errorf("load image: %w", err)
	}
	defer res.Body.Close()
	return readLoad(res.Body)
}

// readLoad reads the engine's answer to a load: a JSON stream whose lines
// say "Loaded image: NAME" (or "Loaded image ID: sha256:…"), or an error.
func readLoad(r io.Reader) ([]string, error) {
	dec := json.NewDecoder(r)
	var out []string
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return out, fmt.Errorf("load image: reading the engine's answer: %w", err)
		}
		if msg := m.ErrorDetail.Message; msg != "" || m.Error != "" {
			if msg == "" {
				msg = m.Error
			}
			return out, fmt.Errorf("load image: %s (is it a `docker save` archive?)", msg)
		}
		for _, line := range strings.Split(m.Stream, "\n") {
			line = strings.TrimSpace(line)
			if name, ok := strings.CutPrefix(line, "Loaded image: "); ok {
				out = append(out, name)
			} else if id, ok := strings.CutPrefix(line, "Loaded image ID: "); ok {
				out = append(out, id)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("load image: the archive held no image (is it a `docker save` archive?)")
	}
	return out, nil
}

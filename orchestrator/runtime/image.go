package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/distribution/reference"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// EnsureImage makes sure ref is present, pulling it if needed. progress
// (may be nil) is called whenever the percentage moves.
func (d *Docker) EnsureImage(ctx context.Context, ref string, progress func(pct int, status string)) error {
	if progress == nil {
		progress = func(int, string) {}
	}
	// Checked first: a malformed reference (from an admin's catalog entry)
	// is the user-readable error, not the engine's inspect failure.
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return newPullError(ref, "not a valid image reference: "+err.Error())
	}
	_, err = d.cli.ImageInspect(ctx, ref)
	if err == nil {
		return nil
	}
	if err = engineErr("inspect image "+ref, err); !errors.Is(err, ErrNotFound) {
		return err
	}

	// Without a tag the engine would pull every tag of the repository.
	full := reference.TagNameOnly(named).String()

	d.log.InfoContext(ctx, "pulling image", "ref", full)
	progress(0, "Pulling "+ref)
	body, err := d.cli.ImagePull(ctx, full, image.PullOptions{})
	if err != nil {
		if client.IsErrConnectionFailed(err) || ctx.Err() != nil {
			return engineErr("pull image "+ref, err)
		}
		return newPullError(ref, err.Error())
	}
	defer body.Close()

	if err := readPull(body, progress, 0); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pull image %s: %w", ref, ctx.Err())
		}
		return newPullError(ref, err.Error())
	}
	// A stream that ended without an error line is not proof: check.
	if _, err := d.cli.ImageInspect(ctx, ref); err != nil {
		return newPullError(ref, "the engine reported success but the image is not there")
	}
	progress(100, "Pulled "+ref)
	d.log.InfoContext(ctx, "pulled image", "ref", full)
	return nil
}

// readPull consumes the pull's JSON message stream, reporting progress
// whenever it moves past last, and returns the error line's message if the
// engine sent one.
func readPull(r io.Reader, progress func(int, string), last int) error {
	dec := json.NewDecoder(r)
	p := newPullProgress()
	for {
		var m pullMessage
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading pull progress: %w", err)
		}
		if e := m.err(); e != "" {
			return errors.New(e)
		}
		if pct := p.update(m); pct != last {
			last = pct
			progress(pct, m.Status)
		}
	}
}

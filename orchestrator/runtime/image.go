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

// PullProgress is where a pull stands: the overall percentage and the
// bytes downloaded of the layers whose size is known so far.
type PullProgress struct {
	Percent    int
	Status     string
	DoneBytes  int64
	TotalBytes int64
}

// EnsureImage makes sure ref is present, pulling it if needed. progress
// (may be nil) is called whenever the percentage moves.
func (d *Docker) EnsureImage(ctx context.Context, ref string, progress func(pct int, status string)) error {
	if progress == nil {
		progress = func(int, string) {}
	}
	last := -1
	return d.PullImage(ctx, ref, func(p PullProgress) {
		if p.Percent != last {
			last = p.Percent
			progress(p.Percent, p.Status)
		}
	})
}

// PullImage is EnsureImage reporting bytes too, on every progress message
// of the engine (callers throttle).
func (d *Docker) PullImage(ctx context.Context, ref string, progress func(PullProgress)) error {
	if progress == nil {
		progress = func(PullProgress) {}
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
	progress(PullProgress{Status: "Pulling " + ref})
	body, err := d.cli.ImagePull(ctx, full, image.PullOptions{})
	if err != nil {
		if client.IsErrConnectionFailed(err) || ctx.Err() != nil {
			return engineErr("pull image "+ref, err)
		}
		return newPullError(ref, err.Error())
	}
	defer body.Close()

	var last PullProgress
	if err := readPullDetailed(body, func(p PullProgress) { last = p; progress(p) }); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pull image %s: %w", ref, ctx.Err())
		}
		return newPullError(ref, err.Error())
	}
	// A stream that ended without an error line is not proof: check.
	info, err := d.cli.ImageInspect(ctx, ref)
	if err != nil {
		return newPullError(ref, "the engine reported success but the image is not there")
	}
	progress(PullProgress{Percent: 100, Status: "Pulled " + ref, DoneBytes: max(last.TotalBytes, info.Size), TotalBytes: max(last.TotalBytes, info.Size)})
	d.log.InfoContext(ctx, "pulled image", "ref", full)
	return nil
}

// ImageSize reports whether ref is present on this engine and its size.
func (d *Docker) ImageSize(ctx context.Context, ref string) (present bool, size int64, err error) {
	info, err := d.cli.ImageInspect(ctx, ref)
	if err == nil {
		return true, info.Size, nil
	}
	if err = engineErr("inspect image "+ref, err); errors.Is(err, ErrNotFound) {
		return false, 0, nil
	}
	return false, 0, err
}

// readPull consumes the pull's JSON message stream, reporting progress
// whenever it moves past last, and returns the error line's message if the
// engine sent one.
func readPull(r io.Reader, progress func(int, string), last int) error {
	return readPullDetailed(r, func(p PullProgress) {
		if p.Percent != last {
			last = p.Percent
			progress(p.Percent, p.Status)
		}
	})
}

// readPullDetailed consumes the pull's JSON message stream, reporting
// progress on every message, and returns the error line's message if the
// engine sent one.
func readPullDetailed(r io.Reader, progress func(PullProgress)) error {
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
		pct := p.update(m)
		done, total := p.bytes()
		progress(PullProgress{Percent: pct, Status: m.Status, DoneBytes: done, TotalBytes: total})
	}
}

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
	// Mirror is the reference actually pulled when a registry mirror
	// serves the pull ("" when pulled from the image's own registry).
	Mirror string
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
	if _, found, err := d.localRef(ctx, ref); err != nil || found {
		return err
	}
	// Without a tag the engine would pull every tag of the repository.
	full := reference.TagNameOnly(named).String()
	// Every pull goes through the admin's mirror for its registry, if any;
	// the user keeps seeing the catalog's reference.
	mirrors, err := d.currentMirrors(ctx)
	if err != nil {
		return fmt.Errorf("read the registry mirrors: %w", err)
	}
	from, viaMirror, err := mirrors.Rewrite(ref)
	if err != nil {
		return newPullError(ref, "cannot rewrite for its mirror: "+err.Error())
	}

	if viaMirror {
		orig := progress
		progress = func(p PullProgress) { p.Mirror = from; orig(p) }
	}
	d.log.InfoContext(ctx, "pulling image", "ref", full, "from", from)
	status := "Pulling " + ref
	if viaMirror {
		status += " from the mirror " + from
	}
	progress(PullProgress{Status: status})
	failed := func(raw string) error {
		// The engine's own words go to the log too: the page shows the
		// sentence, and an admin digging needs what the registry answered.
		d.log.WarnContext(ctx, "pull failed", "ref", full, "from", from, "err", raw)
		if viaMirror {
			return newMirrorPullError(ref, from, raw)
		}
		return newPullError(ref, raw)
	}
	body, err := d.cli.ImagePull(ctx, from, image.PullOptions{})
	if err != nil {
		if client.IsErrConnectionFailed(err) || ctx.Err() != nil {
			return engineErr("pull image "+ref, err)
		}
		return failed(err.Error())
	}
	defer body.Close()

	var last PullProgress
	if err := readPullDetailed(body, func(p PullProgress) { last = p; progress(p) }); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pull image %s: %w", ref, ctx.Err())
		}
		return failed(err.Error())
	}
	// The mirror's copy also gets the catalog's name, so that the engine,
	// `docker images` and later checks know it under the name users see. A
	// digest cannot be a tag: such an image is found by localRef.
	if _, digested := named.(reference.Digested); viaMirror && !digested {
		if err := d.cli.ImageTag(ctx, from, full); err != nil {
			return engineErr("tag "+from+" as "+full, err)
		}
	}
	// A stream that ended without an error line is not proof: check.
	local, found, err := d.localRef(ctx, ref)
	if err != nil || !found {
		return newPullError(ref, "the engine reported success but the image is not there")
	}
	info, err := d.cli.ImageInspect(ctx, local)
	if err != nil {
		return engineErr("inspect image "+local, err)
	}
	progress(PullProgress{Percent: 100, Status: "Pulled " + ref, DoneBytes: max(last.TotalBytes, info.Size), TotalBytes: max(last.TotalBytes, info.Size)})
	d.log.InfoContext(ctx, "pulled image", "ref", full, "from", from)
	return nil
}

// mirrorNote adds which mirror failed to the engine's message.
func mirrorNote(msg, from string, viaMirror bool) string {
	if viaMirror {
		return msg + " (pulled from the mirror " + from + ")"
	}
	return msg
}

// localRef finds ref on this engine: under its own name (pulled directly,
// loaded from a tar, or tagged after a mirror pull), else under its
// mirror's name (a digest reference pulled through a mirror).
func (d *Docker) localRef(ctx context.Context, ref string) (local string, found bool, err error) {
	_, err = d.cli.ImageInspect(ctx, ref)
	if err == nil {
		return ref, true, nil
	}
	if err = engineErr("inspect image "+ref, err); !errors.Is(err, ErrNotFound) {
		return "", false, err
	}
	mirrors, err := d.currentMirrors(ctx)
	if err != nil {
		return "", false, fmt.Errorf("read the registry mirrors: %w", err)
	}
	m, viaMirror, err := mirrors.Rewrite(ref)
	if err != nil || !viaMirror {
		return "", false, nil
	}
	_, err = d.cli.ImageInspect(ctx, m)
	if err == nil {
		return m, true, nil
	}
	if err = engineErr("inspect image "+m, err); !errors.Is(err, ErrNotFound) {
		return "", false, err
	}
	return "", false, nil
}

// ImageSize reports whether ref is present on this engine and its size.
func (d *Docker) ImageSize(ctx context.Context, ref string) (present bool, size int64, err error) {
	local, found, err := d.localRef(ctx, ref)
	if err != nil || !found {
		return false, 0, err
	}
	info, err := d.cli.ImageInspect(ctx, local)
	if err == nil {
		return true, info.Size, nil
	}
	if err = engineErr("inspect image "+local, err); errors.Is(err, ErrNotFound) {
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

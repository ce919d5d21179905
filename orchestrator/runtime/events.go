package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
)

// Events streams start/die/destroy/pause/unpause events of this install's containers.
// Missed events are the reconciler's business: after an error the caller
// should List and subscribe again.
func (d *Docker) Events(ctx context.Context, installID string) (<-chan Event, <-chan error) {
	out := make(chan Event)
	errc := make(chan error, 1)
	f := filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)),
		filters.Arg("label", LabelInstall+"="+installID),
		filters.Arg("event", ActionStart),
		filters.Arg("event", ActionDie),
		filters.Arg("event", ActionDestroy),
		filters.Arg("event", ActionPause),
		filters.Arg("event", ActionUnpause),
	)
	msgs, errs := d.cli.Events(ctx, events.ListOptions{Filters: f})
	go func() {
		defer close(out)
		defer close(errc)
		for {
			select {
			case m := <-msgs:
				ev := eventFromMessage(m)
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			case err := <-errs:
				if err != nil && ctx.Err() == nil {
					errc <- engineErr("container events", err)
				}
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, errc
}

func eventFromMessage(m events.Message) Event {
	attrs := m.Actor.Attributes
	ev := Event{
		ContainerID: m.Actor.ID,
		WorkbenchID: attrs[LabelID],
		Action:      string(m.Action),
		Labels:      attrs, // the engine puts the container's labels here, plus name, image, exitCode
		Time:        time.Unix(0, m.TimeNano),
	}
	if m.TimeNano == 0 {
		ev.Time = time.Unix(m.Time, 0)
	}
	if c, err := strconv.Atoi(attrs["exitCode"]); err == nil {
		ev.ExitCode = c
	}
	return ev
}

// LastExit looks up, in the engine's event history since since (less a
// second of clock slack), when the
// container of workbench workbenchID (of this install) last died. It is the
// exit time of a container removed while the portal was down: inspect no
// longer knows it, the engine's history still does (the engine keeps its
// recent events in memory; after a restart of the engine, or once they
// have scrolled out, found is false and the caller falls back).
func (d *Docker) LastExit(ctx context.Context, installID, workbenchID string, since time.Time) (at time.Time, found bool, err error) {
	// A second of slack: the heartbeat is this machine's clock, the event
	// the engine's, and an exit just after the heartbeat must be found.
	from := since.Add(-time.Second)
	err = d.pastEvents(ctx, installID, workbenchID, from, time.Now(), func(ev Event) {
		if !ev.Time.Before(from) && ev.Time.After(at) {
			at, found = ev.Time, true
		}
	}, ActionDie)
	if err != nil {
		return time.Time{}, false, err
	}
	return at.UTC(), found, nil
}

// StopAsked looks up, in the engine's event history between from and to
// (the engine's clock, as its events'), a kill or stop event of the
// container of workbench workbenchID: `docker stop` and `docker kill` send
// them, and so does the engine when it shuts its containers down.
func (d *Docker) StopAsked(ctx context.Context, installID, workbenchID string, from, to time.Time) (bool, error) {
	found := false
	err := d.pastEvents(ctx, installID, workbenchID, from, to.Add(stopLoggedAfterExit+time.Second), func(ev Event) {
		// The engine takes whole seconds; the exact window is kept here.
		if StopOfRun(ev.Time, from, to) {
			found = true
		}
	}, ActionKill, ActionStop)
	return found && err == nil, err
}

// stopLoggedAfterExit is how long after a container's FinishedAt a kill or
// stop that ended it may still be logged. The engine logs the kill only
// once the signal is delivered and the stop once the container is down,
// while FinishedAt is when the process exited: a process that ends at once
// on SIGTERM (Jupyter, the test images) has finished before either is
// written, the more so on a busy engine (CI saw it). A kill or stop after
// the run cannot be meant for a later one: the container is found exited,
// and the engine refuses to kill a container that is not running.
const stopLoggedAfterExit = 30 * time.Second

// StopOfRun reports whether a kill or stop logged at at belongs to the run
// from from to to (StartedAt and FinishedAt).
func StopOfRun(at, from, to time.Time) bool {
	return !at.Before(from) && !at.After(to.Add(stopLoggedAfterExit))
}

// pastEvents hands each of the engine's recorded events of the given
// actions for workbench workbenchID's container (of this install), from
// since (in whole seconds) to until of the engine's clock, to each.
func (d *Docker) pastEvents(ctx context.Context, installID, workbenchID string, since, until time.Time, each func(Event), actions ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	f := filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)),
		filters.Arg("label", LabelInstall+"="+installID),
		filters.Arg("label", LabelID+"="+workbenchID),
	)
	for _, a := range actions {
		f.Add("event", a)
	}
	// An until in the future makes the engine wait for it, streaming what
	// comes: a look into the past must end now. The engine takes seconds
	// with a fraction, so "now" is exact and nothing logged is left out.
	if now := time.Now(); until.After(now) {
		until = now
	}
	opts := events.ListOptions{Filters: f,
		Since: strconv.FormatInt(since.Unix(), 10),
		Until: fmt.Sprintf("%d.%09d", until.Unix(), until.Nanosecond())}
	msgs, errs := d.cli.Events(ctx, opts)
	for {
		select {
		case m := <-msgs:
			each(eventFromMessage(m))
		case err := <-errs:
			if err == nil || errors.Is(err, io.EOF) {
				return nil
			}
			return engineErr("container events", err)
		}
	}
}

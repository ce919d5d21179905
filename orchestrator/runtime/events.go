package runtime

import (
	"context"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
)

// Events streams start/die/destroy events of this install's containers.
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

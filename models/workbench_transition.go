package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// ErrStateChanged is the error a compare-and-set transition returns when the
// workbench was not in one of the states the caller expected: someone else
// (a stop, a reconciliation, a failed launch) moved it first. The caller
// decides on a fresh record instead of overwriting what the other wrote.
var ErrStateChanged = errors.New("workbench state changed")

// StateChangedError says which state was found instead of the expected ones.
// errors.Is(err, ErrStateChanged) holds for it.
type StateChangedError struct {
	ID   string
	From []string // the states the caller expected
	To   string   // the state it wanted to move to
	Got  string   // the state the row was in
}

func (e *StateChangedError) Error() string {
	return fmt.Sprintf("workbench %s: %s → %s refused: it is %s", e.ID, strings.Join(e.From, "|"), e.To, e.Got)
}

func (e *StateChangedError) Is(target error) bool { return target == ErrStateChanged }

// WorkbenchFields are the columns a transition (or UpdateWorkbenchFields)
// may set besides the state. A nil field is left as it is.
type WorkbenchFields struct {
	ContainerID       *string
	Endpoint          *string
	StopError         *string
	ReasonDetails     *string
	ExitLogs          *string
	StartedAt         *time.Time
	StoppedAt         *time.Time
	ClearStoppedAt    bool // sets stopped_at to NULL (a run begins)
	RuntimeExtensionS *int64
	RunMaxRuntimeS    *int64 // the flavor's maximum runtime, kept as the run starts
	// ClearPreempt forgets a preemption notice (the run ended or restarts).
	ClearPreempt bool
	// PreemptedFor keeps, on the move to preempted, what the launch it
	// yielded to asked for (Workbench.PreemptedFor).
	PreemptedFor *string
	// PausedAt marks the container paused outside the portal;
	// ClearPaused forgets it (unpaused). Any move out of running forgets
	// it too (TransitionWorkbench).
	PausedAt    *time.Time
	ClearPaused bool
}

// columns maps the set fields to their columns.
func (f WorkbenchFields) columns() map[string]any {
	c := map[string]any{}
	put := func(col string, v *string) {
		if v != nil {
			c[col] = *v
		}
	}
	put("container_id", f.ContainerID)
	put("endpoint", f.Endpoint)
	put("stop_error", f.StopError)
	put("reason_details", f.ReasonDetails)
	put("exit_logs", f.ExitLogs)
	if f.StartedAt != nil {
		c["started_at"] = f.StartedAt.UTC()
	}
	if f.StoppedAt != nil {
		c["stopped_at"] = f.StoppedAt.UTC()
	} else if f.ClearStoppedAt {
		c["stopped_at"] = nil
	}
	if f.RuntimeExtensionS != nil {
		c["runtime_extension_s"] = *f.RuntimeExtensionS
	}
	if f.RunMaxRuntimeS != nil {
		c["run_max_runtime_s"] = *f.RunMaxRuntimeS
	}
	if f.ClearPreempt {
		c["preempt_at"], c["preempt_notice_at"], c["preempt_for"] = nil, nil, ""
	}
	put("preempted_for", f.PreemptedFor)
	if f.PausedAt != nil {
		c["paused_at"] = f.PausedAt.UTC()
	} else if f.ClearPaused {
		c["paused_at"] = nil
	}
	return c
}

// Transition is one compare-and-set state change: the workbench must be in
// one of From, and moves to To with Progress, Reason and the fields in Set.
type Transition struct {
	From     []string
	To       string
	Progress int
	Reason   string
	Set      WorkbenchFields
	// Requeue, when set, puts the workbench back in the queue in the same
	// transaction, right after the move to To (a preempted run that
	// resumes by itself): nobody reads it stopped in between, and the
	// history keeps both lines.
	Requeue *Requeue
}

// TransitionWorkbench applies t in one transaction: it reads the state,
// refuses with a *StateChangedError (ErrStateChanged) when it is not one of
// t.From, else writes the new state and fields, records the change in the
// history and, for stopped or failed, ends metering (at Set.StoppedAt when
// given) — as SetWorkbenchState does, but never over someone else's change.
// A missing workbench is ErrNotFound.
func (s *Store) TransitionWorkbench(ctx context.Context, id string, t Transition) error {
	if len(t.From) == 0 || t.To == "" {
		return fmt.Errorf("transition of %s: From and To are required", id)
	}
	now := s.now()
	fields := t.Set.columns()
	fields["state"], fields["progress"], fields["reason"], fields["updated_at"] = t.To, t.Progress, t.Reason, now
	if t.To != StateRunning {
		fields["paused_at"] = nil // only a running container is found paused
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cur Workbench
		if err := tx.Select("state", "reason").Where("id = ?", id).First(&cur).Error; err != nil {
			return notFound(err)
		}
		if !contains(t.From, cur.State) {
			return &StateChangedError{ID: id, From: t.From, To: t.To, Got: cur.State}
		}
		// The state in the WHERE keeps the write conditional even if a
		// caller ever runs this outside an immediate transaction.
		res := tx.Model(&Workbench{}).Where("id = ? AND state = ?", id, cur.State).Updates(fields)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return &StateChangedError{ID: id, From: t.From, To: t.To, Got: "changed during the write"}
		}
		var end time.Time
		if t.Set.StoppedAt != nil {
			end = *t.Set.StoppedAt
		}
		if err := recordStateChange(tx, id, cur, t.To, t.Reason, end, now); err != nil || t.Requeue == nil {
			return err
		}
		return requeue(tx, id, *t.Requeue, now)
	})
}

// recordStateChange is what follows every state write: metering ends for
// stopped or failed, and a history line is added unless only the progress
// moved.
func recordStateChange(tx *gorm.DB, id string, prev Workbench, state, reason string, end, now time.Time) error {
	// A workbench that holds nothing any more is not metered: its
	// interval ends with the state change (at stopped_at, Docker's exit
	// time where the caller knows it), whatever engine event follows.
	if state == StateStopped || state == StateFailed || state == StatePreempted {
		if end.IsZero() {
			end = now
		}
		why := reason
		if why == "" {
			why = state
		}
		if err := closeOpenInterval(tx, id, end, why); err != nil {
			return err
		}
	}
	if prev.State == state && prev.Reason == reason {
		return nil // progress only: no history line
	}
	return tx.Create(&workbenchEvent{WorkbenchID: id, At: now, State: state, Message: reason}).Error
}

// UpdateWorkbenchFields sets columns without a state change (container id,
// endpoint, exit logs). It is UpdateWorkbench with typed fields.
func (s *Store) UpdateWorkbenchFields(ctx context.Context, id string, f WorkbenchFields) error {
	cols := f.columns()
	if len(cols) == 0 {
		return nil
	}
	return s.UpdateWorkbench(ctx, id, cols)
}

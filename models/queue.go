package models

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// WaitableQuota reports whether a quota refusal can clear by itself when
// the user's other workbenches stop (a concurrency limit): a queued launch
// then waits instead of failing. Allowed images, idle bounds and monthly
// limits are final, and so is an ask that alone is over a concurrency limit.
func WaitableQuota(err error) bool {
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Final {
		return false
	}
	switch qe.Limit {
	case "max_workbenches", "max_gpus", "max_gpus_per_model":
		return true
	}
	return false
}

// FinalQuota makes a quota refusal one a launch does not wait for (a
// launch that asked not to wait); other errors pass unchanged.
func FinalQuota(err error) error {
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Final {
		return err
	}
	c := *qe
	c.Final = true
	return &c
}

// MaxQueuedPerUser bounds the launches one person has waiting in the
// queue. Without a bound, one user queued hundreds (each a row every drain
// weighs and every admin's GPU page lists) past a limit of three running.
const MaxQueuedPerUser = 10

// EnqueueWorkbench inserts wb in state queued, binding nothing, after check
// (the launch quota with its waitable limits let through) in the same
// immediate transaction. The drainer places it later (DrainQueue).
func (s *Store) EnqueueWorkbench(ctx context.Context, wb *Workbench, check func(tx *Tx) error) error {
	if err := ValidateWorkbenchName(wb.Name); err != nil {
		return err
	}
	wb.ID = newWorkbenchID()
	wb.State = StateQueued
	wb.Progress = 0
	now := s.now()
	wb.CreatedAt, wb.UpdatedAt, wb.QueuedAt = now, now, &now
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&Workbench{}).Where("owner_id = ? AND name = ? AND deleted_at IS NULL", wb.OwnerID, wb.Name).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return taken("name", "you already have a workbench with this name")
		}
		// Counted in the launch's own transaction, so parallel launches
		// cannot pass it together.
		if err := tx.Model(&Workbench{}).Where("owner_id = ? AND state = ? AND deleted_at IS NULL", wb.OwnerID, StateQueued).Count(&n).Error; err != nil {
			return err
		}
		if n >= MaxQueuedPerUser {
			return &QuotaError{Limit: "max_queued", Final: true,
				Message: Reasonf("you have %d launches waiting in the queue, the most one person may; leave the queue with one of them or wait until one starts", n)}
		}
		if check != nil {
			if err := check(&Tx{tx: tx}); err != nil && !WaitableQuota(err) {
				return err
			}
		}
		if err := tx.Create(wb).Error; err != nil {
			return err
		}
		wb.GPUs = []string{}
		msg := Reasonf("queued: it starts as soon as its GPUs are free")
		var gpus []int
		if err := tx.Model(&Flavor{}).Where("id = ?", wb.FlavorID).Pluck("gpu_count", &gpus).Error; err != nil {
			return err
		}
		if len(gpus) == 1 && gpus[0] == 0 { // a CPU-only flavor waits for its turn, not for GPUs
			msg = Reasonf("queued: it starts as soon as its turn comes")
		}
		if wb.ReservationID != nil { // a launch into a booking that has not begun waits for it
			var starts []time.Time
			if err := tx.Model(&Reservation{}).Where("id = ?", *wb.ReservationID).Pluck("starts_at", &starts).Error; err != nil {
				return err
			}
			if len(starts) == 1 && starts[0].After(now) {
				msg = Reasonf("queued: it starts when your reservation #%s opens, at %s UTC", strconv.FormatInt(*wb.ReservationID, 10), starts[0].UTC().Format("2006-01-02 15:04"))
			}
		}
		return tx.Create(&workbenchEvent{WorkbenchID: wb.ID, At: now, State: StateQueued, Message: msg}).Error
	})
}

// RequeueWorkbench puts a stopped, failed or preempted workbench back in
// the queue (a CPU-only run that waits for its GPUs). A preempted run that
// resumes by itself is requeued by its stop's own transition
// (Transition.Requeue).
func (s *Store) RequeueWorkbench(ctx context.Context, id, message string, expires *time.Time) error {
	now := s.now()
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return requeue(tx, id, Requeue{Message: message, Expires: expires}, now)
	})
}

// Requeue is a move back into the queue: the reason it shows and when it
// leaves the queue unplaced (nil: never).
type Requeue struct {
	Message string
	Expires *time.Time
	// Resume: a preempted run going back to the queue by itself
	// (auto-resume) keeps what it yielded to (preempted_for) while it
	// waits; any other move into the queue is a new request and forgets it.
	Resume bool
}

func requeue(tx *gorm.DB, id string, q Requeue, now time.Time) error {
	// The queue places the flavor's own shape (with its GPUs): a
	// CPU-only run that waits for GPUs leaves the twin's shape.
	set := map[string]any{"state": StateQueued, "progress": 0, "reason": q.Message, "queued_at": now, "queue_expires_at": q.Expires, "run_flavor_id": 0,
		"queue_position": 0, "queue_ahead": 0, "queue_reason": "", "estimated_start": nil, "preempt_at": nil, "preempt_notice_at": nil, "preempt_for": "", "claim_gpus": "", "updated_at": now}
	if !q.Resume {
		set["preempted_for"] = ""
	}
	res := tx.Model(&Workbench{}).Where("id = ? AND deleted_at IS NULL AND state IN ?", id, RestartableStates).Updates(set)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrConflict
	}
	return tx.Create(&workbenchEvent{WorkbenchID: id, At: now, State: StateQueued, Message: q.Message}).Error
}

// LeaveQueue moves a queued workbench to state (stopped: cancelled or
// expired) with reason. It returns ErrConflict when it is no longer queued
// (the drainer placed it first).
func (s *Store) LeaveQueue(ctx context.Context, id, state, reason string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return leaveQueue(tx, id, state, reason, s.now())
	})
}

func leaveQueue(tx *gorm.DB, id, state, reason string, now time.Time) error {
	res := tx.Model(&Workbench{}).Where("id = ? AND state = ?", id, StateQueued).
		Updates(map[string]any{"state": state, "reason": reason, "queue_position": 0, "queue_ahead": 0, "estimated_start": nil,
			"queue_reason": "", "claim_gpus": "", "stopped_at": now, "updated_at": now})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrConflict
	}
	return tx.Create(&workbenchEvent{WorkbenchID: id, At: now, State: state, Message: reason}).Error
}

// QueuedWorkbench is a queued workbench with what it asks for.
type QueuedWorkbench struct {
	Workbench
	GPUModel    string `gorm:"column:gpu_model"`
	GPUCount    int    `gorm:"column:gpu_count"`
	UnitKind    string `gorm:"column:unit_kind"`
	MIGProfile  string `gorm:"column:mig_profile"`
	MaxRuntimeS int64  `gorm:"column:max_runtime_s"`
	// ClaimGPUs are the shared GPUs it is taking whole (comma-separated;
	// QueueTx.Claim).
	ClaimGPUs string `gorm:"column:claim_gpus"`
}

// Claims lists the shared GPUs a queued workbench is taking whole.
func (w QueuedWorkbench) Claims() []string { return splitClaims(w.ClaimGPUs) }

// HeldWorkbench is an active workbench with the units it holds (all of
// one kind: a flavor asks for one kind of unit).
type HeldWorkbench struct {
	Workbench
	GPUModel    string `gorm:"column:gpu_model"`
	UnitKind    string `gorm:"column:unit_kind"`
	MIGProfile  string `gorm:"column:mig_profile"`
	Units       int    `gorm:"column:units"`
	MaxRuntimeS int64  `gorm:"column:max_runtime_s"` // the run's own (Workbench.RunMaxRuntimeS), else the flavor's
}

// QueueTx is the drainer's handle on its BEGIN IMMEDIATE transaction:
// what it reads (the queue, what holds GPUs) and what it does (place,
// expire, explain) happen under one write lock, so drains running at once
// never bind a GPU twice.
type QueueTx struct {
	tx  *gorm.DB
	now time.Time
}

// DrainQueue runs fn in one immediate transaction. Its time is read once
// the write lock is held: a drain that waited for another must not decide
// on the moment it started waiting.
func (s *Store) DrainQueue(ctx context.Context, fn func(q *QueueTx) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return fn(&QueueTx{tx: tx, now: s.now()})
	})
}

// Queued lists the queued workbenches with what their flavor asks, less
// those whose deletion is asked for: an account deleted from the command
// line marks its workbenches so, and the portal's reconciliation removes
// them at its next pass; a queue pass before it must not start one.
func (q *QueueTx) Queued() ([]QueuedWorkbench, error) {
	var out []QueuedWorkbench
	err := q.tx.Raw(`SELECT w.*, f.gpu_model AS gpu_model, f.gpu_count AS gpu_count,
		f.unit_kind AS unit_kind, f.mig_profile AS mig_profile, f.max_runtime_s AS max_runtime_s
		FROM workbenches w JOIN flavors f ON f.id = w.flavor_id
		WHERE w.state = ? AND w.deleted_at IS NULL AND w.delete_requested_at IS NULL
		ORDER BY w.queued_at, w.id`, StateQueued).Scan(&out).Error
	return out, err
}

// Held lists the active workbenches with the GPUs they hold.
func (q *QueueTx) Held() ([]HeldWorkbench, error) {
	var out []HeldWorkbench
	err := q.tx.Raw(`SELECT w.*, COALESCE(MAX(a.gpu_model), '') AS gpu_model,
		COALESCE(MAX(a.kind), '') AS unit_kind, COALESCE(MAX(a.profile), '') AS mig_profile, COUNT(a.unit_id) AS units, COALESCE(w.run_max_runtime_s, f.max_runtime_s) AS max_runtime_s
		FROM workbenches w JOIN flavors f ON f.id = w.flavor_id LEFT JOIN gpu_allocations a ON a.workbench_id = w.id
		WHERE w.state IN ? AND w.deleted_at IS NULL GROUP BY w.id`, ActiveStates).Scan(&out).Error
	return out, err
}

// Allocated is the set of bound GPU UUIDs.
func (q *QueueTx) Allocated() (map[string]bool, error) {
	var held []string
	if err := q.tx.Model(&gpuAllocation{}).Pluck("gpu_uuid", &held).Error; err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(held))
	for _, u := range held {
		out[u] = true
	}
	return out, nil
}

// FreeUnits counts the units of need's kind free now among its candidates,
// by the rules allocate binds by (a GPU shared or in MIG mode is never
// free whole; a GPU held whole has no free slice or instance).
func (q *QueueTx) FreeUnits(need GPUNeed) (int, error) {
	return freeUnits(q.tx, need)
}

// Check runs a quota check inside the drain's transaction.
func (q *QueueTx) Check(check func(tx *Tx) error) error { return check(&Tx{tx: q.tx}) }

// Place moves a queued workbench to requested and binds its GPUs. atOnce
// is a launch placed by the drain its own request ran right after queueing
// it: it never waited, so its history shows a launch that was requested,
// not one queued and placed in the same instant (the launch form queues by
// default, so that was every launch's history).
func (q *QueueTx) Place(id string, need GPUNeed, atOnce bool) ([]Unit, error) {
	// The shared GPUs it claimed, read before the claim is cleared.
	var claims []string
	if err := q.tx.Model(&Workbench{}).Where("id = ? AND state = ?", id, StateQueued).Pluck("claim_gpus", &claims).Error; err != nil {
		return nil, err
	}
	if len(claims) == 1 {
		need.claims = splitClaims(claims[0])
	}
	res := q.tx.Model(&Workbench{}).Where("id = ? AND state = ? AND deleted_at IS NULL", id, StateQueued).
		Updates(map[string]any{"state": StateRequested, "progress": 0, "reason": "", "queue_position": 0, "queue_ahead": 0,
			"queue_reason": "", "estimated_start": nil, "claim_gpus": "", "updated_at": q.now,
			"preempted_for": ""}) // it runs again (a resumed run too): the preemption is over
	if res.Error != nil {
		return nil, res.Error
	}
	if res.RowsAffected == 0 {
		return nil, ErrConflict
	}
	gpus, err := allocate(q.tx, id, need, q.now)
	if err != nil {
		return nil, err
	}
	event := workbenchEvent{WorkbenchID: id, At: q.now, State: StateRequested, Message: Reasonf("placed from the queue")}
	if atOnce {
		// A fresh launch's one history line is its "queued"; placed by
		// its own request's drain, it never waited, so the line goes.
		if err := q.tx.Where("workbench_id = ? AND state = ?", id, StateQueued).Delete(&workbenchEvent{}).Error; err != nil {
			return nil, err
		}
		event.Message = ""
	}
	return gpus, q.tx.Create(&event).Error
}

// Leave ends a queued workbench's wait (expired, refused by a quota).
func (q *QueueTx) Leave(id, state, reason string) error {
	return leaveQueue(q.tx, id, state, reason, q.now)
}

// Explain records a queued workbench's place, why it waits and its estimate.
func (q *QueueTx) Explain(id string, position, ahead int, reason string, estimated *time.Time, unknown string) error {
	return q.tx.Model(&Workbench{}).Where("id = ? AND state = ?", id, StateQueued).
		Updates(map[string]any{"queue_position": position, "queue_ahead": ahead, "queue_reason": reason, "estimated_start": estimated, "estimate_unknown": unknown}).Error
}

// EstimateNoMaxRuntime is what a drain before the estimate codes stored in
// Workbench.EstimateUnknown when the units a queued workbench waits for are
// held by runs with no maximum runtime; drains now store the scheduler's
// code ("held_without_end"), and readers take this one as that.
const EstimateNoMaxRuntime = "no_max_runtime"

// Claim records that queued workbench id takes the shared GPUs uuids whole
// once their slice holders (told to yield in the same transaction) have
// stopped: from now on nobody is given a slice of them, and Place binds
// them whole to id. It adds to the claims id already has.
func (q *QueueTx) Claim(id string, uuids []string) error {
	var cur []string
	if err := q.tx.Model(&Workbench{}).Where("id = ? AND state = ?", id, StateQueued).Pluck("claim_gpus", &cur).Error; err != nil {
		return err
	}
	if len(cur) == 0 {
		return ErrConflict
	}
	all := splitClaims(cur[0])
	for _, u := range uuids {
		if !slices.Contains(all, u) {
			all = append(all, u)
		}
	}
	return q.tx.Model(&Workbench{}).Where("id = ? AND state = ?", id, StateQueued).Update("claim_gpus", strings.Join(all, ",")).Error
}

// SliceHolders maps each GPU with slices bound to the workbenches holding
// them.
func (q *QueueTx) SliceHolders() (map[string][]string, error) {
	var rows []gpuAllocation
	if err := q.tx.Select("gpu_uuid", "workbench_id").Where("kind = ?", UnitSlice).Order("gpu_uuid, unit_id").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, r := range rows {
		out[r.GPUUUID] = append(out[r.GPUUUID], r.WorkbenchID)
	}
	return out, nil
}

// SharedSlices maps each shared GPU to the number of slices it is shared in.
func (q *QueueTx) SharedSlices() (map[string]int, error) { return sharedSlicesTx(q.tx) }

func splitClaims(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// MarkPreempt tells a preemptible run to yield: it is stopped at at, for
// the launch that forText words (what it asked for; Workbench.PreemptFor).
func (q *QueueTx) MarkPreempt(id string, at time.Time, forText string) error {
	return q.tx.Model(&Workbench{}).Where("id = ? AND preemptible AND preempt_at IS NULL", id).
		Updates(map[string]any{"preempt_notice_at": q.now, "preempt_at": at, "preempt_for": forText}).Error
}

// RescindPreempt lets a run told to yield off: no request needs its units
// any more. It reports whether it was still told (a run stopped meanwhile
// has nothing to rescind).
func (q *QueueTx) RescindPreempt(id string) (bool, error) {
	res := q.tx.Model(&Workbench{}).Where("id = ? AND preempt_at IS NOT NULL AND state IN ?", id, ActiveStates).
		Updates(map[string]any{"preempt_notice_at": nil, "preempt_at": nil, "preempt_for": "", "reason": "", "updated_at": q.now})
	return res.RowsAffected == 1, res.Error
}

// DuePreemptions lists workbenches told to yield whose grace has ended by now.
func (s *Store) DuePreemptions(ctx context.Context, now time.Time) ([]Workbench, error) {
	var out []Workbench
	err := s.db.WithContext(ctx).Where("preempt_at IS NOT NULL AND preempt_at <= ? AND deleted_at IS NULL AND state IN ?", now, ActiveStates).
		Find(&out).Error
	return out, err
}

// GPUSpan is a stretch of GPU use by a user (fair share).
type GPUSpan struct {
	UserID   int64      `gorm:"column:user_id"`
	GPUCount int        `gorm:"column:gpu_count"`
	Started  time.Time  `gorm:"column:started_at"`
	Ended    *time.Time `gorm:"column:ended_at"`
}

// GPUSpansSince lists usage intervals with GPUs that were open at or after
// since.
func (s *Store) GPUSpansSince(ctx context.Context, since time.Time) ([]GPUSpan, error) {
	var out []GPUSpan
	err := s.db.WithContext(ctx).Model(&UsageInterval{}).Select("user_id", "gpu_count", "started_at", "ended_at").
		Where("gpu_count > 0 AND (ended_at IS NULL OR ended_at >= ?)", since).Scan(&out).Error
	return out, err
}

// ActiveReservations lists the reservations in force now.
func (q *QueueTx) ActiveReservations() ([]Reservation, error) {
	var out []Reservation
	if err := q.tx.Where("released_at IS NULL AND starts_at <= ? AND ends_at > ?", q.now, q.now).Find(&out).Error; err != nil {
		return nil, err
	}
	return out, fillHolders(q.tx, out)
}

// Withdraw removes a queued workbench that never held anything and was
// never shown to wait: a launch that asked not to wait and that the queue
// could not place at once (its history line goes with it).
func (q *QueueTx) Withdraw(id string) error {
	if err := q.tx.Where("workbench_id = ?", id).Delete(&workbenchEvent{}).Error; err != nil {
		return err
	}
	res := q.tx.Unscoped().Where("id = ? AND state = ?", id, StateQueued).Delete(&Workbench{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrConflict
	}
	return nil
}

// QuotaMaxRuntime is the maximum runtime per start a user's quota sets
// (0: none), read in the transaction: the queue's estimates count a run's
// end by it as the culler stops it.
func (q *QueueTx) QuotaMaxRuntime(userID int64) (time.Duration, error) {
	l, err := effectiveQuota(q.tx, userID)
	if err != nil || l.MaxRuntimeHours == nil || *l.MaxRuntimeHours <= 0 {
		return 0, err
	}
	return time.Duration(*l.MaxRuntimeHours) * time.Hour, nil
}

// AnyQueued reports whether any launch waits in the queue (one indexed
// probe: every GPU launch that does not queue asks it).
func (s *Store) AnyQueued(ctx context.Context) (bool, error) {
	var ids []string
	err := s.rdb.WithContext(ctx).Model(&Workbench{}).Where("state = ? AND deleted_at IS NULL", StateQueued).Limit(1).Pluck("id", &ids).Error
	return len(ids) > 0, err
}

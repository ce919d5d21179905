package models

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Workbench states (SPEC §3).
const (
	StateRequested = "requested"
	StatePulling   = "pulling"
	StateCreating  = "creating"
	StateStarting  = "starting"
	StateRunning   = "running"
	StateStopping  = "stopping"
	StateStopped   = "stopped"
	StateFailed    = "failed"
	// StateQueued waits in the queue for capacity, holding nothing (free).
	StateQueued = "queued"
	// StatePreempted is a preemptible run that yielded its GPUs to
	// higher-priority work; its home stays.
	StatePreempted = "preempted"
)

// RestartableStates are the states Start accepts.
var RestartableStates = []string{StateStopped, StateFailed, StatePreempted}

// ActiveStates are the states in which a workbench holds GPUs or is on its
// way to; LaunchingStates are those before Jupyter has answered.
var (
	ActiveStates    = []string{StateRequested, StatePulling, StateCreating, StateStarting, StateRunning, StateStopping}
	LaunchingStates = []string{StateRequested, StatePulling, StateCreating, StateStarting}
	// AllStates lists every state, in life order (filters offer them).
	AllStates = []string{StateQueued, StateRequested, StatePulling, StateCreating, StateStarting, StateRunning, StateStopping, StateStopped, StatePreempted, StateFailed}
)

// Workbench is one user's JupyterLab container and its record.
type Workbench struct {
	ID             string     `gorm:"primaryKey" json:"id"`
	Name           string     `json:"name"`
	OwnerID        int64      `json:"-"`
	ImageID        int64      `json:"-"`
	FlavorID       int64      `json:"-"`
	State          string     `json:"state"`
	Progress       int        `json:"progress"`
	Reason         string     `json:"reason"`
	StopError      string     `json:"stop_error"` // why the last stop attempt failed; only while stopping
	Token          string     `json:"-"`
	ContainerID    string     `json:"-"`
	Endpoint       string     `json:"-"`
	IdleTimeoutS   int64      `gorm:"column:idle_timeout_s" json:"idle_timeout_seconds"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	StartedAt      *time.Time `json:"started_at"`
	StoppedAt      *time.Time `json:"stopped_at"`
	LastActivityAt *time.Time `json:"last_activity_at"`
	DeletedAt      *time.Time `json:"-"`
	// ExitLogs are the last lines the container wrote before it stopped
	// or failed, kept after the container is gone.
	ExitLogs string `json:"-"`
	// ReasonDetails is the raw error behind a failure's plain reason.
	ReasonDetails string `json:"-"`

	// GPUs are the physical GPUs the workbench touches (a MIG instance's
	// or a slice's parent GPU too); Units are what it holds on them.
	GPUs  []string `gorm:"-" json:"gpus"`
	Units []Unit   `gorm:"-" json:"units"`
	// Shared is true when the workbench holds a slice of a shared GPU:
	// no memory isolation from its neighbours.
	Shared bool `gorm:"-" json:"shared"`
	// OwnerName is the owner's username, filled by the queries that list
	// workbenches (joined in SQL, so a page naming owners reads the users
	// it shows, not every user); empty elsewhere.
	OwnerName string `gorm:"->;-:migration" json:"-"`

	// RuntimeExtensionS is what the owner added to the maximum runtime of
	// this run with "+1 h" (see orchestrator/deadline.go).
	RuntimeExtensionS int64 `gorm:"column:runtime_extension_s" json:"runtime_extension_seconds"`

	// RunFlavorID is the flavor the current or last run used when it is not
	// FlavorID (the CPU-only twin); 0 = FlavorID. See ShapeFlavorID.
	RunFlavorID int64 `gorm:"column:run_flavor_id" json:"-"`

	// RunMaxRuntimeS is the flavor's maximum runtime when the current or
	// last run started (0: none): a later edit of the flavor applies to the
	// next run. nil for runs from before it was kept (the flavor's now).
	RunMaxRuntimeS *int64 `gorm:"column:run_max_runtime_s" json:"-"`

	// ExtraPorts are HTTP ports the owner declared on this workbench, next
	// to its image's (workbench_ports.go).
	ExtraPorts []int `gorm:"column:extra_ports;serializer:json" json:"extra_ports"`

	// Queue and priority (issue 12 §2, §3; see docs/scheduling.md).
	Priority       string     `json:"priority"`
	PriorityRank   int        `json:"-"`
	Preemptible    bool       `json:"preemptible"`
	AutoResume     bool       `json:"auto_resume"`
	QueuedAt       *time.Time `json:"queued_at"`
	QueueExpiresAt *time.Time `json:"queue_expires_at"`
	// QueuePosition is 1-based among requests for the same GPUs (0 when
	// not queued); QueueAhead how many of them go first.
	QueuePosition  int        `json:"queue_position"`
	QueueAhead     int        `json:"queue_ahead"`
	QueueReason    string     `json:"queue_reason"`
	EstimatedStart *time.Time `json:"estimated_start"`
	// EstimateUnknown says why EstimatedStart is nil, when the queue knows:
	// a scheduler.NoEstimate… code, written by each drain; "" otherwise.
	EstimateUnknown string `gorm:"column:estimate_unknown" json:"estimate_unknown"`
	// PreemptAt is when a preemptible run told to yield is stopped.
	PreemptNoticeAt *time.Time `json:"preempt_notice_at"`
	PreemptAt       *time.Time `json:"preempt_at"`
	// PreemptFor is what the launch it yields to asked for, in words
	// (orchestrator: preemptFor); set and cleared with PreemptAt.
	PreemptFor string `gorm:"column:preempt_for" json:"preempt_for"`
	// PreemptedFor is PreemptFor kept by the stop that preempted it: what
	// the launch it yielded to asked for ("" when the notice did not
	// say). Set by every move to preempted, so it is the last
	// preemption's; kept by the auto-resume's requeue (Requeue.Resume),
	// cleared when a run starts again (RestartWorkbench, Place) or its
	// owner puts it in the queue (RequeueWorkbench). It means something
	// only while the workbench is preempted or queued to resume; the API
	// shows it then (handlers: APIWorkbench.PreemptedFor).
	PreemptedFor string `gorm:"column:preempted_for" json:"-"`
	// PausedAt is when the reconciler found its container paused outside
	// the portal (`docker pause`) while running; nil when it is not.
	PausedAt *time.Time `json:"paused_at"`
	// ReservationID is the booking a launch named (the "reservation"
	// launch field); nil: it uses its owner's bookings of its units, if any.
	ReservationID *int64 `gorm:"column:reservation_id" json:"reservation_id"`
}

// Launching reports whether the workbench is on its way to running.
func (w *Workbench) Launching() bool { return contains(LaunchingStates, w.State) }

// Active reports whether the workbench holds (or is acquiring) resources.
func (w *Workbench) Active() bool { return contains(ActiveStates, w.State) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var workbenchNameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9 ._-]{0,47}$`)

// ValidateWorkbenchName checks a user-chosen workbench name.
func ValidateWorkbenchName(name string) error {
	if name == "" { // not a wrong character: none at all
		return invalid("name", "is required")
	}
	if !workbenchNameRe.MatchString(name) {
		return invalid("name", "use 1–48 Latin letters (a–z, A–Z), digits, spaces, '.', '_' or '-', starting with a letter or digit")
	}
	return nil
}

// newWorkbenchID returns a random id safe in URLs and container names.
func newWorkbenchID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return strings.ToLower(strings.TrimRight(base32.StdEncoding.EncodeToString(b), "="))
}

// CreateWorkbench inserts wb (state requested) and binds its GPUs in one
// transaction. The connection uses _txlock=immediate, so the transaction
// starts with BEGIN IMMEDIATE: it holds SQLite's write lock from the first
// read, and two concurrent launches cannot both see the same GPU as free —
// the second waits, then sees the first one's allocation. (The primary key
// on gpu_allocations.gpu_uuid is the last line of defence.)
func (s *Store) CreateWorkbench(ctx context.Context, wb *Workbench, need GPUNeed, check func(tx *Tx) error) error {
	if err := ValidateWorkbenchName(wb.Name); err != nil {
		return err
	}
	wb.ID = newWorkbenchID()
	wb.State = StateRequested
	wb.Progress = 0
	now := s.now()
	wb.CreatedAt, wb.UpdatedAt = now, now
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&Workbench{}).Where("owner_id = ? AND name = ? AND deleted_at IS NULL", wb.OwnerID, wb.Name).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return taken("name", "you already have a workbench with this name")
		}
		if check != nil {
			if err := check(&Tx{tx: tx}); err != nil {
				return err
			}
		}
		if err := tx.Create(wb).Error; err != nil {
			return err
		}
		units, err := allocate(tx, wb.ID, need, now)
		if err != nil {
			return err
		}
		wb.setUnits(units)
		return tx.Create(&workbenchEvent{WorkbenchID: wb.ID, At: now, State: StateRequested}).Error
	})
}

// Tx is a handle on the launch transaction for checks that must run inside
// it (quotas: CheckLaunchQuota).
type Tx struct {
	tx *gorm.DB
}

// RestartWorkbench moves a stopped or failed workbench to requested and
// binds its GPUs, in one immediate transaction. It returns ErrConflict when
// the workbench is in another state (a concurrent start got there first).
//
// runFlavorID is the flavor this run uses when not the workbench's own (its
// CPU-only twin), 0 for its own; it is recorded in the same transaction.
func (s *Store) RestartWorkbench(ctx context.Context, id string, need GPUNeed, runFlavorID int64, check func(tx *Tx) error) ([]Unit, error) {
	var units []Unit
	now := s.now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if check != nil {
			if err := check(&Tx{tx: tx}); err != nil {
				return err
			}
		}
		res := tx.Model(&Workbench{}).Where("id = ? AND deleted_at IS NULL AND state IN ?", id, RestartableStates).
			Updates(map[string]any{"state": StateRequested, "progress": 0, "reason": "", "run_flavor_id": runFlavorID, "updated_at": now, "preempt_at": nil, "preempt_notice_at": nil, "preempt_for": "",
				"preempted_for": ""}) // a new run: the last preemption is over
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrConflict
		}
		var err error
		if units, err = allocate(tx, id, need, now); err != nil {
			return err
		}
		return tx.Create(&workbenchEvent{WorkbenchID: id, At: now, State: StateRequested}).Error
	})
	return units, err
}

type workbenchEvent struct {
	ID          int64 `gorm:"primaryKey"`
	WorkbenchID string
	At          time.Time
	State       string
	Message     string
}

func (workbenchEvent) TableName() string { return "workbench_events" }

// SetWorkbenchState moves a workbench to state with progress and reason and
// records the change in its history, whatever state it was in. extra sets
// further columns. The orchestrator uses TransitionWorkbench, which checks
// the previous state; this stays for tests that put a record in a state.
func (s *Store) SetWorkbenchState(ctx context.Context, id, state string, progress int, reason string, extra map[string]any) error {
	now := s.now()
	fields := map[string]any{"state": state, "progress": progress, "reason": reason, "updated_at": now}
	for k, v := range extra {
		fields[k] = v
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var cur Workbench
		if err := tx.Select("state", "reason").Where("id = ?", id).First(&cur).Error; err != nil {
			return notFound(err)
		}
		if err := tx.Model(&Workbench{}).Where("id = ?", id).Updates(fields).Error; err != nil {
			return err
		}
		end, _ := extra["stopped_at"].(time.Time)
		return recordStateChange(tx, id, cur, state, reason, end, now)
	})
}

// UpdateWorkbench sets columns without a state change (container id, endpoint).
func (s *Store) UpdateWorkbench(ctx context.Context, id string, fields map[string]any) error {
	fields["updated_at"] = s.now()
	return s.db.WithContext(ctx).Model(&Workbench{}).Where("id = ?", id).Updates(fields).Error
}

// WorkbenchByID returns a workbench (not deleted) with its GPUs.
func (s *Store) WorkbenchByID(ctx context.Context, id string) (*Workbench, error) {
	var wb Workbench
	if err := s.db.WithContext(ctx).Where("id = ? AND deleted_at IS NULL", id).First(&wb).Error; err != nil {
		return nil, notFound(err)
	}
	list := []Workbench{wb}
	if err := s.attachGPUs(ctx, list); err != nil {
		return nil, err
	}
	return &list[0], nil
}

// ListWorkbenches returns workbenches (not deleted), newest first; ownerID 0
// means everyone's. states, when given, filters by state.
//
// Each row carries its owner's username (OwnerName), joined in SQL.
func (s *Store) ListWorkbenches(ctx context.Context, ownerID int64, states ...string) ([]Workbench, error) {
	var out []Workbench
	if err := listWorkbenchesQuery(s.rdb.WithContext(ctx), ownerID, states).Find(&out).Error; err != nil {
		return nil, err
	}
	return out, s.attachGPUs(ctx, out)
}

// listWorkbenchesQuery is ListWorkbenches' statement (the query-plan test
// checks it uses workbenches_owner_created for one owner). Ties of
// created_at go by id, so the order is total: pages (the admin page's
// offsets, the API's keyset) neither repeat nor skip a workbench.
func listWorkbenchesQuery(db *gorm.DB, ownerID int64, states []string) *gorm.DB {
	q := db.Table("workbenches").Select("workbenches.*, users.username AS owner_name").
		Joins("LEFT JOIN users ON users.id = workbenches.owner_id").
		Where("workbenches.deleted_at IS NULL").Order("workbenches.created_at DESC, workbenches.id DESC")
	if ownerID != 0 {
		q = q.Where("workbenches.owner_id = ?", ownerID)
	}
	if len(states) > 0 {
		q = q.Where("workbenches.state IN ?", states)
	}
	return q
}

// CountWorkbenches counts a user's workbenches (not deleted).
func (s *Store) CountWorkbenches(ctx context.Context, ownerID int64) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&Workbench{}).Where("owner_id = ? AND deleted_at IS NULL", ownerID).Count(&n).Error
	return n, err
}

// MarkWorkbenchDeleted hides a workbench; its history stays for statements.
// Its open usage interval, if any, ends at endedAt (the container's exit
// time; zero means now) in the same transaction.
func (s *Store) MarkWorkbenchDeleted(ctx context.Context, id string, endedAt time.Time) error {
	now := s.now()
	if endedAt.IsZero() {
		endedAt = now
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := closeOpenInterval(tx, id, endedAt, "deleted"); err != nil {
			return err
		}
		if err := tx.Where("workbench_id = ?", id).Delete(&gpuAllocation{}).Error; err != nil {
			return err
		}
		// Its access tokens end with it.
		if err := tx.Model(&WorkbenchToken{}).Where("workbench_id = ? AND revoked_at IS NULL", id).Update("revoked_at", now).Error; err != nil {
			return err
		}
		// A delete asked for is done with the record, unless the home
		// volume is still to go (workbench_delete.go).
		return tx.Model(&Workbench{}).Where("id = ?", id).Updates(map[string]any{"deleted_at": now, "updated_at": now,
			"delete_requested_at": gorm.Expr("CASE WHEN delete_data THEN delete_requested_at END")}).Error
	})
}

// WorkbenchExists reports whether a record (deleted or not) has id; the
// reconciler uses it to tell orphan containers from known ones.
func (s *Store) WorkbenchExists(ctx context.Context, id string) (exists, deleted bool, err error) {
	var wb Workbench
	err = s.db.WithContext(ctx).Select("id", "deleted_at").Where("id = ?", id).First(&wb).Error
	if err != nil {
		if notFound(err) == ErrNotFound {
			return false, false, nil
		}
		return false, false, err
	}
	return true, wb.DeletedAt != nil, nil
}

// TouchWorkbenches records last activity times (batched by the caller).
func (s *Store) TouchWorkbenches(ctx context.Context, at map[string]time.Time) error {
	if len(at) == 0 {
		return nil
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for id, t := range at {
			if err := tx.Model(&Workbench{}).Where("id = ? AND (last_activity_at IS NULL OR last_activity_at < ?)", id, t).
				Update("last_activity_at", t).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// WorkbenchEvent is one line of a workbench's state history.
type WorkbenchEvent struct {
	ID      int64     `json:"id"`
	At      time.Time `json:"at"`
	State   string    `json:"state"`
	Message string    `json:"message"`
}

// WorkbenchHistory returns the state history, oldest first.
func (s *Store) WorkbenchHistory(ctx context.Context, id string) ([]WorkbenchEvent, error) {
	var rows []workbenchEvent
	if err := s.db.WithContext(ctx).Where("workbench_id = ?", id).Order("id").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]WorkbenchEvent, len(rows))
	for i, r := range rows {
		out[i] = WorkbenchEvent{ID: r.ID, At: r.At, State: r.State, Message: r.Message}
	}
	return out, nil
}

// WorkbenchRoute is what the proxy needs to know about a workbench.
type WorkbenchRoute struct {
	OwnerID  int64
	State    string
	Endpoint string
	Token    string
	PausedAt *time.Time // paused outside the portal (Workbench.PausedAt)
}

// RouteOf reads a workbench's route in one indexed query (the proxy's hot
// path: no GPU list).
func (s *Store) RouteOf(ctx context.Context, id string) (WorkbenchRoute, error) {
	var r WorkbenchRoute
	err := s.db.WithContext(ctx).Model(&Workbench{}).Select("owner_id", "state", "endpoint", "token", "paused_at").
		Where("id = ? AND deleted_at IS NULL", id).Take(&r).Error
	return r, notFound(err)
}

// WorkbenchFilter is what the admin workbenches page shows: workbenches in
// State (any if ""), whose name or owner's username contains Search
// (case-insensitive), of members of the group GroupID (any owner if 0).
type WorkbenchFilter struct {
	State, Search string
	GroupID       int64
}

// WorkbenchPage is one page of everyone's workbenches that f keeps, newest
// first, with owner names, and how many match in all: the admin
// workbenches page.
func (s *Store) WorkbenchPage(ctx context.Context, f WorkbenchFilter, offset, limit int) ([]Workbench, int64, error) {
	var states []string
	if f.State != "" {
		states = []string{f.State}
	}
	search := strings.TrimSpace(f.Search)
	query := func() *gorm.DB {
		q := inGroup(listWorkbenchesQuery(s.db.WithContext(ctx), 0, states), f.GroupID)
		if search != "" {
			like := "%" + likeEscape(search) + "%"
			q = q.Where(`(workbenches.name LIKE ? ESCAPE '\' OR users.username LIKE ? ESCAPE '\')`, like, like)
		}
		return q
	}
	var total int64
	if err := query().Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var out []Workbench
	if err := query().Offset(offset).Limit(limit).Find(&out).Error; err != nil {
		return nil, 0, err
	}
	return out, total, s.attachGPUs(ctx, out)
}

// inGroup keeps, of a listWorkbenchesQuery, the workbenches whose owner is
// a member of groupID (all of them for 0): a join on group_members' key
// (group_id, user_id), one row per workbench, so a page and its count
// stay in SQL (a class's workbenches among a lab's thousands).
func inGroup(q *gorm.DB, groupID int64) *gorm.DB {
	if groupID == 0 {
		return q
	}
	return q.Joins("JOIN group_members ON group_members.user_id = workbenches.owner_id AND group_members.group_id = ?", groupID)
}

// WorkbenchNamesOf maps the id of every workbench ownerID ever had,
// deleted ones included, to its name: a statement names the workbenches
// its lines are for, and a deleted one was charged too.
func (s *Store) WorkbenchNamesOf(ctx context.Context, ownerID int64) (map[string]string, error) {
	var rows []struct{ ID, Name string }
	if err := s.rdb.WithContext(ctx).Table("workbenches").Select("id, name").Where("owner_id = ?", ownerID).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Name
	}
	return out, nil
}

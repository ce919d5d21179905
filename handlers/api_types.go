package handlers

import (
	"encoding/json"
	"time"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
)

// The JSON API's response types, in one place. SPEC §8 fixes the names
// scripts rely on (image, flavor, workbench, gpu, list, quota, usage and the
// error object); further fields are allowed and listed here too, so a test
// can decode every answer strictly (json.Decoder.DisallowUnknownFields) and
// a field added by accident to a storage struct never leaks into the API.
// Handlers encode these types, never a storage struct or a gin.H.

// APIError is every API error: {"error":{"code","message"}} (SPEC §8), with
// the fields at fault for the calculator's form-like bodies.
type APIError struct {
	Error APIErrorDetail `json:"error"`
}

// APIErrorDetail is the inside of an APIError.
type APIErrorDetail struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
	// Limit: of a quota_exceeded, the quota field that refused
	// ("max_gpus", "max_storage_gib").
	Limit string `json:"limit,omitempty"`
	// WayOut and CPUFlavor: of a refusal by the home-storage limit, what
	// the user can start to delete files (start_without_gpu: this
	// workbench with mode=cpu, as CPUFlavor; launch_without_gpu: a
	// workbench of flavor CPUFlavor; delete_files: the CPU-only run in
	// progress; ask_admin: no flavor without GPU is open to them).
	WayOut    string `json:"way_out,omitempty"`
	CPUFlavor string `json:"cpu_flavor,omitempty"`
}

// APIList is a list: {"items": […]} (SPEC §8).
type APIList[T any] struct {
	Items []T `json:"items"`
}

// list wraps items, never null.
func list[T any](items []T) APIList[T] { return APIList[T]{Items: nonNil(items)} }

// APIPage is one page of a list that grows with the lab (users,
// workbenches, notifications): a list as above plus where the next page
// is — its cursor and the address to GET, both null on the last page
// (handlers/api_paging.go).
type APIPage[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
	Next       *string `json:"next"`
}

// APIItem is one created object: {"item": …}.
type APIItem[T any] struct {
	Item T `json:"item"`
}

// APIImage is an image (SPEC §8: id, name, image, start_command,
// run_as_user, home_path, description, enabled; open_path).
type APIImage struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Image        string `json:"image"`
	Description  string `json:"description"`
	Tags         string `json:"tags"`
	StartCommand string `json:"start_command"`
	RunAsUser    string `json:"run_as_user"`
	HomePath     string `json:"home_path"`
	OpenPath     string `json:"open_path"`
	ExtraPorts   []int  `json:"extra_ports"`
	Enabled      bool   `json:"enabled"`
	// A saved image (owner_id > 0): version Version of BaseName, saved
	// from workbench SavedFrom, shared with SharedGroups.
	OwnerID      int64     `json:"owner_id"`
	BaseName     string    `json:"base_name,omitempty"`
	Version      int       `json:"version,omitempty"`
	SizeBytes    int64     `json:"size_bytes"`
	SavedFrom    string    `json:"saved_from,omitempty"`
	SharedGroups []string  `json:"shared_groups"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

func apiImage(i *models.Image) APIImage {
	return APIImage{ID: i.ID, Name: i.Name, Image: i.Image, Description: i.Description, Tags: i.Tags,
		StartCommand: i.StartCommand, RunAsUser: i.RunAsUser, HomePath: i.HomePath, OpenPath: i.OpenPath,
		ExtraPorts: i.ExtraPorts, Enabled: i.Enabled, OwnerID: i.OwnerID, BaseName: i.BaseName, Version: i.Version,
		SizeBytes: i.SizeBytes, SavedFrom: i.SavedFrom, SharedGroups: nonNil(i.SharedGroups),
		CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt}
}

// APIFlavor is a flavor (SPEC §8: id, name, gpu_model, gpu_count,
// cpu_cores, memory_gib, enabled). memory_gib is exact (MiB/1024).
type APIFlavor struct {
	ID                    int64             `json:"id"`
	Name                  string            `json:"name"`
	GPUModel              string            `json:"gpu_model"`
	GPUCount              int               `json:"gpu_count"`
	UnitKind              string            `json:"unit_kind"`             // gpu | mig | slice
	MIGProfile            string            `json:"mig_profile,omitempty"` // for unit_kind mig
	CPUCores              models.Millicores `json:"cpu_cores"`
	MemoryMiB             int64             `json:"memory_mib"`
	MemoryGiB             json.Number       `json:"memory_gib"`
	ShmMiB                int               `json:"shm_mib"`
	MaxRuntimeSeconds     int64             `json:"max_runtime_seconds"`
	GPUIdleTimeoutSeconds int64             `json:"gpu_idle_timeout_seconds"`
	CPUTwinID             int64             `json:"cpu_twin_id"` // the CPU-only twin (0: none)
	Shared                bool              `json:"shared"`      // a slice of a shared GPU: no memory isolation
	Enabled               bool              `json:"enabled"`
	CreatedAt             time.Time         `json:"created_at"`
	UpdatedAt             time.Time         `json:"updated_at"`
}

func apiFlavor(f *models.Flavor) APIFlavor {
	return APIFlavor{ID: f.ID, Name: f.Name, GPUModel: f.GPUModel, GPUCount: f.GPUCount, UnitKind: f.UnitKind, MIGProfile: f.MIGProfile,
		CPUTwinID: f.CPUTwinID, Shared: f.Shared(), CPUCores: f.CPUMilli,
		MemoryMiB: f.MemoryMiB, MemoryGiB: json.Number(models.FormatMemoryGiB(f.MemoryMiB)), ShmMiB: f.ShmMiB,
		MaxRuntimeSeconds: f.MaxRuntimeS, GPUIdleTimeoutSeconds: f.GPUIdleTimeoutS, Enabled: f.Enabled,
		CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// APIWorkbench is a workbench (SPEC §8: id, name, owner, state, image,
// flavor, gpus, url, reason, cost_so_far_micros, rate_per_hour_micros).
type APIWorkbench struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Owner              string   `json:"owner"`
	State              string   `json:"state"`
	Progress           int      `json:"progress"`
	Image              string   `json:"image"`
	Flavor             string   `json:"flavor"`
	GPUs               []string `json:"gpus"`
	Simulated          bool     `json:"simulated"` // the pool is simulated: every workbench, whatever its state
	URL                string   `json:"url"`
	Reason             string   `json:"reason"`
	StopError          string   `json:"stop_error,omitempty"`
	StopNotRecorded    bool     `json:"stop_not_recorded,omitempty"` // stopped (charged to stopped_at), the database could not record it yet
	ReasonDetails      string   `json:"reason_details,omitempty"`    // the raw error behind reason
	IdleTimeoutSeconds int64    `json:"idle_timeout_seconds"`
	CostSoFarMicros    int64    `json:"cost_so_far_micros"`
	RatePerHourMicros  int64    `json:"rate_per_hour_micros"`
	Currency           string   `json:"currency"`
	CreatedAt          string   `json:"created_at"`
	StartedAt          *string  `json:"started_at"`
	StoppedAt          *string  `json:"stopped_at"`
	// Units are what it holds (kind gpu|mig|slice); Shared marks a slice of
	// a shared GPU, with SharedNote saying what that means.
	Units      []models.Unit `json:"units"`
	Shared     bool          `json:"shared"`
	SharedNote string        `json:"shared_note,omitempty"`
	// CPUOnly: the current or last run is the flavor's CPU-only twin,
	// RunFlavor (billed at its rates, no GPU).
	CPUOnly   bool   `json:"cpu_only"`
	RunFlavor string `json:"run_flavor"`
	// ExtraPorts are the ports the owner declared (not the image's).
	ExtraPorts []int `json:"extra_ports"`
	// The queue (docs/scheduling.md): position among requests for the
	// same GPUs (0 when not queued), an estimate (null when unknown) and
	// why it waits.
	QueuePosition  int     `json:"queue_position"`
	EstimatedStart *string `json:"estimated_start"`
	// EstimatedStartReason says why estimated_start is null, where the
	// queue knows ("the workbenches holding these GPUs have no maximum
	// runtime"), and EstimatedStartReasonCode the same as a stable code
	// for programs ("held_without_end"; README lists them); both absent
	// otherwise.
	EstimatedStartReason     string `json:"estimated_start_reason,omitempty"`
	EstimatedStartReasonCode string `json:"estimated_start_reason_code,omitempty"`
	QueueReason              string `json:"queue_reason,omitempty"`
	// WaitingFor says who holds a waiting workbench: "portal" (queued in
	// the portal's queue) or "kubernetes" (starting, its Pod Pending: the
	// scheduler's message is in reason); absent when it waits for no one.
	WaitingFor  string `json:"waiting_for,omitempty"`
	Priority    string `json:"priority"`
	Preemptible bool   `json:"preemptible"`
	AutoResume  bool   `json:"auto_resume"`
	// PreemptAt is when a preemptible run told to yield will be stopped.
	PreemptAt *string `json:"preempt_at,omitempty"`
	// PreemptFor: told to yield (with preempt_at), what the launch it
	// yields to asks for, in the notice's words, as preempted_for keeps
	// them after the stop. Absent otherwise.
	PreemptFor string `json:"preempt_for,omitempty"`
	// PreemptedFor: preempted (or queued to resume after it), what the
	// launch it yielded to asked for, in the notice's words ("priority
	// interactive, 1 × H100 80GB HBM3 needed, 0 free"). Absent otherwise,
	// and for a preemption whose notice did not say.
	PreemptedFor string `json:"preempted_for,omitempty"`
	// PausedAt: running, but its container was found paused outside the
	// portal (`docker pause`) then; it cannot answer, and is still
	// charged. Absent when it is not paused.
	PausedAt *string `json:"paused_at,omitempty"`
	// Reservation is the booking the launch named (null: none named).
	Reservation *int64 `json:"reservation"`
	// AdminViews are, in its owner's GET /api/v1/workbenches/{id} only,
	// the administrators' newest looks at its page in the last 90 days
	// (at most 5, newest first; [] when none), and AdminViewsEarlier how
	// many earlier ones in that window are not listed (0 when none). Absent elsewhere
	// (lists, actions, an administrator reading someone else's).
	AdminViews        *[]APIAdminView `json:"admin_views,omitempty"`
	AdminViewsEarlier *int64          `json:"admin_views_earlier,omitempty"`
}

// workbenchJSON is the former name of APIWorkbench.
type workbenchJSON = APIWorkbench

// APIGPU is one GPU of the pool (SPEC §8: index, uuid, model, memory_mib,
// state, health, workbench_id, simulated).
type APIGPU struct {
	Index        int               `json:"index"`
	UUID         string            `json:"uuid"`
	Model        string            `json:"model"`
	MemoryMiB    uint64            `json:"memory_mib"`
	State        string            `json:"state"`
	Health       string            `json:"health"`
	HealthDetail string            `json:"health_detail,omitempty"`
	WorkbenchID  string            `json:"workbench_id"`
	Simulated    bool              `json:"simulated"`
	Drained      bool              `json:"drained"`
	MIGEnabled   bool              `json:"mig_enabled"`
	MIG          []gpu.MIGInstance `json:"mig_instances,omitempty"`
	// SharedSlices > 0: an admin shared the GPU in that many slices, with
	// optional MPS limits; Units are its MIG instances or slices and who
	// holds each.
	SharedSlices     int                     `json:"shared_slices"`
	MPSMemoryMiB     int64                   `json:"mps_memory_mib,omitempty"`
	MPSThreadPercent int                     `json:"mps_thread_percent,omitempty"`
	Units            []orchestrator.PoolUnit `json:"units,omitempty"`
	Utilization      *orchestrator.Reading   `json:"utilization,omitempty"`
	// OutsideProcesses are compute processes on a whole GPU no workbench
	// holds: it is used outside the portal.
	OutsideProcesses []orchestrator.OutsideProcess `json:"outside_processes,omitempty"`
	// UnknownContainer holds the GPU whole: a container of this install no
	// workbench record names (a restored backup's orphan), until the orphan
	// sweep removes it at remove_at.
	UnknownContainer *orchestrator.UnknownHolder `json:"unknown_container,omitempty"`
}

// APIGPUList is GET /gpus: the list and where the inventory comes from.
type APIGPUList struct {
	Items     []APIGPU `json:"items"`
	Simulated bool     `json:"simulated"`
	Backend   string   `json:"backend"`
	Status    string   `json:"status"`
}

func apiGPU(g orchestrator.PoolGPU) APIGPU {
	return APIGPU{Index: g.Index, UUID: g.UUID, Model: g.Model, MemoryMiB: g.MemoryMiB, State: g.State, Health: g.Health,
		HealthDetail: g.HealthDetail, WorkbenchID: g.WorkbenchID, Simulated: g.Simulated, Drained: g.Drained,
		MIGEnabled: g.MIGEnabled, MIG: g.MIG, SharedSlices: g.SharedSlices, MPSMemoryMiB: g.MPSMemoryMiB,
		MPSThreadPercent: g.MPSThreadPercent, Units: g.Units, Utilization: g.Util, OutsideProcesses: g.Outside,
		UnknownContainer: g.Unknown}
}

// holdersOnly is g with the holding workbench named only where it is one
// of mine: another user's workbench id says nothing they may open, and
// tells who runs what. The units are copied: g's share the pool's cache.
func (g APIGPU) holdersOnly(mine map[string]bool) APIGPU {
	if !mine[g.WorkbenchID] {
		g.WorkbenchID = ""
	}
	units := make([]orchestrator.PoolUnit, len(g.Units))
	for i, u := range g.Units {
		if !mine[u.WorkbenchID] {
			u.WorkbenchID = ""
		}
		units[i] = u
	}
	if g.Units != nil {
		g.Units = units
	}
	return g
}

// APIQuota is a quota (SPEC §8: max_gpus, max_gpus_per_model,
// max_workbenches, gpu_hours_per_month, budget_per_month_micros,
// max_runtime_hours; null = unlimited). models.Limits is a plain value
// whose JSON names are this contract.
type APIQuota = models.Limits

// APIQuotaSubject is GET|PUT /admin/quotas/…: whose quota and its values;
// for a user the effective quota after groups and the default.
type APIQuotaSubject struct {
	Scope      string    `json:"scope"`
	Name       string    `json:"name,omitempty"`
	Quota      APIQuota  `json:"quota"`
	Overridden *bool     `json:"overridden,omitempty"`
	Effective  *APIQuota `json:"effective,omitempty"`
}

// APIQuotaStatus is a user's quota with what they use of it.
type APIQuotaStatus = quotaStatus

// APIMe is GET /me.
type APIMe struct {
	ID          int64          `json:"id"`
	Username    string         `json:"username"`
	DisplayName string         `json:"display_name"`
	Email       string         `json:"email"`
	Role        string         `json:"role"`
	Groups      []string       `json:"groups"`
	Currency    string         `json:"currency"`
	Quota       APIQuota       `json:"quota"`
	Usage       APIQuotaStatus `json:"usage"`
	// EmailWorkbenchNotices: what happens to the user's workbenches is
	// emailed too (the Notifications page sets it).
	EmailWorkbenchNotices bool `json:"email_workbench_notices"`
	// TimeZone: the zone pages show times in beside UTC ("" for UTC only).
	TimeZone string `json:"time_zone"`
}

// APIUsage is GET /usage (SPEC §8: from, to, group_by, items [{key,
// gpu_seconds, amount_micros}], total_micros).
type APIUsage struct {
	From        string         `json:"from"`
	To          string         `json:"to"`
	GroupBy     string         `json:"group_by"`
	Items       []APIUsageItem `json:"items"`
	TotalMicros int64          `json:"total_micros"`
	Currency    string         `json:"currency"`
}

// APIUsageItem is one line of APIUsage; models.UsageItem is a computed
// summary whose JSON names are this contract.
type APIUsageItem = models.UsageItem

// APIToken is an API token as its owner sees it (never the secret).
type APIToken struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	CreatedAt  time.Time  `json:"created_at"`
}

// APITokenCreated is POST /tokens: the secret, shown once, and the token.
type APITokenCreated struct {
	Token string   `json:"token"`
	Item  APIToken `json:"item"`
}

func apiToken(t *models.APIToken) APIToken {
	return APIToken{ID: t.ID, Name: t.Name, Prefix: t.Prefix, ExpiresAt: t.ExpiresAt, LastUsedAt: t.LastUsedAt,
		RevokedAt: t.RevokedAt, CreatedAt: t.CreatedAt}
}

// APISSHKey is one of a user's SSH public keys.
type APISSHKey struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	PublicKey   string     `json:"public_key"`
	Fingerprint string     `json:"fingerprint"`
	CreatedAt   time.Time  `json:"created_at"`
	LastUsedAt  *time.Time `json:"last_used_at"`
	// Verified: its holder has connected once as VerifyUser with it. A key
	// that is not opens nothing.
	Verified   bool       `json:"verified"`
	VerifiedAt *time.Time `json:"verified_at"`
	// While pending: the SSH user name to connect as once with the key,
	// and the whole command (none when the portal serves no SSH), until
	// VerifyExpiresAt; after it neither (the code verifies nothing any
	// more: POST /api/v1/ssh-keys/{id}/verify-code issues a new one).
	VerifyUser      string     `json:"verify_user,omitempty"`
	VerifyCommand   string     `json:"verify_command,omitempty"`
	VerifyExpiresAt *time.Time `json:"verify_expires_at,omitempty"`
}

func apiSSHKey(k *models.SSHKey) APISSHKey {
	out := APISSHKey{ID: k.ID, Name: k.Name, PublicKey: k.PublicKey, Fingerprint: k.Fingerprint, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt,
		Verified: k.Verified(), VerifiedAt: k.VerifiedAt, VerifyUser: k.VerifyUser()}
	if at := k.VerifyExpiresAt(); at != nil {
		utc := at.UTC()
		out.VerifyExpiresAt = &utc
	}
	return out
}

// mapList converts each element and wraps the result as a list.
func mapList[S, T any](in []S, f func(*S) T) APIList[T] {
	out := make([]T, 0, len(in))
	for i := range in {
		out = append(out, f(&in[i]))
	}
	return list(out)
}

// APIUser is an account as admins list it (never the password hash).
type APIUser struct {
	ID          int64     `json:"id"`
	Username    string    `json:"username"`
	DisplayName string    `json:"display_name"`
	Email       string    `json:"email"`
	Role        string    `json:"role"`
	Disabled    bool      `json:"disabled"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// DeletedAt is set on a deleted account's tombstone (named
	// deleted-<id>, kept for its bills); ErasePending is true while its
	// workbenches or home volume are still to be removed.
	DeletedAt    *time.Time `json:"deleted_at"`
	ErasePending bool       `json:"erase_pending"`
	// Storage is the user's home storage against their limit (the admin
	// API's users).
	Storage *APIUserStorage `json:"storage,omitempty"`
}

// APIUserStorage is a user's home storage as last measured (every
// metering pass), against their effective limit.
type APIUserStorage struct {
	UsedMilliGiB int64  `json:"used_milli_gib"`  // 0 with no home volume
	LimitGiB     *int64 `json:"max_storage_gib"` // null: unlimited
	// Over: more than the limit; launches and starts with GPUs are refused.
	Over bool `json:"over"`
}

func apiUser(u *models.User) APIUser {
	return APIUser{ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Email: u.Email, Role: u.Role,
		Disabled: u.Disabled, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt,
		DeletedAt: u.DeletedAt, ErasePending: u.Deleted() && u.ErasedAt == nil}
}

// APIPriceRate is one version of a rate schedule.
type APIPriceRate struct {
	ID            int64     `json:"id"`
	Resource      string    `json:"resource"`
	GPUModel      string    `json:"gpu_model"`
	RateMicros    int64     `json:"rate_micros"`
	EffectiveFrom time.Time `json:"effective_from"`
	IsDefault     bool      `json:"is_default"`
	CreatedBy     string    `json:"created_by"`
	CreatedAt     time.Time `json:"created_at"`
}

func apiPriceRate(r *models.PriceRate) APIPriceRate {
	return APIPriceRate{ID: r.ID, Resource: r.Resource, GPUModel: r.GPUModel, RateMicros: r.Micros, EffectiveFrom: r.EffectiveFrom,
		IsDefault: r.IsDefault, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt}
}

// APIPrices is GET /admin/prices: the rates in force and every version.
type APIPrices struct {
	Currency string         `json:"currency"`
	Current  []APIPriceRate `json:"current"`
	History  []APIPriceRate `json:"history"`
}

// APIPricesAdded is PUT /admin/prices: the versions added, and the rates
// already in force that made the others' entries no change (a retried PUT
// adds nothing).
type APIPricesAdded struct {
	Added     []APIPriceRate `json:"added"`
	Unchanged []APIPriceRate `json:"unchanged"`
}

// APIRuntimeExtended is POST /workbenches/{id}/extend.
type APIRuntimeExtended struct {
	ID                  string `json:"id"`
	RuntimeStopAt       string `json:"runtime_stop_at"`
	RuntimeLimitSeconds int64  `json:"runtime_limit_seconds"`
	CanExtend           bool   `json:"can_extend"`
}

// APIGPUWatch is a request to be told when a GPU model frees, or (with
// flavor) when a flavor can start.
type APIGPUWatch struct {
	ID       int64  `json:"id"`
	GPUModel string `json:"gpu_model"`
	// Flavor and FlavorID name the flavor watched; absent for a watch on
	// the GPU model.
	Flavor     string     `json:"flavor,omitempty"`
	FlavorID   int64      `json:"flavor_id,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	NotifiedAt *time.Time `json:"notified_at"`
}

// apiGPUWatch is w in the API; names maps flavor ids to names.
func apiGPUWatch(w *models.GPUWatch, names map[int64]string) APIGPUWatch {
	out := APIGPUWatch{ID: w.ID, GPUModel: w.GPUModel, CreatedAt: w.CreatedAt, NotifiedAt: w.NotifiedAt}
	if w.FlavorID != nil {
		out.FlavorID, out.Flavor = *w.FlavorID, names[*w.FlavorID]
	}
	return out
}

// APINotification is one message to a user.
type APINotification struct {
	ID        int64      `json:"id"`
	Message   string     `json:"message"`
	Link      string     `json:"link"`
	CreatedAt time.Time  `json:"created_at"`
	ReadAt    *time.Time `json:"read_at"`
}

func apiNotification(n *models.Notification) APINotification {
	return APINotification{ID: n.ID, Message: n.Message, Link: n.Link, CreatedAt: n.CreatedAt, ReadAt: n.ReadAt}
}

// APILedgerLine is one line of the ledger (a charge, credit or reversal).
type APILedgerLine struct {
	ID            int64     `json:"id"`
	Group         string    `json:"group"`
	WorkbenchID   string    `json:"workbench_id"`
	Resource      string    `json:"resource"`
	GPUModel      string    `json:"gpu_model"`
	PeriodStart   time.Time `json:"period_start"`
	PeriodEnd     time.Time `json:"period_end"`
	Seconds       int64     `json:"seconds"`
	QuantityMilli int64     `json:"quantity_milli"`
	RateMicros    int64     `json:"rate_micros"`
	AmountMicros  int64     `json:"amount_micros"`
	Reverses      *int64    `json:"reverses,omitempty"`
	Note          string    `json:"note,omitempty"`
	CreatedBy     string    `json:"created_by,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	// Tier is the price tier of the line's rate: "preemptible" for the GPU
	// units of a preemptible run (and their reversals), "" for standard
	// rates and for lines of no run (credits, home storage, bookings).
	Tier string `json:"tier"`
}

// apiLedgerLine gives the times in UTC, as the CSV exports do: the ledger
// is kept and split by the hour in UTC.
func apiLedgerLine(e *models.LedgerEntry) APILedgerLine {
	return APILedgerLine{ID: e.ID, Group: e.GroupName, WorkbenchID: e.WorkbenchID, Resource: e.Resource, GPUModel: e.GPUModel,
		PeriodStart: e.PeriodStart.UTC(), PeriodEnd: e.PeriodEnd.UTC(), Seconds: e.Seconds, QuantityMilli: e.QuantityMilli,
		RateMicros: e.RateMicros, AmountMicros: e.AmountMicros, Reverses: e.Reverses, Note: e.Note, CreatedBy: e.CreatedBy,
		CreatedAt: e.CreatedAt.UTC(), Tier: e.Tier}
}

// APIUsageLine is one line of GET /usage/lines: a ledger line as the
// credits and reversals answer it, with what /usage.csv adds (the
// workbench's name, the currency) and what a reader of everyone's lines
// or of a reversed one needs (the user's name, the reversal's id).
type APIUsageLine struct {
	APILedgerLine
	User      string `json:"user"`
	Workbench string `json:"workbench"`
	// ReversedBy is the id of the line that cancels this one, which may
	// be in a later month (a closed month's line is reversed dated now).
	ReversedBy *int64 `json:"reversed_by,omitempty"`
	Currency   string `json:"currency"`
}

// APIEgress is GET|PUT /admin/egress: the workbench network's outbound
// policy and whether it is in force.
type APIEgress struct {
	Mode      string   `json:"mode"`
	Allow     []string `json:"allow"`
	Enforced  bool     `json:"enforced"`
	Pending   bool     `json:"pending"`
	Problem   string   `json:"problem"`
	Bridge    string   `json:"bridge"`
	CheckedAt string   `json:"checked_at,omitempty"`
}

// APICalcShape is the shape an estimate priced.
type APICalcShape struct {
	GPUModel        string      `json:"gpu_model"`
	GPUCount        int         `json:"gpu_count"`
	CPUMilli        int64       `json:"cpu_milli"`
	MemoryGiB       json.Number `json:"memory_gib"`
	MemoryMiB       int64       `json:"memory_mib"`
	StorageMilliGiB int64       `json:"storage_milli_gib"`
}

// APICalcEstimate is POST /calculator/estimate: the cost here, per
// resource, and at cloud offers; money in micro-units plus text.
type APICalcEstimate struct {
	Currency           string              `json:"currency"`
	Flavor             string              `json:"flavor"`
	Shape              APICalcShape        `json:"shape"`
	Duration           string              `json:"duration"`
	Start              string              `json:"start"`
	Runs               int64               `json:"runs"`
	RunSeconds         int64               `json:"run_seconds"`
	BilledRunSeconds   int64               `json:"billed_run_seconds"`
	CalendarSeconds    int64               `json:"calendar_seconds"`
	MinChargeApplied   bool                `json:"min_charge_applied"`
	PerHourMicros      int64               `json:"per_hour_micros"`
	PerHour            string              `json:"per_hour"`
	PerDayMicros       int64               `json:"per_day_micros"`
	PerDay             string              `json:"per_day"`
	PerMonthMicros     int64               `json:"per_month_micros"`
	PerMonth           string              `json:"per_month"`
	ComputeTotalMicros int64               `json:"compute_total_micros"`
	StorageTotalMicros int64               `json:"storage_total_micros"`
	TotalMicros        int64               `json:"total_micros"`
	Total              string              `json:"total"`
	Query              string              `json:"query"`
	Lines              []estimateLineJSON  `json:"lines"`
	Cloud              []estimateOfferJSON `json:"cloud"`
	CloudLeftOut       map[string]int      `json:"cloud_left_out"`
}

// APICalcAnnual is the yearly cost of owning at one utilisation.
type APICalcAnnual struct {
	Utilization           float64 `json:"utilization"`
	EnergyKWhPerYear      float64 `json:"energy_kwh_per_year"`
	AnnualCostMicros      int64   `json:"annual_cost_micros"`
	AnnualCost            string  `json:"annual_cost"`
	OwnedPerGPUHourMicros int64   `json:"owned_per_gpu_hour_micros"`
	OwnedPerGPUHour       string  `json:"owned_per_gpu_hour"`
}

// APICalcBreakdown splits the annual cost of owning.
type APICalcBreakdown struct {
	DepreciationMicros int64 `json:"depreciation_micros"`
	EnergyMicros       int64 `json:"energy_micros"`
	ColocationMicros   int64 `json:"colocation_micros"`
	MaintenanceMicros  int64 `json:"maintenance_micros"`
	StaffMicros        int64 `json:"staff_micros"`
}

// APICalcSeries is one line of the TCO chart.
type APICalcSeries struct {
	Label        string  `json:"label"`
	Own          bool    `json:"own"`
	Estimate     bool    `json:"estimate"`
	PointsMicros []int64 `json:"points_micros"`
}

// APICalcChart is the TCO chart: cumulative cost by month.
type APICalcChart struct {
	Months []int           `json:"months"`
	Series []APICalcSeries `json:"series"`
}

// APICalcTCO is POST /calculator/tco (SPEC §8: owned_per_gpu_hour and,
// per offer, break_even_utilization).
type APICalcTCO struct {
	Currency              string            `json:"currency"`
	Inputs                map[string]string `json:"inputs"`
	GPUModel              string            `json:"gpu_model"`
	GPUsPerServer         int64             `json:"gpus_per_server"`
	Utilization           float64           `json:"utilization"`
	PeakKW                float64           `json:"peak_kw"`
	EnergyKWhPerYear      float64           `json:"energy_kwh_per_year"`
	AnnualCostMicros      int64             `json:"annual_cost_micros"`
	AnnualCost            string            `json:"annual_cost"`
	Breakdown             APICalcBreakdown  `json:"breakdown"`
	RunningPerMonthMicros int64             `json:"running_per_month_micros"`
	OwnedPerGPUHourMicros int64             `json:"owned_per_gpu_hour_micros"`
	OwnedPerGPUHour       string            `json:"owned_per_gpu_hour"`
	ByUtilization         []APICalcAnnual   `json:"by_utilization"`
	Offers                []tcoOfferJSON    `json:"offers"`
	Chart                 APICalcChart      `json:"chart"`
	TargetUtilization     float64           `json:"target_utilization"`
	// TargetOwnedPerGPUHourMicros is the owned cost per GPU-hour at the
	// target utilisation; the suggested rate is it less CPUMemoryShare
	// (0 when the share is the owned cost or more).
	TargetOwnedPerGPUHourMicros int64          `json:"target_owned_per_gpu_hour_micros"`
	CPUMemoryShare              APICalcShare   `json:"cpu_memory_share"`
	SuggestedRateMicros         int64          `json:"suggested_rate_micros"`
	SuggestedRate               string         `json:"suggested_rate"`
	ApplyModel                  string         `json:"apply_model"`
	CloudLeftOut                map[string]int `json:"cloud_left_out"`
	Query                       string         `json:"query"`
	Measured                    string         `json:"measured"`
}

// APICalcShare is what the price list charges a GPU-hour of a flavor for
// its CPU and memory (the flavor of the model with the smallest share;
// flavor "" and zeros when the model has none).
type APICalcShare struct {
	Flavor           string            `json:"flavor"`
	CPUCoresPerGPU   models.Millicores `json:"cpu_cores_per_gpu"`
	MemoryMiBPerGPU  int64             `json:"memory_mib_per_gpu"`
	PerGPUHourMicros int64             `json:"per_gpu_hour_micros"`
}

// APICloudPrice is one row of the cloud price catalog.
type APICloudPrice struct {
	ID          int64     `json:"id"`
	Provider    string    `json:"provider"`
	Offer       string    `json:"offer"`
	GPUModel    string    `json:"gpu_model"`
	GPUsInOffer int       `json:"gpus_in_offer"`
	Tier        string    `json:"tier"`
	Currency    string    `json:"currency"`
	PriceMicros int64     `json:"price_per_gpu_hour_micros"`
	AsOf        string    `json:"as_of"`
	Source      string    `json:"source"`
	Note        string    `json:"note"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func apiCloudPrice(p *models.CloudPrice) APICloudPrice {
	return APICloudPrice{ID: p.ID, Provider: p.Provider, Offer: p.Offer, GPUModel: p.GPUModel, GPUsInOffer: p.GPUsInOffer,
		Tier: p.Tier, Currency: p.Currency, PriceMicros: p.PriceMicros, AsOf: p.AsOf, Source: p.Source, Note: p.Note,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// APICalcDiscount is a derived tier's discount in basis points and whether
// an admin set it (else the default).
type APICalcDiscount struct {
	Bps int64 `json:"bps"`
	Set bool  `json:"set"`
}

// APICalcSettings is GET|PUT /admin/calculator/settings.
type APICalcSettings struct {
	Currency  string                     `json:"currency"`
	Discounts map[string]APICalcDiscount `json:"discounts"`
	// DiscountsBps are the discounts in force in the shape PUT takes, so
	// a script can read, change one and send it back.
	DiscountsBps        map[string]int64 `json:"discounts_bps"`
	ExchangeRatesMicros map[string]int64 `json:"exchange_rates_micros"`
	// ExchangeRates are the rates in force, shipped defaults included,
	// each with its date and source.
	ExchangeRates []APIExchangeRate `json:"exchange_rates"`
}

// APIExchangeRate is one exchange rate in force: one From is RateMicros/1e6
// To; PortalMicrosPerUnit converts Currency into the portal's currency.
type APIExchangeRate struct {
	Currency            string `json:"currency"`
	From                string `json:"from"`
	To                  string `json:"to"`
	RateMicros          int64  `json:"rate_micros"`
	PortalMicrosPerUnit int64  `json:"portal_micros_per_unit"`
	AsOf                string `json:"as_of"`
	Source              string `json:"source"`
	Default             bool   `json:"default"`
}

// APICloudPrices is GET /cloud-prices: the catalog and the settings.
type APICloudPrices struct {
	Currency string          `json:"currency"`
	Items    []APICloudPrice `json:"items"`
	Settings APICalcSettings `json:"settings"`
}

// APIRateApplied is POST /admin/calculator/apply-rate: the rate added.
type APIRateApplied struct {
	Added APIPriceRate `json:"added"`
	Rate  string       `json:"rate"`
}

// APIHealth is /healthz: status "ok", "degraded" (it serves, but its
// database cannot be written: database "not_writable", and a message) or
// "unavailable" (503, the database does not answer: the status alone). No
// error text: the endpoint is public.
type APIHealth struct {
	Status   string `json:"status"`
	Database string `json:"database,omitempty"` // "writable" or "not_writable"
	Message  string `json:"message,omitempty"`
}

// /healthz's words for a portal whose database cannot be written.
const (
	HealthDegraded    = "degraded"
	HealthNotWritable = "not_writable"
)

// APIWorkbenchTelemetry is GET /api/v1/workbenches/{id}/telemetry: what the
// workbench's GPU units do (docs/telemetry.md). Every figure NVML could
// not read is null and named in not_available, never 0.
type APIWorkbenchTelemetry struct {
	WorkbenchID string             `json:"workbench_id"`
	State       string             `json:"state"`
	Simulated   bool               `json:"simulated"`
	Units       []APIUnitTelemetry `json:"units"`
	Energy      APIWorkbenchEnergy `json:"energy"`
	// GPUIdleSince: every unit has been below the idle threshold since
	// then (null: some unit is busy or unreadable, or release is off).
	GPUIdleSince *time.Time `json:"gpu_idle_since"`
}

// APIUnitTelemetry is one unit (kind gpu|mig|slice) with its latest
// reading and its last hour, one point a minute, oldest first.
type APIUnitTelemetry struct {
	Kind          string `json:"kind"`
	UUID          string `json:"uuid"`
	GPUUUID       string `json:"gpu_uuid"`
	Profile       string `json:"profile,omitempty"`
	GPUInstanceID *int   `json:"gpu_instance_id"` // MIG only
	// EnergyShareBasis: how a MIG instance's or slice holder's share of
	// its GPU's measured energy is made; "" for a whole GPU (measured).
	EnergyShareBasis string           `json:"energy_share_basis"`
	Latest           *APIUnitReading  `json:"latest"`
	Series           []APIMinutePoint `json:"series"`
}

// APIUnitReading is a unit's newest reading. A MIG instance or slice holder
// has utilisation and memory of its own only; power, temperature and the
// rest are its GPU's and are not repeated here.
type APIUnitReading struct {
	At             time.Time `json:"at"`
	UtilPercent    *uint32   `json:"gpu_percent"`
	MemCopyPercent *uint32   `json:"memory_copy_percent"`
	MemUsedMiB     *uint64   `json:"memory_used_mib"`
	MemFreeMiB     *uint64   `json:"memory_free_mib"`
	PowerW         *float64  `json:"power_w"`
	TemperatureC   *uint32   `json:"temperature_c"`
	NotAvailable   []string  `json:"not_available"`
}

// APIMinutePoint is one minute of a unit's series: mean SM utilisation of
// the readable samples, peak memory, and energy (measured, or the unit's
// share); null where nothing was read in the minute.
type APIMinutePoint struct {
	Minute      time.Time `json:"minute"`
	UtilPercent *float64  `json:"gpu_percent"`
	MemUsedMiB  *int64    `json:"memory_used_mib"`
	EnergyMJ    *int64    `json:"energy_mj"`
}

// APIWorkbenchEnergy is the measured energy booked to the workbench: this
// run's and every run's, in mJ (null: nothing measured, "not available").
// share_mj is the part that is a share of a MIG or shared GPU's energy;
// run_cost_micros is informational (electricity price set), never charged.
type APIWorkbenchEnergy struct {
	RunMJ         *int64 `json:"run_mj"`
	RunShareMJ    int64  `json:"run_share_mj"`
	TotalMJ       *int64 `json:"total_mj"`
	TotalShareMJ  int64  `json:"total_share_mj"`
	RunCostMicros *int64 `json:"run_cost_micros"`
	Currency      string `json:"currency"`
}

// APIUtilisation is GET /api/v1/admin/utilisation (and `workbench gpus
// --utilisation --json`): the utilisation and idle-cost dashboard's data
// over [from, to) by bucket (day, week, month), GPU model, user, group,
// whole GPU and unit. Costs are reported, never charged (SPEC §6 rule 9).
type APIUtilisation struct {
	From                 time.Time `json:"from"`
	To                   time.Time `json:"to"`
	Bucket               string    `json:"bucket"`
	Currency             string    `json:"currency"`
	IdleThresholdPercent uint32    `json:"idle_threshold_percent"`
	// ElectricityPricePerKWhMicros is the admin's price (null: none set,
	// and energy rows have no cost).
	ElectricityPricePerKWhMicros *int64           `json:"electricity_price_per_kwh_micros"`
	Total                        APIUtilRow       `json:"total"`
	Buckets                      []APIUtilRow     `json:"buckets"`
	ByModel                      []APIUtilRow     `json:"by_model"`
	ByUser                       []APIUtilRow     `json:"by_user"`
	ByGroup                      []APIUtilRow     `json:"by_group"`
	TopIdle                      []APIUtilRow     `json:"top_idle"`
	ByGPU                        []APIUtilRow     `json:"by_gpu"`
	ByUnit                       []APIUnitUtilRow `json:"by_unit"`
	// RunningWorkbenches are the running workbenches with their units'
	// last hour, one point a minute (sparklines; the API only: the CLI
	// has no live sampler and leaves it out).
	RunningWorkbenches []APIWorkbenchSparklines `json:"running_workbenches,omitempty"`
}

// APIWorkbenchSparklines is one running workbench's units and their last
// hour (as in its telemetry), for the utilisation dashboard.
type APIWorkbenchSparklines struct {
	ID    string             `json:"id"`
	Name  string             `json:"name"`
	User  string             `json:"user"`
	Units []APIUnitTelemetry `json:"units"`
}

// APIUtilRow is one row of the dashboard. Hours are GPU-hours (a unit
// row's: unit-hours). held_idle is utilisation-weighted (a minute at 25%
// is ¾ idle); held_below_threshold counts whole held minutes whose mean
// SM utilisation was under idle_threshold_percent. energy_mj is null where
// nothing was measured (never 0 for "not available").
type APIUtilRow struct {
	Key                          string     `json:"key"`
	Start                        *time.Time `json:"start,omitempty"`
	Model                        string     `json:"model,omitempty"`
	AvailableHours               float64    `json:"available_hours"`
	AllocatedHours               float64    `json:"allocated_hours"`
	BusyHours                    float64    `json:"busy_hours"`
	HeldIdleHours                float64    `json:"held_idle_hours"`
	HeldUnreadHours              float64    `json:"held_unread_hours"`
	HeldBelowThresholdHours      float64    `json:"held_below_threshold_hours"`
	UsedPercent                  *int       `json:"used_percent"`
	UnheldCostMicros             int64      `json:"unheld_cost_micros"`
	HeldIdleCostMicros           int64      `json:"held_idle_cost_micros"`
	HeldBelowThresholdCostMicros int64      `json:"held_below_threshold_cost_micros"`
	EnergyMJ                     *int64     `json:"energy_mj"`
	EnergyCostMicros             *int64     `json:"energy_cost_micros"`
}

// APIUnitUtilRow is a MIG instance (over all its holders) or a shared
// slice's holder.
type APIUnitUtilRow struct {
	Kind     string `json:"kind"`
	UnitUUID string `json:"unit_uuid"`
	GPUUUID  string `json:"gpu_uuid"`
	Profile  string `json:"profile,omitempty"`
	Holder   string `json:"holder,omitempty"`
	APIUtilRow
}

// APIStateEvent is the data of each `event: state` message on
// GET /workbenches/{id}/events, the live updates the workbench page follows
// (static/js/app.js reads state, progress and error): the first message is
// the stored state, then one per change. error is set only while a stop
// has failed (the state stays stopping).
type APIStateEvent struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Progress int    `json:"progress"`
	Reason   string `json:"reason"`
	// WaitingFor is APIWorkbench's waiting_for, so that the page shows a
	// Pod Kubernetes holds as queued while the events arrive.
	WaitingFor string `json:"waiting_for,omitempty"`
	Error      string `json:"error,omitempty"`
	// Yielding comes with a preemption notice (true) and its rescission
	// (false), so the page shows or drops the notice at once.
	Yielding *bool `json:"yielding,omitempty"`
	// StopNotRecorded is APIWorkbench's: the first event of a workbench
	// stopped without a record yet; the event of its recording has none,
	// and the page reloads to drop its notice.
	StopNotRecorded bool      `json:"stop_not_recorded,omitempty"`
	At              time.Time `json:"at"`
}

func apiStateEvent(u orchestrator.Update) APIStateEvent {
	return APIStateEvent{ID: u.ID, State: u.State, Progress: u.Progress, Reason: u.Reason,
		WaitingFor: orchestrator.WaitingFor(u.State, u.Reason), Error: u.Error, Yielding: u.Yielding, At: u.At}
}

// APIReservation is a booking (issue 12 §4): units of one kind (gpu: whole
// GPUs of gpu_model; mig: instances of mig_profile on GPUs of gpu_model;
// slice: slices of the shared GPUs of gpu_model) over [starts_at, ends_at).
// User is "another user" (and note, created_by empty) for people other
// than the booker and administrators.
type APIReservation struct {
	ID            int64      `json:"id"`
	User          string     `json:"user"`
	GPUModel      string     `json:"gpu_model"`
	UnitKind      string     `json:"unit_kind"`
	MIGProfile    string     `json:"mig_profile"`
	Label         string     `json:"label"`
	Units         int        `json:"units"`
	StartsAt      time.Time  `json:"starts_at"`
	EndsAt        time.Time  `json:"ends_at"`
	Note          string     `json:"note"`
	CreatedBy     string     `json:"created_by"`
	CreatedAt     time.Time  `json:"created_at"`
	ReleasedAt    *time.Time `json:"released_at"`
	ReleaseReason string     `json:"release_reason"`
	Active        bool       `json:"active"`
	// Group is the group whose members may use it ("" for one user's).
	Group string `json:"group"`
	// forViewer: the viewer may use its units (models.Reservation.For);
	// the pool page offers a launch with it.
	forViewer bool
}

func apiReservation(r *models.Reservation, user string, now time.Time) APIReservation {
	return APIReservation{ID: r.ID, User: user, Group: r.GroupName, GPUModel: r.GPUModel, UnitKind: r.Kind(), MIGProfile: r.MIGProfile, Label: r.UnitLabel(),
		Units: r.Units, StartsAt: r.StartsAt, EndsAt: r.EndsAt, Note: r.Note, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt,
		ReleasedAt: r.ReleasedAt, ReleaseReason: r.ReleaseReason, Active: r.ReleasedAt == nil && !now.Before(r.StartsAt) && now.Before(r.EndsAt)}
}

// APIReservationSettings are the admin's reservation settings: whether
// reserved-but-unused time is billed (default false).
type APIReservationSettings struct {
	BillUnused bool `json:"bill_unused"`
}

// APIReservationCap is one scope's cap on booked unit-hours per calendar
// week (Monday 00:00 UTC); subject is the user's or group's name.
type APIReservationCap struct {
	Scope            string    `json:"scope"`
	SubjectID        int64     `json:"subject_id"`
	UnitHoursPerWeek int64     `json:"unit_hours_per_week"`
	UpdatedBy        string    `json:"updated_by"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// APIReservedUnused is one user's line of the reserved-but-unused report
// over [from, to): bookings that overlap it (each counted whole), the
// unit-hours they held, used and unused, and what was billed for them.
type APIReservedUnused struct {
	User              string `json:"user"`
	Reservations      int    `json:"reservations"`
	ReservedUnitHours string `json:"reserved_unit_hours"`
	UsedUnitHours     string `json:"used_unit_hours"`
	UnusedUnitHours   string `json:"unused_unit_hours"`
	UnusedUnitSeconds int64  `json:"unused_unit_seconds"`
	BilledMicros      int64  `json:"billed_micros"`
	Unsettled         int    `json:"unsettled"`
}

// APIReservedUnusedReport is the report with its period and setting.
type APIReservedUnusedReport struct {
	From       time.Time           `json:"from"`
	To         time.Time           `json:"to"`
	BillUnused bool                `json:"bill_unused"`
	Items      []APIReservedUnused `json:"items"`
}

// APISimulation is the policy table of a replay of the last days of real
// GPU usage (GET /api/v1/admin/simulate; `workbench simulate
// --from-ledger`): the server simulated and one row per policy.
type APISimulation struct {
	Model         string             `json:"model"`
	GPUs          int                `json:"gpus"`
	SharedGPUs    int                `json:"shared_gpus"`
	Slices        int                `json:"slices"`
	MIG           []string           `json:"mig"`
	Days          int                `json:"days"`
	Engine        string             `json:"engine"`
	Jobs          int                `json:"jobs"`
	WindowSeconds int64              `json:"window_seconds"`
	Rows          []APISimulationRow `json:"rows"`
}

// APISimulationRow is one policy's line: utilisation (GPU-hours held ÷
// available) and served demand in percent, rejected (refused or expired)
// and preempted runs, work lost to preemption, waits per priority class,
// and cost per user at a flat rate (micro-units).
type APISimulationRow struct {
	Policy            string                       `json:"policy"`
	UtilisationPct    float64                      `json:"utilisation_pct"`
	ServedPct         float64                      `json:"served_pct"`
	BusyGPUHours      float64                      `json:"busy_gpu_hours"`
	AvailableGPUHours float64                      `json:"available_gpu_hours"`
	Rejected          int                          `json:"rejected"`
	Preempted         int                          `json:"preempted"`
	LostGPUHours      float64                      `json:"lost_gpu_hours"`
	Unfinished        int                          `json:"unfinished"`
	Waits             map[string]APISimulationWait `json:"waits"`
	CostMicros        map[string]int64             `json:"cost_micros"`
}

// APISimulationWait is the waits of a priority class's jobs that started.
type APISimulationWait struct {
	Jobs       int   `json:"jobs"`
	P50Seconds int64 `json:"p50_seconds"`
	P95Seconds int64 `json:"p95_seconds"`
}

// APIQueueMove answers a reorder: the position set (within the priority
// class: clamped to its range), and the workbench's state and position
// after the drain that followed (it may have started).
type APIQueueMove struct {
	ID            string `json:"id"`
	Position      int    `json:"position"`
	State         string `json:"state"`
	QueuePosition int    `json:"queue_position"`
}

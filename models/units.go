package models

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"gorm.io/gorm"

	"workbench/models/pricing"
)

// Unit kinds a flavor asks for (issue 12 §1). They double as the pricing
// resource of the unit (per GPU-hour, per MIG profile-hour, per slice-hour).
const (
	UnitGPU   = pricing.GPU   // whole GPUs of a model
	UnitMIG   = pricing.MIG   // MIG instances of a profile, by MIG UUID
	UnitSlice = pricing.Slice // one slice of a GPU an admin shares in N
)

// Unit is one thing a workbench holds. UUID is the GPU UUID (gpu, slice) or
// the MIG UUID (mig); GPUUUID is always the physical GPU it lies on.
type Unit struct {
	Kind    string `json:"kind"`
	UUID    string `json:"uuid"`
	Profile string `json:"profile"`         // MIG profile, e.g. "1g.10gb"; "" for a whole GPU or a slice (SPEC fixes the name: always present)
	Slice   *int   `json:"slice,omitempty"` // slice number on a shared GPU
	GPUUUID string `json:"gpu_uuid"`
	Model   string `json:"gpu_model"`
}

// DeviceID is what the container's device request names for this unit:
// the MIG UUID for an instance, the whole GPU otherwise (a slice shares it).
func (u Unit) DeviceID() string { return u.UUID }

// DeviceIDs lists the device IDs of units, each once, in order.
func DeviceIDs(units []Unit) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, u := range units {
		if id := u.DeviceID(); !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// GPUNeed is what a launch asks of the GPU pool: Count units of Kind (whole
// GPUs of Model, MIG instances of Profile, or slices of shared GPUs of
// Model), chosen from Candidates in the order to prefer them. Candidates are
// GPU UUIDs (gpu, slice) or MIG UUIDs (mig, with Parents naming each one's
// GPU). Units already bound are skipped inside the transaction.
type GPUNeed struct {
	Kind       string // "" means UnitGPU
	Model      string
	Profile    string
	Count      int
	Candidates []string
	Parents    map[string]string // MIG UUID → GPU UUID
	// Structural is how many units of the kind the server has at all, in
	// service or not: GPUs of Model not in MIG mode (shared ones too: a
	// queued launch may take them whole), MIG instances of Profile, or
	// the slices of the shared GPUs of Model. Only a change of the
	// server's layout (or an admin sharing a GPU) changes it (NeverFits).
	Structural int
	// Lend lists, for whole GPUs, the shared GPUs of Model (healthy,
	// undrained, not in MIG mode) a queued launch may take whole when it
	// has claimed them (QueueTx.Claim) and no slice of them is bound.
	Lend []string
	// claims are the shared GPUs the workbench being placed claimed
	// (QueueTx.Place sets them from its row).
	claims []string
}

func (n GPUNeed) kind() string {
	if n.Kind == "" {
		return UnitGPU
	}
	return n.Kind
}

// NeverFits reports whether the need asks for more whole GPUs, MIG
// instances or slices than the server has at all (Structural: drained and
// unhealthy ones count, they come back; GPUs split into MIG instances do
// not count as whole ones; a slice needs a GPU of its model shared), so no
// wait would place it.
func (n GPUNeed) NeverFits() bool {
	return n.Count > 0 && n.Count > n.Structural
}

// NoCapacityError is a refused allocation; it says what is free.
type NoCapacityError struct {
	Kind    string
	Model   string
	Profile string
	Want    int
	Free    int
}

func (e *NoCapacityError) Error() string {
	switch e.Kind {
	case UnitMIG:
		return Reasonf("not enough free MIG instances: %d × %s requested, %d free", e.Want, e.Profile, e.Free)
	case UnitSlice:
		return Reasonf("no free slice of a shared %s: %d requested, %d free", e.Model, e.Want, e.Free)
	}
	return Reasonf("not enough free GPUs: %d × %s requested, %d free", e.Want, e.Model, e.Free)
}

type gpuAllocation struct {
	UnitID      string `gorm:"column:unit_id;primaryKey"`
	Kind        string
	GPUUUID     string `gorm:"column:gpu_uuid"`
	Profile     string
	Slice       int
	WorkbenchID string
	GPUModel    string `gorm:"column:gpu_model"`
	AllocatedAt time.Time
}

func (gpuAllocation) TableName() string { return "gpu_allocations" }

func (a gpuAllocation) unit() Unit {
	u := Unit{Kind: a.Kind, UUID: a.UnitID, Profile: a.Profile, GPUUUID: a.GPUUUID, Model: a.GPUModel}
	if a.Kind == UnitSlice {
		k := a.Slice
		u.UUID, u.Slice = a.GPUUUID, &k
	}
	return u
}

// SliceUnitID is slice k of a shared GPU's key in the allocations (and in
// orphan_units): "<GPU UUID>/slice/<k>". One writer of the format, so the
// pool's tables and the store's cannot drift apart.
func SliceUnitID(gpuUUID string, k int) string { return fmt.Sprintf("%s/slice/%d", gpuUUID, k) }

// allocate binds need's units to wbID inside the launch transaction (BEGIN
// IMMEDIATE: no other launch reads between this read and these inserts).
// Everything that decides what is free is read here, in the transaction —
// bindings and which GPUs are shared — so a GPU an admin just shared is
// never also handed out whole, nor a slice of one just unshared.
func allocate(tx *gorm.DB, wbID string, need GPUNeed, now time.Time) ([]Unit, error) {
	if need.Count == 0 {
		return nil, nil
	}
	b, err := readBindings(tx)
	if err != nil {
		return nil, err
	}
	rows, err := b.free(need, true)
	if err != nil {
		return nil, err
	}
	if need.kind() == UnitGPU && len(need.Lend) > 0 {
		// The shared GPUs this launch claimed, once no slice of them is
		// bound, go first: their holders were preempted for it.
		var lent []gpuAllocation
		for _, g := range need.Lend {
			if slices.Contains(need.claims, g) && (b.claimed[g] == "" || b.claimed[g] == wbID) && b.busy[g] == 0 && !b.drained[g] {
				lent = append(lent, gpuAllocation{UnitID: g, Kind: UnitGPU, GPUUUID: g})
			}
		}
		rows = append(lent, rows...)
	}
	if len(rows) < need.Count {
		return nil, &NoCapacityError{Kind: need.kind(), Model: need.Model, Profile: need.Profile, Want: need.Count, Free: len(rows)}
	}
	out := make([]Unit, 0, need.Count)
	for _, r := range rows[:need.Count] {
		r.WorkbenchID, r.GPUModel, r.AllocatedAt = wbID, need.Model, now
		if err := tx.Create(&r).Error; err != nil {
			return nil, err
		}
		out = append(out, r.unit())
	}
	return out, nil
}

// freeUnits counts the free units of need's kind among its candidates
// (every free slice of every shared candidate: the queue's capacity).
func freeUnits(tx *gorm.DB, need GPUNeed) (int, error) {
	b, err := readBindings(tx)
	if err != nil {
		return 0, err
	}
	rows, err := b.free(need, false)
	return len(rows), err
}

// LaunchableUnits counts the units of need's kind among its candidates a
// launch could be given now, by allocate's rules (one slice per GPU): what
// a "notify me when this flavor can start" watch compares with the
// flavor's count. A hint read outside any launch's transaction.
func (s *Store) LaunchableUnits(ctx context.Context, need GPUNeed) (int, error) {
	b, err := readBindings(s.db.WithContext(ctx))
	if err != nil {
		return 0, err
	}
	rows, err := b.free(need, true)
	return len(rows), err
}

// bindings is what is bound and which GPUs are shared, read in the
// transaction.
type bindings struct {
	taken  map[string]bool
	busy   map[string]int // GPU UUID → units bound on it
	whole  map[string]bool
	slices map[string]int
	// claimed maps a shared GPU a queued whole-GPU launch is taking whole
	// to that launch: none of its slices is handed out meanwhile.
	claimed map[string]string
	// drained GPUs, as the transaction reads them: the candidates were
	// read before it, and an admin's drain in between must still hold.
	drained map[string]bool
}

func readBindings(tx *gorm.DB) (*bindings, error) {
	var held []gpuAllocation
	if err := tx.Select("unit_id", "kind", "gpu_uuid").Find(&held).Error; err != nil {
		return nil, err
	}
	b := &bindings{taken: make(map[string]bool, len(held)), busy: map[string]int{}, whole: map[string]bool{}}
	for _, a := range held {
		b.taken[a.UnitID] = true
		b.busy[a.GPUUUID]++
		b.whole[a.GPUUUID] = b.whole[a.GPUUUID] || a.Kind == UnitGPU
	}
	// What containers no record names hold is taken as well (their GPUs
	// are in use until the orphan sweep removes them).
	var orphans []OrphanUnit
	if err := tx.Select("unit_id", "kind", "gpu_uuid").Find(&orphans).Error; err != nil {
		return nil, err
	}
	for _, o := range orphans {
		b.taken[o.UnitID] = true
		b.busy[o.GPUUUID]++
		b.whole[o.GPUUUID] = b.whole[o.GPUUUID] || o.Kind == UnitGPU
	}
	var err error
	if b.slices, err = sharedSlicesTx(tx); err != nil {
		return nil, err
	}
	if b.drained, err = drainedTx(tx); err != nil {
		return nil, err
	}
	b.claimed, err = claimedTx(tx)
	return b, err
}

// drainedTx is the set of drained GPUs.
func drainedTx(tx *gorm.DB) (map[string]bool, error) {
	var uuids []string
	if err := tx.Model(&GPUState{}).Where("drained").Pluck("uuid", &uuids).Error; err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(uuids))
	for _, u := range uuids {
		out[u] = true
	}
	return out, nil
}

// claimedTx maps each shared GPU claimed by a queued launch to it.
func claimedTx(tx *gorm.DB) (map[string]string, error) {
	var rows []struct {
		ID        string
		ClaimGPUs string `gorm:"column:claim_gpus"`
	}
	if err := tx.Model(&Workbench{}).Select("id", "claim_gpus").
		Where("state = ? AND deleted_at IS NULL AND claim_gpus <> ''", StateQueued).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range rows {
		for _, g := range splitClaims(r.ClaimGPUs) {
			out[g] = r.ID
		}
	}
	return out, nil
}

// free lists the units need could be given, in the order to bind them.
// onePerGPU keeps one slice per GPU (a launch: two slices of one flavor on
// one GPU would be one bigger slice); without it every free slice counts.
func (b *bindings) free(need GPUNeed, onePerGPU bool) ([]gpuAllocation, error) {
	var rows []gpuAllocation
	switch need.kind() {
	case UnitGPU:
		for _, u := range need.Candidates {
			if b.busy[u] == 0 && b.slices[u] == 0 && !b.drained[u] {
				rows = append(rows, gpuAllocation{UnitID: u, Kind: UnitGPU, GPUUUID: u})
			}
		}
	case UnitMIG:
		for _, u := range need.Candidates {
			parent := need.Parents[u]
			if !b.taken[u] && parent != "" && !b.whole[parent] && !b.drained[parent] {
				rows = append(rows, gpuAllocation{UnitID: u, Kind: UnitMIG, GPUUUID: parent, Profile: need.Profile})
			}
		}
	case UnitSlice:
		// Spread: the least crowded shared GPU first (no memory isolation,
		// so fewer neighbours is the better slice), then candidate order.
		order := append([]string(nil), need.Candidates...)
		sort.SliceStable(order, func(i, j int) bool { return b.busy[order[i]] < b.busy[order[j]] })
		for _, g := range order {
			if b.whole[g] || b.claimed[g] != "" || b.drained[g] {
				continue
			}
			for k := 0; k < b.slices[g]; k++ {
				if !b.taken[SliceUnitID(g, k)] {
					rows = append(rows, gpuAllocation{UnitID: SliceUnitID(g, k), Kind: UnitSlice, GPUUUID: g, Slice: k})
					if onePerGPU {
						break
					}
				}
			}
		}
	default:
		return nil, fmt.Errorf("unknown unit kind %q", need.Kind)
	}
	return rows, nil
}

// sharedSlicesTx reads how many slices each shared GPU has.
func sharedSlicesTx(tx *gorm.DB) (map[string]int, error) {
	var rows []GPUState
	if err := tx.Select("uuid", "shared_slices").Where("shared_slices > 0").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.UUID] = r.SharedSlices
	}
	return out, nil
}

// setUnits fills the unit fields of wb from what it holds.
func (w *Workbench) setUnits(units []Unit) {
	w.Units = append([]Unit{}, units...)
	w.GPUs = []string{}
	w.Shared = false
	seen := map[string]bool{}
	for _, u := range units {
		if !seen[u.GPUUUID] {
			seen[u.GPUUUID] = true
			w.GPUs = append(w.GPUs, u.GPUUUID)
		}
		w.Shared = w.Shared || u.Kind == UnitSlice
	}
	sort.Strings(w.GPUs)
}

// ReleaseGPUs unbinds every unit of a workbench.
func (s *Store) ReleaseGPUs(ctx context.Context, wbID string) error {
	return s.db.WithContext(ctx).Where("workbench_id = ?", wbID).Delete(&gpuAllocation{}).Error
}

// GPUAllocations maps each GPU bound whole to its workbench id.
func (s *Store) GPUAllocations(ctx context.Context) (map[string]string, error) {
	var rows []gpuAllocation
	if err := s.db.WithContext(ctx).Where("kind = ?", UnitGPU).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.GPUUUID] = r.WorkbenchID
	}
	return out, nil
}

// UnitHolder is one bound unit and its workbench, for the pool view.
type UnitHolder struct {
	Unit
	WorkbenchID string
}

// UnitAllocations lists every bound unit with its workbench, ordered by
// GPU, then unit.
func (s *Store) UnitAllocations(ctx context.Context) ([]UnitHolder, error) {
	var rows []gpuAllocation
	if err := s.db.WithContext(ctx).Order("gpu_uuid, unit_id").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]UnitHolder, len(rows))
	for i, r := range rows {
		out[i] = UnitHolder{Unit: r.unit(), WorkbenchID: r.WorkbenchID}
	}
	return out, nil
}

func (s *Store) attachGPUs(ctx context.Context, wbs []Workbench) error {
	if len(wbs) == 0 {
		return nil
	}
	ids := make([]string, len(wbs))
	idx := make(map[string]int, len(wbs))
	for i, w := range wbs {
		ids[i] = w.ID
		idx[w.ID] = i
		wbs[i].GPUs, wbs[i].Units = []string{}, []Unit{}
	}
	var rows []gpuAllocation
	if err := s.db.WithContext(ctx).Where("workbench_id IN ?", ids).Order("gpu_uuid, unit_id").Find(&rows).Error; err != nil {
		return err
	}
	units := map[string][]Unit{}
	for _, r := range rows {
		units[r.WorkbenchID] = append(units[r.WorkbenchID], r.unit())
	}
	for id, us := range units {
		wbs[idx[id]].setUnits(us)
	}
	return nil
}

package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// StorageUsedMilliGiB is what userID's home volumes held at their last
// metering, in milli-GiB: the sum of their open storage intervals (the
// sizes storage is billed at). A volume the portal removed has its
// interval closed, so deleting a home's data counts at once.
func (s *Store) StorageUsedMilliGiB(ctx context.Context, userID int64) (int64, error) {
	return storageUsed(s.rdb.WithContext(ctx), userID)
}

func storageUsed(db *gorm.DB, userID int64) (int64, error) {
	var used int64
	err := db.Raw("SELECT COALESCE(SUM(size_milli_gib), 0) FROM storage_intervals WHERE user_id = ? AND ended_at IS NULL", userID).Scan(&used).Error
	return used, err
}

// StorageOver says whether usedMilliGiB is over the quota's storage limit.
// Over means more than the limit: a home exactly at it may still launch.
func StorageOver(lim Limits, usedMilliGiB int64) bool {
	return lim.MaxStorageGiB != nil && usedMilliGiB > *lim.MaxStorageGiB*1000
}

// GiBText writes milli-GiB as GiB with two decimals ("12.35"), to the
// nearest hundredth: metering's milli-GiB round bytes up, and 3 GiB
// rounded up again read "3.01".
func GiBText(milli int64) string {
	c := (milli + 5) / 10
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}

// The ways out of a storage refusal (QuotaError.WayOut, the API's
// error.way_out): over the limit only a workbench without GPU starts, so
// that its owner can open the home and delete files.
const (
	// WayOutStartWithoutGPU: start this stopped workbench as its
	// flavor's CPU-only twin (QuotaError.CPUFlavor).
	WayOutStartWithoutGPU = "start_without_gpu"
	// WayOutLaunchWithoutGPU: launch a workbench of the flavor without
	// GPU QuotaError.CPUFlavor names; it mounts the same home.
	WayOutLaunchWithoutGPU = "launch_without_gpu"
	// WayOutAskAdmin: no flavor without GPU is open to the user; an
	// administrator can add one (or raise the limit), or the user deletes
	// a workbench's data.
	WayOutAskAdmin = "ask_admin"
	// WayOutDeleteFiles: the workbench already runs without GPU; files
	// deleted in it count at the next metering.
	WayOutDeleteFiles = "delete_files"
)

// storageQuotaError is the refusal of a launch or start with GPUs by the
// storage limit, naming the way out (storageWayOut). Not Final: deleting
// files or a home brings the user back under, and it is no concurrency
// limit a queued launch could wait out either (WaitableQuota), so a
// launch is refused rather than queued.
func storageQuotaError(lim Limits, used int64, way, cpuFlavor string) *QuotaError {
	held, limit := GiBText(used), *lim.MaxStorageGiB
	over := GiBText(used - limit*1000)
	qe := &QuotaError{Limit: "max_storage_gib", WayOut: way, CPUFlavor: cpuFlavor}
	switch way {
	case WayOutStartWithoutGPU:
		qe.Message = Reasonf("quota exceeded: your home storage holds %s GiB, %s GiB over your limit of %d GiB, so only workbenches without GPU start; start this one without GPU (\"Start without GPU\", or mode=cpu through the API; it runs as flavor %s, same home), delete files until the home is under the limit, then start it with its GPUs",
			held, over, limit, cpuFlavor)
	case WayOutLaunchWithoutGPU:
		qe.Message = Reasonf("quota exceeded: your home storage holds %s GiB, %s GiB over your limit of %d GiB, so only workbenches without GPU start; launch one of flavor %s (no GPU, same home), delete files until the home is under the limit, then try again; or delete a workbench's data",
			held, over, limit, cpuFlavor)
	case WayOutDeleteFiles:
		qe.Message = Reasonf("quota exceeded: your home storage holds %s GiB, %s GiB over your limit of %d GiB, so only workbenches without GPU start; keep working in this one without GPU, delete files until the home is under the limit (the next metering counts them), then restart it with its GPUs",
			held, over, limit)
	default:
		qe.Message = Reasonf("quota exceeded: your home storage holds %s GiB, %s GiB over your limit of %d GiB, and no flavor without GPU is open to you to start one and delete files; ask an administrator for one (or for a higher limit), or delete a workbench's data",
			held, over, limit)
	}
	return qe
}

// StorageRefusal is the refusal CheckLaunchQuota would give ask for the
// storage limit alone, or nil: for checks made before something is undone
// for a start with GPUs (RestartWithGPUs stops a CPU-only run first).
// running marks a workbench that already runs without GPU: its way out is
// deleting files in it (WayOutDeleteFiles).
func (s *Store) StorageRefusal(ctx context.Context, ask LaunchAsk, running bool) (*QuotaError, error) {
	db := s.rdb.WithContext(ctx)
	lim, err := effectiveQuota(db, ask.UserID)
	if err != nil || lim.MaxStorageGiB == nil || ask.GPUs == 0 {
		return nil, err
	}
	used, err := storageUsed(db, ask.UserID)
	if err != nil || !StorageOver(lim, used) {
		return nil, err
	}
	if running {
		return storageQuotaError(lim, used, WayOutDeleteFiles, ""), nil
	}
	way, cpu, err := storageWayOut(db, lim, ask)
	if err != nil {
		return nil, err
	}
	return storageQuotaError(lim, used, way, cpu), nil
}

// storageWayOut finds what a user over the storage limit can start to
// clean up: for the start of a stopped workbench (ask.Start), its
// flavor's CPU-only twin; else a flavor without GPU the quota allows,
// the twin of the asked flavor first. None: WayOutAskAdmin.
func storageWayOut(db *gorm.DB, lim Limits, ask LaunchAsk) (way, flavor string, err error) {
	if ask.Start && ask.Flavor != "" {
		var twin []string
		if err := db.Raw(`SELECT t.name FROM flavors f JOIN flavors t ON t.id = f.cpu_twin_id
			WHERE f.name = ? AND f.gpu_count > 0 AND t.enabled AND t.gpu_count = 0 LIMIT 1`, ask.Flavor).Scan(&twin).Error; err != nil {
			return "", "", err
		}
		if len(twin) == 1 {
			return WayOutStartWithoutGPU, twin[0], nil
		}
	}
	var names []string
	if err := db.Raw(`SELECT name FROM flavors WHERE enabled AND gpu_count = 0
		ORDER BY id = (SELECT cpu_twin_id FROM flavors WHERE name = ?) DESC, name`, ask.Flavor).Scan(&names).Error; err != nil {
		return "", "", err
	}
	for _, n := range names {
		if lim.AllowedFlavors == nil || contains(lim.AllowedFlavors, n) {
			return WayOutLaunchWithoutGPU, n, nil
		}
	}
	return WayOutAskAdmin, "", nil
}

// StorageQuotaState is one user's home storage against their limit, for
// the metering pass that tells owners who went over.
type StorageQuotaState struct {
	UserID       int64
	UsedMilliGiB int64
	Limits       Limits
	// Told: the owner was told they are over and has not been back under
	// since (users.storage_over_at).
	Told bool
}

// StorageQuotaStates lists the users with a measured home volume or a
// standing "over" mark (whose home may be gone since), with their use and
// effective limits.
func (s *Store) StorageQuotaStates(ctx context.Context) ([]StorageQuotaState, error) {
	db := s.rdb.WithContext(ctx)
	// Without a storage limit anywhere no one can be over: only standing
	// marks are read (to be cleared), not every user with a home, each
	// with its own quota lookup, every metering pass.
	var limited bool
	if err := db.Raw("SELECT EXISTS(SELECT 1 FROM quotas WHERE max_storage_gib IS NOT NULL)").Scan(&limited).Error; err != nil {
		return nil, err
	}
	var rows []struct {
		UserID int64
		Used   int64
		Told   bool
	}
	if err := db.Raw(`SELECT u.id AS user_id, COALESCE(SUM(si.size_milli_gib), 0) AS used, u.storage_over_at IS NOT NULL AS told
		FROM users u LEFT JOIN storage_intervals si ON si.user_id = u.id AND si.ended_at IS NULL
		WHERE u.storage_over_at IS NOT NULL OR (? AND si.id IS NOT NULL) GROUP BY u.id ORDER BY u.id`, limited).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]StorageQuotaState, 0, len(rows))
	for _, r := range rows {
		lim, err := effectiveQuota(db, r.UserID)
		if err != nil {
			return nil, err
		}
		out = append(out, StorageQuotaState{UserID: r.UserID, UsedMilliGiB: r.Used, Limits: lim, Told: r.Told})
	}
	return out, nil
}

// MarkStorageOver records whether userID's home storage is over their
// limit. It reports true only for the call that set the mark, so two
// passes noticing the same crossing tell the owner once.
func (s *Store) MarkStorageOver(ctx context.Context, userID int64, over bool, t time.Time) (crossed bool, err error) {
	if !over {
		return false, s.db.WithContext(ctx).Exec("UPDATE users SET storage_over_at = NULL WHERE id = ? AND storage_over_at IS NOT NULL", userID).Error
	}
	res := s.db.WithContext(ctx).Exec("UPDATE users SET storage_over_at = ? WHERE id = ? AND storage_over_at IS NULL", t.UTC(), userID)
	return res.RowsAffected == 1, res.Error
}

// StorageUsedOf is StorageUsedMilliGiB of each of userIDs (a page of an
// admin list) in one statement, searched by user through the index
// storage_intervals_unsettled_user (its condition is repeated for SQLite
// to take it). A user with no measured home is absent.
func (s *Store) StorageUsedOf(ctx context.Context, userIDs []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		UserID int64
		Used   int64
	}
	err := s.rdb.WithContext(ctx).Raw(`SELECT user_id, SUM(size_milli_gib) AS used FROM storage_intervals
		WHERE user_id IN ? AND (ended_at IS NULL OR settled = 0) AND ended_at IS NULL GROUP BY user_id`, userIDs).Scan(&rows).Error
	for _, r := range rows {
		out[r.UserID] = r.Used
	}
	return out, err
}

// EffectiveQuotasOf is EffectiveQuota of each of userIDs (a page of an
// admin list) in a fixed number of statements, not one lookup per user:
// the default, the users' group memberships, their groups' quotas and
// their own.
func (s *Store) EffectiveQuotasOf(ctx context.Context, userIDs []int64) (map[int64]Limits, error) {
	out := make(map[int64]Limits, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	db := s.rdb.WithContext(ctx)
	def, _, err := quotaOf(db, ScopeDefault, 0)
	if err != nil {
		return nil, err
	}
	var members []struct {
		UserID  int64
		GroupID int64
	}
	if err := db.Raw("SELECT user_id, group_id FROM group_members WHERE user_id IN ?", userIDs).Scan(&members).Error; err != nil {
		return nil, err
	}
	groupIDs := make([]int64, 0, len(members))
	for _, m := range members {
		groupIDs = append(groupIDs, m.GroupID)
	}
	groups, err := s.QuotasOf(ctx, ScopeGroup, groupIDs)
	if err != nil {
		return nil, err
	}
	own, err := s.QuotasOf(ctx, ScopeUser, userIDs)
	if err != nil {
		return nil, err
	}
	groupsOf := map[int64][]Limits{}
	for _, m := range members {
		if l, ok := groups[m.GroupID]; ok {
			groupsOf[m.UserID] = append(groupsOf[m.UserID], l)
		}
	}
	for _, id := range userIDs {
		var up *Limits
		if l, ok := own[id]; ok {
			up = &l
		}
		out[id] = ResolveLimits(def, groupsOf[id], up)
	}
	return out, nil
}

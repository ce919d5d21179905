package models

import (
	"context"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// energyBooker adds a GPU-minute's energy to the usage interval of the
// workbench that held the GPU in that minute, inside the rollup's
// transaction. It caches each workbench's intervals and each user's
// billing groups over time for the transaction.
type energyBooker struct {
	tx        *gorm.DB
	intervals map[string][]UsageInterval
	groups    map[int64]GroupTimeline
}

// book adds mJ (negative to take back) to the interval of wbID that was
// open during the minute starting at minute (unix seconds); shareMJ is the
// part of mJ that is a share of a GPU's energy (MIG instance, slice), and
// minutes the measured unit-minutes (1, or -1 to take back). Energy of a
// minute no interval of the holder covers (the GPU was held but metering
// had not started, or had ended) is not booked: it stays in gpu_minutes.
func (b *energyBooker) book(wbID, model string, minute, mJ, shareMJ, minutes int64) error {
	if wbID == "" || (mJ == 0 && minutes == 0) {
		return nil
	}
	ivs, ok := b.intervals[wbID]
	if !ok {
		if err := b.tx.Where("workbench_id = ?", wbID).Order("id DESC").Limit(20).Find(&ivs).Error; err != nil {
			return err
		}
		b.intervals[wbID] = ivs
	}
	start := time.Unix(minute, 0)
	end := start.Add(time.Minute)
	var iv *UsageInterval
	for i := range ivs {
		c := &ivs[i]
		if c.StartedAt.Before(end) && (c.EndedAt == nil || c.EndedAt.After(start)) {
			iv = c
			break
		}
	}
	if iv == nil {
		return nil
	}
	timeline, ok := b.groups[iv.UserID]
	if !ok {
		m, err := groupTimelines(b.tx, []int64{iv.UserID})
		if err != nil {
			return err
		}
		timeline = m[iv.UserID]
		b.groups[iv.UserID] = timeline
	}
	if model == "" {
		model = iv.GPUModel
	}
	hour := minute - minute%3600
	// An hour's energy is one row: it goes to the group its holder was in
	// at the hour's start (where billing splits the hour's line at a move,
	// energy, which is informational, is not split).
	bg := timeline.At(time.Unix(hour, 0))
	group := energyGroup{ID: bg.ID, Name: bg.Name}
	return b.tx.Exec(`INSERT INTO interval_energy (interval_id, hour, workbench_id, user_id, group_name, group_id, gpu_model, energy_mj, share_mj, measured_minutes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(interval_id, hour) DO UPDATE SET energy_mj = energy_mj + excluded.energy_mj,
			share_mj = share_mj + excluded.share_mj, measured_minutes = measured_minutes + excluded.measured_minutes`,
		iv.ID, hour, iv.WorkbenchID, iv.UserID, group.Name, group.id(), model, mJ, shareMJ, minutes).Error
}

// EnergyTotals is measured energy booked to usage intervals.
type EnergyTotals struct {
	MJ      int64 // every measured and shared mJ
	ShareMJ int64 // the part that is a share of a MIG or shared GPU's energy
	// Measured is false when nothing was ever measured: the energy is then
	// "not available", never 0 J.
	Measured bool
}

// IntervalEnergy is the energy booked to one usage interval.
func (s *Store) IntervalEnergy(ctx context.Context, intervalID int64) (EnergyTotals, error) {
	return s.energyTotals(ctx, "interval_id = ?", intervalID)
}

// WorkbenchEnergy is the energy booked to every usage interval of a workbench.
func (s *Store) WorkbenchEnergy(ctx context.Context, wbID string) (EnergyTotals, error) {
	return s.energyTotals(ctx, "workbench_id = ?", wbID)
}

func (s *Store) energyTotals(ctx context.Context, where string, arg any) (EnergyTotals, error) {
	var t EnergyTotals
	var minutes int64
	err := s.sql.QueryRowContext(ctx, `SELECT COALESCE(SUM(energy_mj), 0), COALESCE(SUM(share_mj), 0), COALESCE(SUM(measured_minutes), 0), COUNT(*)
		FROM interval_energy WHERE `+where, arg).Scan(&t.MJ, &t.ShareMJ, &minutes, new(int64))
	// Rows booked before measured_minutes existed carry energy only.
	t.Measured = minutes > 0 || t.MJ != 0
	return t, err
}

// WorkbenchEnergyTotals is WorkbenchEnergy for several workbenches at once
// (metrics): every id with a booked row, measured or not.
func (s *Store) WorkbenchEnergyTotals(ctx context.Context, ids []string) (map[string]EnergyTotals, error) {
	out := map[string]EnergyTotals{}
	if len(ids) == 0 {
		return out, nil
	}
	q := "SELECT workbench_id, SUM(energy_mj), SUM(share_mj), SUM(measured_minutes) FROM interval_energy WHERE workbench_id IN (?" +
		strings.Repeat(",?", len(ids)-1) + ") GROUP BY workbench_id"
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var t EnergyTotals
		var minutes int64
		if err := rows.Scan(&id, &t.MJ, &t.ShareMJ, &minutes); err != nil {
			return nil, err
		}
		t.Measured = minutes > 0 || t.MJ != 0
		out[id] = t
	}
	return out, rows.Err()
}

// IntervalEnergyMJ is the measured energy booked to a usage interval.
func (s *Store) IntervalEnergyMJ(ctx context.Context, intervalID int64) (int64, error) {
	var mJ int64
	err := s.sql.QueryRowContext(ctx, "SELECT COALESCE(SUM(energy_mj), 0) FROM interval_energy WHERE interval_id = ?", intervalID).Scan(&mJ)
	return mJ, err
}

// energyGroupings are the usage groupings (see usageGroupings) over
// interval_energy e: energy is GPU energy, so by resource it is all "gpu".
var energyGroupings = map[string]string{
	"user":      UserKeySQL,
	"group":     groupKey("e"),
	"gpu_model": "e.gpu_model",
	"workbench": "COALESCE(w.name, e.workbench_id)",
	"resource":  "'gpu'",
}

// EnergySummary sums the measured energy (mJ) of the hours in [from, to),
// keyed as UsageSummary keys its rows; userID 0 means everyone.
func (s *Store) EnergySummary(ctx context.Context, from, to time.Time, groupBy string, userID int64) (map[string]int64, error) {
	q, args, err := energySummaryQuery(from, to, groupBy, userID)
	if err != nil {
		return nil, err
	}
	rows, err := s.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var key string
		var mJ int64
		if err := rows.Scan(&key, &mJ); err != nil {
			return nil, err
		}
		out[key] = mJ
	}
	return out, rows.Err()
}

// energySummaryQuery is EnergySummary's statement (the query plan test
// EXPLAINs it).
func energySummaryQuery(from, to time.Time, groupBy string, userID int64) (string, []any, error) {
	col, ok := energyGroupings[groupBy]
	if !ok {
		return "", nil, invalid("group_by", "must be user, group, gpu_model, workbench or resource")
	}
	if groupBy == "workbench" {
		col = workbenchKey("e", userID)
	}
	q := `SELECT ` + col + ` AS key, SUM(e.energy_mj) FROM interval_energy e
		JOIN users u ON u.id = e.user_id LEFT JOIN workbenches w ON w.id = e.workbench_id  ` + groupJoins("e") + `
		WHERE e.hour >= ? AND e.hour < ?`
	args := []any{from.Unix(), to.Unix()}
	if userID != 0 {
		q += " AND e.user_id = ?"
		args = append(args, userID)
	}
	return q + " GROUP BY 1", args, nil
}

// SettingElectricityPrice is the admin's electricity price, micro-units of
// the currency per kWh; unset means energy is shown without a cost.
const SettingElectricityPrice = "electricity_price_micros_per_kwh"

// ElectricityPrice returns the electricity price per kWh in micro-units and
// whether one is set.
func (s *Store) ElectricityPrice(ctx context.Context) (int64, bool, error) {
	v, err := s.Setting(ctx, SettingElectricityPrice)
	if err != nil || v == "" {
		return 0, false, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, nil // a corrupt value is treated as unset, never as a price
	}
	return n, true, nil
}

// SetElectricityPrice stores the price per kWh (micro-units); a negative
// value clears it.
func (s *Store) SetElectricityPrice(ctx context.Context, micros int64) error {
	if micros < 0 {
		return s.db.WithContext(ctx).Exec("DELETE FROM settings WHERE key = ?", SettingElectricityPrice).Error
	}
	return s.SetSetting(ctx, SettingElectricityPrice, strconv.FormatInt(micros, 10))
}

// MeasuredGPUStats are the per-minute means of utilisation (%) and power
// (W) over minutes where both were read, as sums for a least-squares line
// of power against utilisation, and the utilisation-weighted busy fraction.
type MeasuredGPUStats struct {
	Minutes  int64   // minutes with both utilisation and power read
	SumU     float64 // Σ u (percent)
	SumP     float64 // Σ p (watts)
	SumUU    float64
	SumUP    float64
	UtilSum  int64 // Σ utilisation of every readable sample (percent)
	UtilRead int64 // readable utilisation samples
}

// MeasuredGPUStats reads the rollup of [from, to) for GPUs whose model
// contains model (case-insensitive; "" = every GPU).
func (s *Store) MeasuredGPUStats(ctx context.Context, from, to time.Time, model string) (MeasuredGPUStats, error) {
	var st MeasuredGPUStats
	like := "%" + strings.ToLower(model) + "%"
	err := s.sql.QueryRowContext(ctx, `
		SELECT COALESCE(SUM(CASE WHEN util_samples > 0 AND power_samples > 0 THEN 1 ELSE 0 END), 0),
		       COALESCE(SUM(CASE WHEN util_samples > 0 AND power_samples > 0 THEN util_sum * 1.0 / util_samples END), 0),
		       COALESCE(SUM(CASE WHEN util_samples > 0 AND power_samples > 0 THEN power_sum_mw / 1000.0 / power_samples END), 0),
		       COALESCE(SUM(CASE WHEN util_samples > 0 AND power_samples > 0 THEN (util_sum * 1.0 / util_samples) * (util_sum * 1.0 / util_samples) END), 0),
		       COALESCE(SUM(CASE WHEN util_samples > 0 AND power_samples > 0 THEN (util_sum * 1.0 / util_samples) * (power_sum_mw / 1000.0 / power_samples) END), 0),
		       COALESCE(SUM(util_sum), 0), COALESCE(SUM(util_samples), 0)
		FROM gpu_minutes WHERE minute >= ? AND minute < ? AND LOWER(gpu_model) LIKE ?`,
		from.Unix(), to.Unix(), like).Scan(&st.Minutes, &st.SumU, &st.SumP, &st.SumUU, &st.SumUP, &st.UtilSum, &st.UtilRead)
	return st, err
}

// energyGroup is the group a user's energy is booked to (zero: none).
type energyGroup struct {
	ID   int64
	Name string
}

// id is the group's id for the group_id column (nil: none).
func (g energyGroup) id() *int64 {
	if g.ID == 0 {
		return nil
	}
	return &g.ID
}

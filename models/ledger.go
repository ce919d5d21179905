package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"workbench/models/pricing"
)

// LedgerEntry is one immutable priced line.
type LedgerEntry struct {
	ID             int64  `gorm:"primaryKey" json:"id"`
	IdempotencyKey string `json:"-"`
	UserID         int64  `json:"-"`
	GroupName      string `json:"group"`
	// GroupID is the group of the line (nil: none): by-group views follow
	// it across a rename. Billing sets it to the group the user was in
	// during the line (GroupTimeline.Attribute); otherwise it is the
	// group GroupName names on insert.
	GroupID       *int64    `gorm:"column:group_id" json:"-"`
	WorkbenchID   string    `json:"workbench_id"`
	IntervalID    *int64    `json:"-"`
	Resource      string    `json:"resource"`
	GPUModel      string    `gorm:"column:gpu_model" json:"gpu_model"`
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
	// Added is set by RecordBilling and RecordStorageBilling on the lines
	// of the slice they were given that they inserted (not those already
	// there), once the transaction committed: metrics count each line once.
	Added bool `gorm:"-" json:"-"`
	// Tier is the price tier the line's rate was taken from, read (never
	// written) through its usage interval by the statement queries
	// (LineTierSQL): pricing.TierPreemptible for the GPU units (gpu, mig,
	// slice) of a preemptible run and for a reversal of such a line (it
	// keeps the interval), "" for the rest: standard rates, and lines of
	// no interval (credits, home storage, bookings), which have no tier.
	Tier string `gorm:"->;-:migration;column:tier" json:"-"`
}

// TableName is the ledger table.
func (LedgerEntry) TableName() string { return "ledger_entries" }

// RecordBilling appends priced lines of an interval and moves its billing
// mark, in one transaction. Lines whose idempotency key exists are skipped,
// so pricing the same period twice adds nothing.
func (s *Store) RecordBilling(ctx context.Context, ivID int64, lines []LedgerEntry, billedThrough time.Time, settled bool) (added int, err error) {
	now := s.now()
	inserted := make([]bool, len(lines))
	defer func() { markAdded(lines, inserted, err) }()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for i := range lines {
			l := lines[i]
			l.ID, l.CreatedAt = 0, now
			res := tx.Exec(`INSERT INTO ledger_entries (idempotency_key, user_id, group_name, group_id, workbench_id, interval_id, resource, gpu_model,
				period_start, period_end, seconds, quantity_milli, rate_micros, amount_micros, note, created_at)
				VALUES (?, ?, ?, COALESCE(?, `+groupIDOfName+`), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(idempotency_key) DO NOTHING`,
				l.IdempotencyKey, l.UserID, l.GroupName, l.GroupID, l.GroupName, l.WorkbenchID, l.IntervalID, l.Resource, l.GPUModel,
				l.PeriodStart.UTC(), l.PeriodEnd.UTC(), l.Seconds, l.QuantityMilli, l.RateMicros, l.AmountMicros, l.Note, now)
			if res.Error != nil {
				return res.Error
			}
			added += int(res.RowsAffected)
			inserted[i] = res.RowsAffected > 0
		}
		return tx.Model(&UsageInterval{}).Where("id = ?", ivID).
			Updates(map[string]any{"billed_through": billedThrough.UTC(), "settled": settled}).Error
	})
	return added, err
}

// groupIDOfName is the SQL of the id of the group named by its one
// parameter (NULL for "" or no such group): a line's group_id, read in the
// transaction that writes it, when the line has none (billing sets it: the
// group the user was in during the line, GroupTimeline.Attribute, which
// may be a group deleted since).
const groupIDOfName = `(SELECT id FROM groups WHERE name = ?)`

// BeforeCreate fills GroupID from GroupName for lines written through
// gorm (credits, bookings); a reversal keeps its original line's.
func (e *LedgerEntry) BeforeCreate(tx *gorm.DB) error {
	if e.GroupID != nil || e.GroupName == "" || e.Reverses != nil {
		return nil
	}
	var ids []int64
	if err := tx.Table("groups").Where("name = ?", e.GroupName).Pluck("id", &ids).Error; err != nil {
		return err
	}
	if len(ids) == 1 {
		e.GroupID = &ids[0]
	}
	return nil
}

// markAdded sets Added on the lines inserted, once err says the
// transaction committed.
func markAdded(lines []LedgerEntry, inserted []bool, err error) {
	for i := range lines {
		lines[i].Added = err == nil && inserted[i]
	}
}

// Reverse appends a correction that cancels entry id (never edits it).
func (s *Store) Reverse(ctx context.Context, id int64, note string) (*LedgerEntry, error) {
	var orig LedgerEntry
	if err := s.db.WithContext(ctx).First(&orig, id).Error; err != nil {
		return nil, notFound(err)
	}
	rev := orig
	rev.ID = 0
	rev.IdempotencyKey = fmt.Sprintf("reverse:%d", id)
	rev.Seconds, rev.QuantityMilli, rev.AmountMicros = -orig.Seconds, orig.QuantityMilli, -orig.AmountMicros
	rev.Reverses, rev.Note, rev.CreatedAt = &orig.ID, note, s.now()
	if err := s.db.WithContext(ctx).Create(&rev).Error; err != nil {
		if uniqueViolation(err) {
			return nil, taken("id", "this entry was already reversed")
		}
		return nil, err
	}
	return &rev, nil
}

// UsageItem is one row of a usage summary.
type UsageItem struct {
	Key          string `json:"key"`
	GPUSeconds   int64  `json:"gpu_seconds"`
	AmountMicros int64  `json:"amount_micros"`
	// PreemptibleMicros is the part of AmountMicros billed at the
	// preemptible tier (LineTierSQL): GPU units of preemptible runs.
	PreemptibleMicros int64 `json:"preemptible_micros"`
	// Measured GPU energy (informational, filled by the caller from
	// EnergySummary); the cost only when an electricity price is set.
	EnergyMJ         int64  `json:"energy_mj" gorm:"-"`
	EnergyCostMicros *int64 `json:"energy_cost_micros,omitempty" gorm:"-"`
	// A deleted workbench's row, grouped by workbench: the parts of its
	// key, so that a page words "(deleted, id)" in its reader's language
	// (the key, built in SQL, is English: the CSV's and the API's, stable).
	Deleted       bool   `json:"-" gorm:"column:wb_deleted"`
	WorkbenchName string `json:"-" gorm:"column:wb_name"`
	WorkbenchID   string `json:"-" gorm:"column:wb_id"`
	Owner         string `json:"-" gorm:"column:wb_owner"`
	// A deleted group's row, grouped by group: its name and id, so that
	// a page words "(deleted group …)" in its reader's language.
	GroupDeleted bool   `json:"-" gorm:"column:grp_deleted"`
	GroupName    string `json:"-" gorm:"column:grp_name"`
	GroupID      int64  `json:"-" gorm:"column:grp_id"`
}

// Usage groupings.
var usageGroupings = map[string]string{
	"user":      UserKeySQL,
	"group":     groupKey("l"),
	"gpu_model": "l.gpu_model",
	"workbench": "COALESCE(w.name, l.workbench_id)",
	"resource":  "l.resource",
}

// UserKeySQL is a user's key in usage and energy summaries (users joined
// as u): the username, and for a deleted account its former name beside
// its tombstone's, "stu11 (deleted-11)": the bills of a class removed at
// the end of term read deleted-3, deleted-11 … and said nothing of whose
// the money was. Still one row per account (the tombstone's name has the
// id), apart from a new account given the old name.
const UserKeySQL = "CASE WHEN u.deleted_at IS NOT NULL AND u.former_username <> '' THEN u.former_username || ' (' || u.username || ')' ELSE u.username END"

// groupKey is the usage and energy key of the group of a line (table
// alias a, groups joined as g and deleted_groups as dg, both by a's
// group_id): the group's name now, across renames; for a deleted group its
// last name and its id, "ml101 (deleted group 7)" (DeletedGroupKey): its
// lines read "no group" where its name was not on them, and were one row
// with a new group of its name where it was. Lines of no group (group_id
// NULL, or 0 in the monthly rollup) keep the name they were written with:
// "", or a group deleted before lines carried ids (migration 149).
func groupKey(a string) string {
	return "CASE WHEN " + deletedGroupSQL(a) + " THEN COALESCE(dg.name, " + a + ".group_name) || ' (deleted group ' || " + a +
		".group_id || ')' ELSE COALESCE(g.name, " + a + ".group_name) END"
}

// deletedGroupSQL is true for a line of a deleted group (see groupKey).
func deletedGroupSQL(a string) string { return "COALESCE(" + a + ".group_id, 0) <> 0 AND g.id IS NULL" }

// groupJoins joins a line's group, live (g) or deleted (dg), for groupKey.
func groupJoins(a string) string {
	return "LEFT JOIN groups g ON g.id = " + a + ".group_id LEFT JOIN deleted_groups dg ON dg.id = " + a + ".group_id"
}

// workbenchKey is the usage and energy key of a workbench's lines (table
// alias a, workbenches joined as w): its name, and in everyone's lines
// (userID 0) "owner/name", so that two users' workbenches of one name are
// two rows (they were summed into one on the admin's billing page). A
// deleted workbench's name is free for a new one, so its key says so and
// gives its id, "exp (deleted, 5zggd5ahmqg3o)": the two were one row.
// Lines of no workbench (home storage, credits, bookings) keep the empty
// key.
func workbenchKey(a string, userID int64) string {
	name := "CASE WHEN w.deleted_at IS NOT NULL THEN w.name || ' (deleted, ' || w.id || ')' ELSE COALESCE(w.name, " + a + ".workbench_id) END"
	if userID != 0 {
		return name
	}
	return "CASE WHEN " + a + ".workbench_id = '' THEN '' ELSE " + UserKeySQL + " || '/' || " + name + " END"
}

// ValidGrouping reports whether g is a usage grouping.
func ValidGrouping(g string) bool { _, ok := usageGroupings[g]; return ok }

// UsageSummary sums the ledger over periods starting in [from, to), grouped
// by user, group, gpu_model, workbench or resource; userID 0 means everyone.
// GPU seconds count GPU-seconds (2 GPUs for an hour = 7200).
func (s *Store) UsageSummary(ctx context.Context, from, to time.Time, groupBy string, userID int64) ([]UsageItem, int64, error) {
	return s.usageSummary(ctx, from, to, groupBy, userID, 0)
}

// GroupUsageSummary is UsageSummary of the lines billed to a group (its
// statement, for its leads), under any of its names: groupBy as in
// UsageSummary, but never "group".
func (s *Store) GroupUsageSummary(ctx context.Context, from, to time.Time, groupBy string, groupID int64) ([]UsageItem, int64, error) {
	if groupBy == "group" || groupID == 0 {
		return nil, 0, invalid("group_by", "must be user, gpu_model, workbench or resource")
	}
	return s.usageSummary(ctx, from, to, groupBy, 0, groupID)
}

func (s *Store) usageSummary(ctx context.Context, from, to time.Time, groupBy string, userID int64, groupID int64) ([]UsageItem, int64, error) {
	// Prepared (rdb): /usage and the billing pages run this on every view.
	q, err := usageSummaryQuery(s.rdb.WithContext(ctx), from, to, groupBy, userID)
	if err != nil {
		return nil, 0, err
	}
	if groupID != 0 {
		q = q.Where("l.group_id = ?", groupID)
	}
	var items []UsageItem
	if err := q.Scan(&items).Error; err != nil {
		return nil, 0, err
	}
	var total int64
	for _, it := range items {
		total += it.AmountMicros
	}
	return items, total, nil
}

// usageSummaryQuery builds UsageSummary's statement (the plan test reads it).
func usageSummaryQuery(db *gorm.DB, from, to time.Time, groupBy string, userID int64) (*gorm.DB, error) {
	col, ok := usageGroupings[groupBy]
	if !ok {
		return nil, invalid("group_by", "must be user, group, gpu_model, workbench or resource")
	}
	// Whole months are read from the rollup a trigger keeps beside the
	// ledger: the same sums over far fewer rows.
	// The preemptible part: the rollup keeps it per row (migration 172);
	// the ledger's lines read their tier from their interval, one lookup
	// by primary key a line (as the statement does).
	table, gpuSecs, period := "ledger_entries l",
		"SUM(CASE WHEN l.resource = 'gpu' THEN l.seconds * l.quantity_milli / 1000 ELSE 0 END)", "l.period_start >= ? AND l.period_start < ?"
	preemptible, tierJoin := "SUM(CASE WHEN "+LineTierSQL+" = '"+pricing.TierPreemptible+"' THEN l.amount_micros ELSE 0 END)", LineTierJoin
	var lo, hi any = from.UTC(), to.UTC()
	if monthAligned(from) && monthAligned(to) {
		table, gpuSecs, period = "ledger_monthly l", "SUM(l.gpu_seconds)", "l.month >= ? AND l.month < ?"
		preemptible, tierJoin = "SUM(l.preemptible_micros)", ""
		lo, hi = from.UTC().Format("2006-01"), to.UTC().Format("2006-01")
	}
	parts := ""
	if groupBy == "workbench" {
		col = workbenchKey("l", userID)
		// One deleted workbench is one row (its key has its id), so MAX
		// reads its parts.
		parts = ", MAX(w.deleted_at IS NOT NULL) AS wb_deleted, MAX(w.name) AS wb_name, MAX(l.workbench_id) AS wb_id, MAX(" + UserKeySQL + ") AS wb_owner"
	}
	if groupBy == "group" {
		// One deleted group is one row (its key has its id), so MAX
		// reads its parts.
		parts = ", MAX(" + deletedGroupSQL("l") + ") AS grp_deleted, COALESCE(MAX(COALESCE(dg.name, l.group_name)), '') AS grp_name, COALESCE(MAX(l.group_id), 0) AS grp_id"
	}
	q := db.Table(table).
		Select(col+" AS key, "+gpuSecs+" AS gpu_seconds, SUM(l.amount_micros) AS amount_micros, "+preemptible+" AS preemptible_micros"+parts).
		Joins("JOIN users u ON u.id = l.user_id").
		Where(period, lo, hi).
		Group(col).Order("amount_micros DESC")
	if tierJoin != "" {
		q = q.Joins(tierJoin)
	}
	if groupBy == "workbench" {
		q = q.Joins("LEFT JOIN workbenches w ON w.id = l.workbench_id")
	}
	if groupBy == "group" {
		q = q.Joins(groupJoins("l"))
	}
	if userID != 0 {
		q = q.Where("l.user_id = ?", userID)
	}
	return q, nil
}

// LineTierSQL is the price tier of a ledger line (aliased l) whose usage
// interval is joined as iv by its primary key (LineTierJoin): only the
// GPU units of a run are discounted (pricing.PriceRun), so its CPU and
// memory lines are at the standard tier, as is every line of no interval.
const LineTierSQL = "CASE WHEN l.resource IN ('" + pricing.GPU + "', '" + pricing.MIG + "', '" + pricing.Slice + "') THEN COALESCE(iv.tier, '') ELSE '' END"

// LineTierJoin joins a ledger line's (l) usage interval as iv by its
// primary key; lines of no interval (interval_id NULL) keep theirs NULL.
const LineTierJoin = "LEFT JOIN usage_intervals iv ON iv.id = l.interval_id"

// Statement returns a user's ledger lines with periods starting in [from, to).
func (s *Store) Statement(ctx context.Context, userID int64, from, to time.Time) ([]LedgerEntry, error) {
	var out []LedgerEntry
	return out, statementQuery(s.db.WithContext(ctx), userID, from, to).Scan(&out).Error
}

// statementLines is the statement's filter (what StatementPage counts).
func statementLines(db *gorm.DB, userID int64, from, to time.Time) *gorm.DB {
	q := db.Table("ledger_entries AS l").Where("l.period_start >= ? AND l.period_start < ?", from.UTC(), to.UTC())
	if userID != 0 {
		q = q.Where("l.user_id = ?", userID)
	}
	return q
}

// statementQuery reads the statement's lines in order, each with its tier.
func statementQuery(db *gorm.DB, userID int64, from, to time.Time) *gorm.DB {
	return statementLines(db, userID, from, to).Select("l.*, " + LineTierSQL + " AS tier").Joins(LineTierJoin).
		Order("l.period_start, l.id")
}

// StatementPage is one page of Statement: limit lines from offset, and how
// many lines the whole statement has.
func (s *Store) StatementPage(ctx context.Context, userID int64, from, to time.Time, offset, limit int) ([]LedgerEntry, int64, error) {
	// Prepared (rdb): /usage reads a page on every view.
	var total int64
	if err := statementLines(s.rdb.WithContext(ctx), userID, from, to).Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var out []LedgerEntry
	err := statementQuery(s.rdb.WithContext(ctx), userID, from, to).Offset(offset).Limit(limit).Scan(&out).Error
	return out, total, err
}

// EachStatementLine calls fn with every line of Statement in order, reading
// them from the database as it goes, so a year of lines is streamed (the
// CSV download) instead of held in memory. fn's error stops the walk.
func (s *Store) EachStatementLine(ctx context.Context, userID int64, from, to time.Time, fn func(*LedgerEntry) error) error {
	db := s.db.WithContext(ctx)
	rows, err := statementQuery(db, userID, from, to).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var l LedgerEntry
		if err := db.ScanRows(rows, &l); err != nil {
			return err
		}
		if err := fn(&l); err != nil {
			return err
		}
	}
	return rows.Err()
}

// MonthTotals returns a user's ledger GPU-seconds and spend since from; the
// spend includes credits, which CreditMicros also gives apart.
func (s *Store) MonthTotals(ctx context.Context, userID int64, from time.Time) (MonthUsage, error) {
	var m MonthUsage
	row := s.rdb.WithContext(ctx).Raw(`SELECT COALESCE(SUM(CASE WHEN resource = 'gpu' THEN seconds * quantity_milli / 1000 ELSE 0 END), 0),
		COALESCE(SUM(amount_micros), 0), COALESCE(SUM(CASE WHEN resource = ? THEN amount_micros ELSE 0 END), 0)
		FROM ledger_entries WHERE user_id = ? AND period_start >= ?`, ResourceCredit, userID, from.UTC()).Row()
	if err := row.Err(); err != nil {
		return m, err
	}
	err := row.Scan(&m.GPUSeconds, &m.AmountMicros, &m.CreditMicros)
	return m, err
}

// WorkbenchCharges sums the ledger per workbench for the given ids.
func (s *Store) WorkbenchCharges(ctx context.Context, ids []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		WorkbenchID string
		Amount      int64
	}
	err := workbenchChargesQuery(s.rdb.WithContext(ctx), ids).Scan(&rows).Error
	for _, r := range rows {
		out[r.WorkbenchID] = r.Amount
	}
	return out, err
}

func monthAligned(t time.Time) bool { return t.Equal(MonthStart(t)) }

// workbenchChargesQuery sums the ledger of some workbenches through the
// covering index ledger_workbench_amount.
func workbenchChargesQuery(db *gorm.DB, ids []string) *gorm.DB {
	return db.Table("ledger_entries").Select("workbench_id, SUM(amount_micros) AS amount").
		Where("workbench_id IN ?", ids).Group("workbench_id")
}

package models

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
)

// groupLine writes one priced GPU hour of userID billed to group, as the
// billing does (RecordBilling).
func groupLine(t *testing.T, s *Store, userID int64, group string, at time.Time, amount int64) {
	t.Helper()
	l := LedgerEntry{IdempotencyKey: fmt.Sprintf("t:%d:%s:%d", userID, group, at.UnixNano()), UserID: userID, GroupName: group,
		WorkbenchID: "wb", Resource: "gpu", GPUModel: "H100", PeriodStart: at, PeriodEnd: at.Add(time.Hour),
		Seconds: 3600, QuantityMilli: 1000, RateMicros: amount, AmountMicros: amount}
	if _, err := s.RecordBilling(context.Background(), 0, []LedgerEntry{l}, at, true); err != nil {
		t.Fatal(err)
	}
}

// keyed turns a usage summary into key → amount.
func keyed(t *testing.T) func(items []UsageItem, total int64, err error) map[string]int64 {
	return func(items []UsageItem, _ int64, err error) map[string]int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, it := range items {
			out[it.Key] += it.AmountMicros
		}
		return out
	}
}

// A group renamed in the middle of a month is one group in the by-group
// views, under its name now, and its statement has the lines of both
// names; a new group given the old name is another group. A credit (written
// through gorm) is filed under its group's id too, and a reversal of a line
// written before the rename stays with that group. Whole months (the
// rollup) and other spans (the ledger) agree.
func TestLedgerFollowsAGroupAcrossARename(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "ana", Password: "ana-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.CreateUser(ctx, NewUser{Username: "ben", Password: "ben-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	ml, err := s.CreateGroup(ctx, "ml", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, ml.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	month := MonthStart(time.Now())
	groupLine(t, s, u.ID, "ml", month.Add(time.Hour), 1_000_000)
	var before LedgerEntry
	if err := s.db.Where("group_name = ?", "ml").First(&before).Error; err != nil || before.GroupID == nil || *before.GroupID != ml.ID {
		t.Fatalf("a line billed to ml: group id %v (%v), want %d", before.GroupID, err, ml.ID)
	}

	if err := s.RenameGroup(ctx, ml.ID, "vision"); err != nil {
		t.Fatal(err)
	}
	groupLine(t, s, u.ID, "vision", month.Add(2*time.Hour), 2_000_000)
	if _, err := s.Credit(ctx, u.ID, 500_000, "", "outage", "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReverseLines(ctx, []int64{before.ID}, "wrong rate", "admin"); err != nil {
		t.Fatal(err)
	}
	// Another group now takes the old name.
	ml2, err := s.CreateGroup(ctx, "ml", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, ml2.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	groupLine(t, s, v.ID, "ml", month.Add(3*time.Hour), 4_000_000)

	// vision: 1 + 2 − 0.5 (credit) − 1 (reversal) = 1.5; the new ml: 4.
	want := map[string]int64{"vision": 1_500_000, "ml": 4_000_000}
	for _, span := range []struct {
		name     string
		from, to time.Time
	}{{"the month (rollup)", month, month.AddDate(0, 1, 0)}, {"from the month's first hour (ledger)", month.Add(time.Hour), month.AddDate(0, 1, 0)}} {
		got := keyed(t)(s.UsageSummary(ctx, span.from, span.to, "group", 0))
		if len(got) != 2 || got["vision"] != want["vision"] || got["ml"] != want["ml"] {
			t.Errorf("%s by group: %v, want %v", span.name, got, want)
		}
		_, total, err := s.GroupUsageSummary(ctx, span.from, span.to, "user", ml.ID)
		if err != nil || total != want["vision"] {
			t.Errorf("%s, the renamed group's statement: %d (%v), want %d", span.name, total, err, want["vision"])
		}
		_, total, err = s.GroupUsageSummary(ctx, span.from, span.to, "user", ml2.ID)
		if err != nil || total != want["ml"] {
			t.Errorf("%s, the new ml's statement: %d (%v), want %d", span.name, total, err, want["ml"])
		}
	}
}

// A database from before lines carried their group's id (schema 148):
// migration 149 files each line under the group that has its name, keeps
// lines of names no group has any more as they were, and the rollup it
// rebuilds gives the same month as before; the ledger stays append-only.
func TestMigrationLedgerGroupID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, DBFileName)+"?_journal_mode=WAL&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := fs.Sub(migrationFiles, "migrations")
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, sub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 148); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := raw.ExecContext(ctx, `INSERT INTO groups (id, name, description, created_at) VALUES (5, 'lab', '', ?)`, now); err != nil {
		t.Fatal(err)
	}
	for i, g := range []string{"lab", "lab", "gone", ""} {
		if _, err := raw.ExecContext(ctx, `INSERT INTO ledger_entries (idempotency_key, user_id, group_name, workbench_id, resource, gpu_model,
			period_start, period_end, seconds, quantity_milli, rate_micros, amount_micros, note, created_at)
			VALUES (?, 1, ?, 'wb', 'gpu', 'H100', ?, ?, 3600, 1000, 1000000, 1000000, '', ?)`, fmt.Sprintf("old:%d", i), g, now, now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	// The lines' user (the summaries name users).
	if u, err := s.CreateUser(ctx, NewUser{Username: "old", Password: "old-password-1"}); err != nil || u.ID != 1 {
		t.Fatalf("user 1: %+v (%v)", u, err)
	}
	var lines []LedgerEntry
	if err := s.db.Order("id").Find(&lines).Error; err != nil || len(lines) != 4 {
		t.Fatalf("lines after the migration: %d (%v)", len(lines), err)
	}
	for i, want := range []int64{5, 5, 0, 0} {
		got := int64(0)
		if lines[i].GroupID != nil {
			got = *lines[i].GroupID
		}
		if got != want {
			t.Errorf("line %d (%q): group id %d, want %d", i, lines[i].GroupName, got, want)
		}
	}
	month := MonthStart(now)
	got := keyed(t)(s.UsageSummary(ctx, month, month.AddDate(0, 1, 0), "group", 0))
	if len(got) != 3 || got["lab"] != 2_000_000 || got["gone"] != 1_000_000 || got[""] != 1_000_000 {
		t.Errorf("the month by group after the migration: %v", got)
	}
	if err := s.db.Exec("UPDATE ledger_entries SET amount_micros = 0").Error; err == nil {
		t.Error("the ledger can be updated after the migration")
	}
}

package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
)

// A deleted group's lines still name it on the bills, marked deleted and
// with its id, "ml101 (deleted group 7)" (they read "no group" or were one
// row with a new group that took the name), under the name it had last
// (renamed before it was deleted). A new group of its name is another row;
// no new group is given its id (SQLite gave a deleted newest group's id to
// the next one, and the old lines went with it). Its statement still reads
// its lines; whole months (the rollup) and other spans (the ledger) agree,
// and the ledger is not rewritten.
func TestBillsNameADeletedGroup(t *testing.T) {
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
	old, err := s.CreateGroup(ctx, "ml100", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, old.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	month := MonthStart(time.Now())
	groupLine(t, s, u.ID, "ml100", month.Add(time.Hour), 1_000_000)
	if err := s.RenameGroup(ctx, old.ID, "ml101"); err != nil {
		t.Fatal(err)
	}
	groupLine(t, s, u.ID, "ml101", month.Add(2*time.Hour), 2_000_000)
	var before []LedgerEntry
	if err := s.db.Order("id").Find(&before).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteGroup(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	dg, err := s.DeletedGroupByID(ctx, old.ID)
	if err != nil || dg.Name != "ml101" || dg.DeletedAt == nil {
		t.Fatalf("the deleted group kept: %+v (%v)", dg, err)
	}
	if _, err := s.DeletedGroupByID(ctx, old.ID+100); !errors.Is(err, ErrNotFound) {
		t.Errorf("an id never deleted: %v, want not found", err)
	}
	// A new group takes the name; it and the next one get new ids.
	again, err := s.CreateGroup(ctx, "ml101", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, again.ID, v.ID); err != nil {
		t.Fatal(err)
	}
	if again.ID <= old.ID {
		t.Fatalf("the new ml101 got id %d, the deleted group's was %d", again.ID, old.ID)
	}
	groupLine(t, s, v.ID, "ml101", month.Add(3*time.Hour), 4_000_000)

	deleted := DeletedGroupKey("ml101", old.ID)
	want := map[string]int64{deleted: 3_000_000, "ml101": 4_000_000}
	for _, span := range []struct {
		name     string
		from, to time.Time
	}{{"the month (rollup)", month, month.AddDate(0, 1, 0)}, {"from the month's first hour (ledger)", month.Add(time.Hour), month.AddDate(0, 1, 0)}} {
		items, _, err := s.UsageSummary(ctx, span.from, span.to, "group", 0)
		got := keyed(t)(items, 0, err)
		if len(got) != 2 || got[deleted] != want[deleted] || got["ml101"] != want["ml101"] {
			t.Errorf("%s by group: %v, want %v", span.name, got, want)
		}
		for _, it := range items {
			if gone := it.Key == deleted; it.GroupDeleted != gone || (gone && (it.GroupName != "ml101" || it.GroupID != old.ID)) ||
				(!gone && it.GroupID != again.ID) {
				t.Errorf("%s: row %q: deleted %v, name %q, id %d", span.name, it.Key, it.GroupDeleted, it.GroupName, it.GroupID)
			}
		}
		if _, total, err := s.GroupUsageSummary(ctx, span.from, span.to, "user", old.ID); err != nil || total != want[deleted] {
			t.Errorf("%s, the deleted group's statement: %d (%v), want %d", span.name, total, err, want[deleted])
		}
		if _, err := s.EnergySummary(ctx, span.from, span.to, "group", 0); err != nil {
			t.Errorf("%s, energy by group: %v", span.name, err)
		}
	}
	if got := DeletedGroupKey("ml101", 7); got != "ml101 (deleted group 7)" {
		t.Errorf("DeletedGroupKey: %q", got)
	}
	var after []LedgerEntry
	if err := s.db.Order("id").Limit(len(before)).Find(&after).Error; err != nil {
		t.Fatal(err)
	}
	for i := range before {
		if after[i].GroupName != before[i].GroupName || *after[i].GroupID != *before[i].GroupID {
			t.Errorf("line %d rewritten: %+v, was %+v", before[i].ID, after[i], before[i])
		}
	}
}

// A group deleted before deleted groups were kept (schema 169): migration
// 170 keeps it under the name of its newest line, so its lines name it,
// and the next group created does not get its id.
func TestMigrationDeletedGroups(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 169); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := raw.ExecContext(ctx, `INSERT INTO groups (id, name, description, created_at) VALUES (4, 'lab', '', ?), (5, 'ml100', '', ?)`, now, now); err != nil {
		t.Fatal(err)
	}
	for i, g := range []string{"ml100", "lab", "ml100"} {
		if _, err := raw.ExecContext(ctx, `INSERT INTO ledger_entries (idempotency_key, user_id, group_name, group_id, workbench_id, resource, gpu_model,
			period_start, period_end, seconds, quantity_milli, rate_micros, amount_micros, note, created_at)
			VALUES (?, 1, ?, (SELECT id FROM groups WHERE name = ?), 'wb', 'gpu', 'H100', ?, ?, 3600, 1000, 1000000, 1000000, '', ?)`,
			fmt.Sprintf("old:%d", i), g, g, now, now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
	}
	// ml100 is renamed ml101 (its newest line says so), then deleted.
	if _, err := raw.ExecContext(ctx, `UPDATE groups SET name = 'ml101' WHERE id = 5`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `DROP TRIGGER ledger_entries_no_update; UPDATE ledger_entries SET group_name = 'ml101' WHERE id = 3`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `DELETE FROM groups WHERE id = 5`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	if u, err := s.CreateUser(ctx, NewUser{Username: "old", Password: "old-password-1"}); err != nil || u.ID != 1 {
		t.Fatalf("user 1: %+v (%v)", u, err)
	}
	if dg, err := s.DeletedGroupByID(ctx, 5); err != nil || dg.Name != "ml101" || dg.DeletedAt != nil {
		t.Fatalf("group 5 after the migration: %+v (%v)", dg, err)
	}
	if _, err := s.DeletedGroupByID(ctx, 4); !errors.Is(err, ErrNotFound) {
		t.Errorf("the live group 4 is kept as deleted: %v", err)
	}
	month := MonthStart(now)
	got := keyed(t)(s.UsageSummary(ctx, month, month.AddDate(0, 1, 0), "group", 0))
	if len(got) != 2 || got["lab"] != 1_000_000 || got["ml101 (deleted group 5)"] != 2_000_000 {
		t.Errorf("the month by group after the migration: %v", got)
	}
	if g, err := s.CreateGroup(ctx, "next", ""); err != nil || g.ID != 6 {
		t.Errorf("the next group: %+v (%v), want id 6", g, err)
	}
}

package models

import (
	"context"
	"database/sql"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
)

// A member moved from one group to another mid-month: their usage before
// the move is the old group's, after it the new group's, whenever it is
// billed; a group deleted is still the group of its members' time before
// its deletion; a user in several groups goes to the first by name, at
// each time. Memberships from before the record are members since always.
func TestGroupTimelineFollowsMovesAndDeletion(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "ida", Password: "ida-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2030, 3, 10, 0, 0, 0, 0, time.UTC)
	now := day
	moveClock(s, &now)
	mk := func(name string) *Group {
		g, err := s.CreateGroup(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	alpha, beta, aaa := mk("alpha"), mk("beta"), mk("aaa")
	if err := s.AddGroupMember(ctx, alpha.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	now = day.Add(10*time.Hour + 30*time.Minute) // moved at 10:30
	if err := s.RemoveGroupMember(ctx, alpha.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, beta.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	now = day.Add(12 * time.Hour) // also in aaa (first by name) from 12:00
	if err := s.AddGroupMember(ctx, aaa.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	now = day.Add(13*time.Hour + 20*time.Minute) // aaa deleted at 13:20
	if _, err := s.DeleteGroup(ctx, aaa.ID); err != nil {
		t.Fatal(err)
	}
	tl, err := s.GroupTimeline(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Duration
		want int64
	}{
		{-time.Hour, 0}, {9 * time.Hour, alpha.ID}, {10*time.Hour + 29*time.Minute, alpha.ID},
		{10*time.Hour + 30*time.Minute, beta.ID}, {12 * time.Hour, aaa.ID}, {13 * time.Hour, aaa.ID},
		{13*time.Hour + 20*time.Minute, beta.ID}, {48 * time.Hour, beta.ID},
	} {
		if g := tl.At(day.Add(c.at)); g.ID != c.want {
			t.Errorf("at %s: group %+v, want id %d", day.Add(c.at).Format("15:04"), g, c.want)
		}
	}
	if g := tl.At(day.Add(13 * time.Hour)); g.Name != "aaa" || !g.Deleted {
		t.Errorf("the deleted group reads %+v, want aaa, deleted", g)
	}

	// Members before the record (the migration's rows) are members since
	// always: their usage billed now goes where it went before.
	if err := s.db.Exec("UPDATE group_memberships SET from_at = NULL WHERE group_id = ?", beta.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Exec("DELETE FROM group_memberships WHERE group_id <> ?", beta.ID).Error; err != nil {
		t.Fatal(err)
	}
	if tl, _ := s.GroupTimeline(ctx, u.ID); tl.At(time.Time{}).ID != beta.ID || tl.At(day).ID != beta.ID {
		t.Errorf("a member from before the record: %+v", tl)
	}
	// Leaving with the account: the stretch ends at the deletion.
	now = day.Add(50 * time.Hour)
	if _, err := s.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if tl, _ := s.GroupTimeline(ctx, u.ID); tl.At(day.Add(49*time.Hour)).ID != beta.ID || tl.At(now).ID != 0 {
		t.Errorf("after the account's deletion: %+v", tl)
	}
}

// A line spanning a move is split at the move, on the line's own second
// grid (the second that straddles it goes with the part before), the
// amount shared by seconds so that the parts add up to it exactly; a
// later part's key is the line's with its offset.
func TestGroupTimelineSplitsALineExactly(t *testing.T) {
	start := time.Date(2030, 3, 10, 10, 0, 0, 400_000_000, time.UTC) // the run's grid: .4 s
	a, b := BillingGroup{ID: 1, Name: "alpha"}, BillingGroup{ID: 2, Name: "beta"}
	tl := GroupTimeline{first: a, changes: []groupChange{{at: start.Add(1200*time.Second + 300*time.Millisecond), group: b}}}
	line := LedgerEntry{IdempotencyKey: "iv:1:gpu:1", UserID: 7, Resource: "gpu", PeriodStart: start, PeriodEnd: start.Add(3600 * time.Second),
		Seconds: 3600, QuantityMilli: 1000, RateMicros: 1_000_003, AmountMicros: 1_000_003}
	parts := tl.Attribute([]LedgerEntry{line})
	if len(parts) != 2 {
		t.Fatalf("parts %+v", parts)
	}
	p, q := parts[0], parts[1]
	if p.Seconds != 1201 || q.Seconds != 2399 || !p.PeriodEnd.Equal(start.Add(1201*time.Second)) || !q.PeriodStart.Equal(p.PeriodEnd) || !q.PeriodEnd.Equal(line.PeriodEnd) {
		t.Errorf("split seconds %d+%d, %s–%s", p.Seconds, q.Seconds, p.PeriodEnd, q.PeriodStart)
	}
	if p.AmountMicros+q.AmountMicros != line.AmountMicros || p.AmountMicros != 1_000_003*1201/3600 {
		t.Errorf("amounts %d + %d, want %d in all", p.AmountMicros, q.AmountMicros, line.AmountMicros)
	}
	if p.GroupName != "alpha" || *p.GroupID != 1 || q.GroupName != "beta" || *q.GroupID != 2 || p.IdempotencyKey != "iv:1:gpu:1" || q.IdempotencyKey != "iv:1:gpu:1:s1201" {
		t.Errorf("parts %+v %+v", p, q)
	}
	// Back and forth within a line: three parts, still exact; a change
	// on the line's last second leaves it whole.
	tl.changes = append(tl.changes, groupChange{at: start.Add(3000 * time.Second), group: BillingGroup{}})
	parts = tl.Attribute([]LedgerEntry{line})
	var sum, secs int64
	for _, x := range parts {
		sum, secs = sum+x.AmountMicros, secs+x.Seconds
	}
	if len(parts) != 3 || sum != line.AmountMicros || secs != 3600 || parts[2].GroupID != nil || parts[2].GroupName != "" {
		t.Errorf("three parts %+v", parts)
	}
	whole := GroupTimeline{first: a, changes: []groupChange{{at: start.Add(3599*time.Second + time.Millisecond), group: b}}}
	if parts := whole.Attribute([]LedgerEntry{line}); len(parts) != 1 || parts[0].GroupName != "alpha" {
		t.Errorf("a change inside the last second: %+v", parts)
	}
	// No overflow where amount × seconds passes int64.
	big := line
	big.AmountMicros = 1 << 60
	tl.changes = tl.changes[:1]
	parts = tl.Attribute([]LedgerEntry{big})
	if parts[0].AmountMicros+parts[1].AmountMicros != 1<<60 || parts[0].AmountMicros <= 0 {
		t.Errorf("large amount split %d + %d", parts[0].AmountMicros, parts[1].AmountMicros)
	}
}

// Single sign-on keeps the record too: a directory that puts a user in a
// group starts their stretch in it, one that takes them out ends it; a
// group it makes takes an id no deleted group had (it took the deleted
// newest group's id, and with it that group's lines and members' past).
func TestSSOGroupSyncKeepsTheRecord(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	day := time.Date(2030, 3, 10, 0, 0, 0, 0, time.UTC)
	now := day
	s.SetClock(func() time.Time { return now })
	gone, err := s.CreateGroup(ctx, "gone", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteGroup(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	id := OIDCIdentity{Issuer: "https://idp", Subject: "s1", Username: "eve", Groups: []string{"vision"}, Managed: []string{"vision"}, CreateGroups: true}
	u, _, err := s.OIDCSignIn(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	vision, err := s.GroupByName(ctx, "vision")
	if err != nil || vision.ID <= gone.ID {
		t.Fatalf("the group SSO made: %+v %v; want an id above the deleted group's %d", vision, err, gone.ID)
	}
	now = day.Add(5 * time.Hour)
	id.Groups = nil
	if _, _, err := s.OIDCSignIn(ctx, id); err != nil {
		t.Fatal(err)
	}
	tl, err := s.GroupTimeline(ctx, u.ID)
	if err != nil || tl.At(day.Add(time.Hour)).ID != vision.ID || tl.At(now).ID != 0 || tl.At(day.Add(-time.Hour)).ID != 0 {
		t.Errorf("eve's groups over time: %+v %v", tl, err)
	}
}

// Migration 00171 fills the record from the memberships there are: each a
// stretch open at both ends (a member since always, still one), so usage
// not billed yet at the upgrade goes where it went before.
func TestMigrationMembershipRecordFromCurrentMembers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, DBFileName)+"?_journal_mode=WAL&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := fs.Sub(migrationFiles, "migrations")
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, sub, goose.WithAllowOutofOrder(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 170); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, q := range []string{
		`INSERT INTO users (id, username, password_hash, role, created_at, updated_at, home_key) VALUES (8, 'stu08', 'x', 'user', ?, ?, 'stu08')`,
		`INSERT INTO groups (id, name, description, created_at) VALUES (3, 'nlp', '', ?)`,
		`INSERT INTO groups (id, name, description, created_at) VALUES (4, 'cv', '', ?)`,
	} {
		args := []any{now}
		if strings.Contains(q, "users") {
			args = append(args, now)
		}
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO group_members (group_id, user_id) VALUES (3, 8), (4, 8)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	tl, err := s.GroupTimeline(ctx, 8)
	if err != nil || tl.At(time.Time{}).ID != 4 || tl.At(now).Name != "cv" || len(tl.changes) != 0 {
		t.Fatalf("stu08's groups after the migration: %+v %v; want cv (first by name) since always", tl, err)
	}
	// Taken out of cv now, the record goes on from there.
	later := now.Add(time.Hour)
	s.SetClock(func() time.Time { return later })
	if err := s.RemoveGroupMember(ctx, 4, 8); err != nil {
		t.Fatal(err)
	}
	if tl, _ := s.GroupTimeline(ctx, 8); tl.At(now).ID != 4 || tl.At(later).ID != 3 {
		t.Errorf("after a removal: %+v", tl)
	}
}

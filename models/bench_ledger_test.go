package models

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Ledger queries at scale (issue 4): a month of 1,000,000 ledger lines for
// 1,000 users, then the statement a user opens and the overview an admin
// opens. Goal: under 200 ms per operation.
//
// One parent benchmark seeds the file once and runs both as sub-benchmarks
// (BenchmarkLedger/MonthlyStatement, BenchmarkLedger/AdminOverview), so the
// seeded file is made once per run and removed with the parent's TempDir.

const (
	benchUsers  = 1000
	benchLines  = 1_000_000
	benchGroups = 20
)

var benchMonth = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// sqliteTime is how the driver (mattn/go-sqlite3) writes a time.Time bound
// as a parameter; seeded rows use the same text so that the range filters
// of the real queries compare them as the product's own rows.
const sqliteTime = "2006-01-02 15:04:05.999999999-07:00"

// seedLedger fills a fresh store with users, groups and benchLines lines of
// benchMonth in one transaction, set-based (a recursive CTE): seconds, not
// minutes.
func seedLedger(b *testing.B, s *Store) {
	b.Helper()
	ctx := context.Background()
	tx, err := s.sql.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	now := time.Now().UTC().Format(sqliteTime)
	month := benchMonth.Format("2006-01-02 15:04:05")
	stmts := []struct {
		sql  string
		args []any
	}{
		{`WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?)
			INSERT INTO users (id, username, password_hash, role, created_at, updated_at)
			SELECT n, printf('user%04d', n), 'x', 'user', ?, ? FROM seq`, []any{benchUsers, now, now}},
		{`WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < ?)
			INSERT INTO groups (id, name, created_at) SELECT n + 1, printf('g%02d', n), ? FROM seq`, []any{benchGroups - 1, now}},
		// Each user in one group, every seventh in a second one.
		{`INSERT INTO group_members (group_id, user_id) SELECT (id % ?) + 1, id FROM users`, []any{benchGroups}},
		{`INSERT OR IGNORE INTO group_members (group_id, user_id) SELECT ((id + 3) % ?) + 1, id FROM users WHERE id % 7 = 0`, []any{benchGroups}},
		// Line n belongs to user (n % 1000) + 1; per user the k-th line is
		// resource k % 3 in the hour slot k / 3 (two hours apart, shifted by
		// user parity), so each user has 1000 lines spread over the month,
		// from a new workbench every 40 hour slots.
		{`WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < ?),
			l AS (SELECT n, (n % ?) + 1 AS u, n / ? AS k FROM seq),
			m AS (SELECT n, u, k, CASE k % 3 WHEN 0 THEN 'gpu' WHEN 1 THEN 'cpu' ELSE 'memory' END AS res,
				(k / 3) * 2 + (u % 2) AS h FROM l)
			INSERT INTO ledger_entries (idempotency_key, user_id, group_name, workbench_id, interval_id, resource, gpu_model,
				period_start, period_end, seconds, quantity_milli, rate_micros, amount_micros, note, created_at)
			SELECT 'seed:' || n, u, printf('g%02d', u % ?), printf('wb%04d-%d', u, k / 120), NULL, res,
				CASE WHEN res = 'gpu' THEN CASE u % 3 WHEN 0 THEN 'NVIDIA H100 80GB HBM3' WHEN 1 THEN 'NVIDIA A100-SXM4-80GB' ELSE 'NVIDIA L40S' END ELSE '' END,
				strftime('%Y-%m-%d %H:%M:%S', ?, '+' || h || ' hours') || '+00:00',
				strftime('%Y-%m-%d %H:%M:%S', ?, '+' || (h + 1) || ' hours') || '+00:00',
				3600,
				CASE res WHEN 'gpu' THEN 1000 * (1 + u % 8) WHEN 'cpu' THEN 8000 ELSE 64000 END,
				CASE res WHEN 'gpu' THEN 3000000 WHEN 'cpu' THEN 20000 ELSE 5000 END,
				CASE res WHEN 'gpu' THEN 3000000 * (1 + u % 8) WHEN 'cpu' THEN 160000 ELSE 320000 END,
				'', ?
			FROM m`, []any{benchLines - 1, benchUsers, benchUsers, benchGroups, month, month, now}},
	}
	// Filling the table first and building its secondary indexes after is
	// several times faster than maintaining them row by row; they are
	// rebuilt from their own stored definitions, so the schema measured is
	// the migrations' schema.
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ledger_entries' AND sql IS NOT NULL`)
	if err != nil {
		b.Fatal(err)
	}
	indexes := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			b.Fatal(err)
		}
		indexes[name] = def
	}
	rows.Close()
	for name := range indexes {
		stmts = append([]struct {
			sql  string
			args []any
		}{{`DROP INDEX "` + name + `"`, nil}}, stmts...)
	}
	for _, def := range indexes {
		stmts = append(stmts, struct {
			sql  string
			args []any
		}{def, nil})
	}
	for _, st := range stmts {
		if _, err := tx.ExecContext(ctx, st.sql, st.args...); err != nil {
			b.Fatalf("seed: %v\n%s", err, st.sql)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	// A live portal's WAL is checkpointed as it goes; a freshly written
	// quarter-gigabyte WAL would make every read slower than in service.
	if _, err := s.sql.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkLedger(b *testing.B) {
	s, _ := newBenchStore(b)
	ctx := context.Background()
	began := time.Now()
	seedLedger(b, s)
	b.Logf("seeded %d lines for %d users in %s", benchLines, benchUsers, time.Since(began).Round(time.Millisecond))
	from, to := benchMonth, benchMonth.AddDate(0, 1, 0)

	// The seed must look like the product's rows to the product's queries.
	if lines, err := s.Statement(ctx, 500, from, to); err != nil || len(lines) != benchLines/benchUsers {
		b.Fatalf("statement of one user: %d lines (%v), want %d", len(lines), err, benchLines/benchUsers)
	}
	items, _, err := s.UsageSummary(ctx, from, to, "user", 0)
	if err != nil || len(items) != benchUsers {
		b.Fatalf("overview by user: %d rows (%v), want %d", len(items), err, benchUsers)
	}
	if n, _, _ := s.UsageSummary(ctx, from.AddDate(0, 1, 0), to.AddDate(0, 1, 0), "user", 0); len(n) != 0 {
		b.Fatalf("the next month has %d users", len(n))
	}

	for _, q := range []struct{ name, sql string }{
		{"statement", `SELECT * FROM ledger_entries WHERE period_start >= ? AND period_start < ? AND user_id = ? ORDER BY period_start, id`},
		{"overview by user", `SELECT u.username, SUM(l.amount_micros) FROM ledger_entries l JOIN users u ON u.id = l.user_id
			WHERE l.period_start >= ? AND l.period_start < ? GROUP BY u.username`},
	} {
		b.Logf("query plan, %s:\n%s", q.name, explain(b, s, q.sql, from, to, 500))
	}

	b.Run("MonthlyStatement", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			uid := int64(i%benchUsers) + 1
			if _, _, err := s.UsageSummary(ctx, from, to, "workbench", uid); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Statement(ctx, uid, from, to); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AdminOverview", func(b *testing.B) {
		for b.Loop() {
			for _, g := range []string{"user", "group", "gpu_model"} {
				if _, _, err := s.UsageSummary(ctx, from, to, g, 0); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// newBenchStore opens a real SQLite file in a temporary directory.
func newBenchStore(b *testing.B) (*Store, string) {
	b.Helper()
	dir := b.TempDir()
	s, err := Open(context.Background(), dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, dir
}

// explain returns SQLite's query plan for q with the month and a user id.
func explain(b *testing.B, s *Store, q string, from, to time.Time, uid int64) string {
	b.Helper()
	args := []any{from.UTC(), to.UTC()}
	if strings.Count(q, "?") == 3 {
		args = append(args, uid)
	}
	rows, err := s.sql.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			b.Fatal(err)
		}
		out = append(out, fmt.Sprintf("  %s", detail))
	}
	return strings.Join(out, "\n")
}

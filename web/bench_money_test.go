package web_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator"
)

// BenchmarkLaunchQuotaCheck (issue 4): what the quota check adds to a
// launch — the month's usage (ledger plus live pricing of running
// workbenches) and CheckLaunchQuota inside the BEGIN IMMEDIATE launch
// transaction — against the same transaction with no check. Goal: under
// 5 ms per launch. No engine: the container work after the transaction is
// the same either way and is not what is measured.
//
// The database holds a year of history (50,000 finished runs), 20 running
// workbenches of other users, and a month of ledger lines for the user, so
// the queries the check runs meet realistic tables. Each launch is undone
// outside the timer.
func BenchmarkLaunchQuotaCheck(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	store, err := models.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	const model = "NVIDIA H100 80GB HBM3"
	if err := store.SeedDefaultPrices(ctx, []string{model}); err != nil {
		b.Fatal(err)
	}
	if err := store.SeedCatalog(ctx, []string{model}); err != nil {
		b.Fatal(err)
	}
	fl, err := store.FlavorByNameOrID(ctx, "1x H100 80GB HBM3")
	if err != nil {
		b.Fatal(err)
	}
	imgs, _ := store.ListImages(ctx, true)
	img := imgs[0]
	alice, err := store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "correct-horse-1"})
	if err != nil {
		b.Fatal(err)
	}
	seedMoneyHistory(b, filepath.Join(dir, models.DBFileName), alice.ID, img.ID, fl.ID)

	// Quotas on every level, so resolution has work to do; generous enough
	// that every launch passes.
	lim := func(v int64) *int64 { return &v }
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(store.SetQuota(ctx, models.ScopeDefault, 0, models.Limits{MaxGPUs: lim(1), MaxWorkbenches: lim(2), BudgetPerMonthMicros: lim(1_000_000)}, "admin"))
	for i := range 3 {
		g, err := store.CreateGroup(ctx, fmt.Sprintf("team%d", i), "")
		must(err)
		must(store.AddGroupMember(ctx, g.ID, alice.ID))
		must(store.SetQuota(ctx, models.ScopeGroup, g.ID, models.Limits{MaxGPUs: lim(int64(2 + i)), GPUHoursPerMonth: lim(1000),
			MaxGPUsPerModel: map[string]int{model: 8}, AllowedImages: []string{img.Name}}, "admin"))
	}
	must(store.SetQuota(ctx, models.ScopeUser, alice.ID, models.Limits{MaxGPUs: lim(8), MaxWorkbenches: lim(10),
		BudgetPerMonthMicros: lim(models.MaxBudgetMicros)}, "admin"))

	billing := orchestrator.NewBilling(store, time.Minute)
	need := models.GPUNeed{Model: model, Count: 1}
	for i := range 8 {
		need.Candidates = append(need.Candidates, fmt.Sprintf("GPU-bench-%d", i))
	}
	ask := models.LaunchAsk{UserID: alice.ID, Image: img.Name, Flavor: fl.Name, GPUModel: model, GPUs: 1}

	perLaunch := map[string]time.Duration{}
	run := func(name string, check bool) {
		b.Run(name, func(b *testing.B) {
			var timed time.Duration
			n := 0
			for i := 0; b.Loop(); i++ {
				wb := &models.Workbench{Name: fmt.Sprintf("bench-%d", i), OwnerID: alice.ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t"}
				t0 := time.Now()
				var fn func(*models.Tx) error
				if check {
					month, err := billing.MonthUsage(ctx, alice.ID)
					if err != nil {
						b.Fatal(err)
					}
					fn = models.CheckLaunchQuota(ask, month)
				}
				if err := store.CreateWorkbench(ctx, wb, need, fn); err != nil {
					b.Fatalf("launch %d: %v", i, err)
				}
				timed += time.Since(t0)
				n++
				b.StopTimer()
				if err := store.MarkWorkbenchDeleted(ctx, wb.ID, time.Time{}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			perLaunch[name] = timed / time.Duration(n)
		})
	}
	run("NoCheck", false)
	run("WithQuotaCheck", true)
	if a, c := perLaunch["NoCheck"], perLaunch["WithQuotaCheck"]; a > 0 && c > 0 {
		b.Logf("launch transaction %s without the quota check, %s with it: the check adds %s per launch (goal < 5ms)",
			a.Round(time.Microsecond), c.Round(time.Microsecond), (c - a).Round(time.Microsecond))
	}
}

// seedMoneyHistory writes, through a second connection to the same file, a
// year of finished runs (users, workbenches, settled intervals), 20 running
// workbenches of other users, and 2,000 ledger lines of this month for
// userID. Set-based SQL: the store's methods would take minutes for this.
func seedMoneyHistory(b *testing.B, path string, userID, imageID, flavorID int64) {
	b.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000&_foreign_keys=on")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	now := time.Now().UTC()
	past, month := now.AddDate(-1, 0, 0), models.MonthStart(now)
	for _, st := range []struct {
		q    string
		args []any
	}{
		{`WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 100)
			INSERT INTO users (username, password_hash, role, created_at, updated_at)
			SELECT printf('other%03d', n), 'x', 'user', ?, ? FROM seq`, []any{past, past}},
		{`WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 50000)
			INSERT INTO workbenches (id, name, owner_id, image_id, flavor_id, state, token, created_at, updated_at, deleted_at)
			SELECT printf('hist%06d', n), printf('run%06d', n), (SELECT id FROM users WHERE username = printf('other%03d', 1 + n % 100)),
				?, ?, 'stopped', 't', ?, ?, ? FROM seq`, []any{imageID, flavorID, past, past, past}},
		{`INSERT INTO usage_intervals (workbench_id, user_id, gpu_model, gpu_count, cpu_milli, memory_mib, started_at, heartbeat_at,
				ended_at, end_reason, billed_through, settled)
			SELECT id, owner_id, 'NVIDIA H100 80GB HBM3', 1, 8000, 65536, ?, ?, ?, 'stopped', ?, 1 FROM workbenches WHERE id LIKE 'hist%'`,
			[]any{past, past, past.Add(time.Hour), past.Add(time.Hour)}},
		{`WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 20)
			INSERT INTO workbenches (id, name, owner_id, image_id, flavor_id, state, token, created_at, updated_at)
			SELECT printf('live%06d', n), 'live', (SELECT id FROM users WHERE username = printf('other%03d', n)),
				?, ?, 'running', 't', ?, ? FROM seq`, []any{imageID, flavorID, now, now}},
		{`INSERT INTO usage_intervals (workbench_id, user_id, gpu_model, gpu_count, cpu_milli, memory_mib, started_at, heartbeat_at, billed_through)
			SELECT id, owner_id, 'NVIDIA H100 80GB HBM3', 1, 8000, 65536, ?, ?, ? FROM workbenches WHERE id LIKE 'live%'`,
			[]any{now.Add(-90 * time.Minute), now, now.Truncate(time.Hour)}},
		{`WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 2000)
			INSERT INTO ledger_entries (idempotency_key, user_id, resource, gpu_model, period_start, period_end, seconds,
				quantity_milli, rate_micros, amount_micros, created_at)
			SELECT 'bench:' || n, ?, 'gpu', 'NVIDIA H100 80GB HBM3', ?, ?, 60, 1000, 3000000, 50000, ? FROM seq`,
			[]any{userID, month, month.Add(time.Minute), month}},
	} {
		if _, err := tx.Exec(st.q, st.args...); err != nil {
			b.Fatalf("seed: %v\n%s", err, st.q)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

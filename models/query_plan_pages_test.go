package models

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"
)

// capturedQuery is one read the store ran, with its arguments.
type capturedQuery struct {
	sql  string
	vars []any
}

// captureReads records every query the store runs through gorm (both
// handles) while fn runs. Reads made on the raw connection pool are not
// seen.
func captureReads(t *testing.T, s *Store, fn func()) []capturedQuery {
	t.Helper()
	var mu sync.Mutex
	var out []capturedQuery
	on := true
	record := func(db *gorm.DB) {
		mu.Lock()
		defer mu.Unlock()
		if on && db.Statement.SQL.Len() > 0 {
			out = append(out, capturedQuery{sql: db.Statement.SQL.String(), vars: append([]any(nil), db.Statement.Vars...)})
		}
	}
	for i, db := range []*gorm.DB{s.db, s.rdb} {
		name := "test:capture_reads_" + t.Name() + string(rune('a'+i))
		if err := db.Callback().Query().After("gorm:query").Register(name, record); err != nil {
			t.Fatal(err)
		}
		if err := db.Callback().Row().After("gorm:row").Register(name, record); err != nil {
			t.Fatal(err)
		}
		if err := db.Callback().Raw().After("gorm:raw").Register(name+"raw", record); err != nil {
			t.Fatal(err)
		}
	}
	fn()
	mu.Lock()
	on = false
	mu.Unlock()
	return out
}

// wholeTableReads are the tables a page may read whole: they hold one row
// per GPU or per catalog entry (what /gpus and the launch form list), or
// are cached until written (the catalog, the price list, the settings).
var wholeTableReads = []string{"gpu_states", "gpu_allocations", "gpu_unit_allocations", "flavors", "images", "prices",
	"price_tiers", "settings", "priority_classes", "goose_db_version"}

// byUserKnown lists statements that filter on the caller but reach the
// caller's rows through another index, walking every user's rows of the
// period (a cost that follows the portal, not the caller). Empty it as
// they are fixed; a new one fails the test.
var byUserKnown = map[string]string{}

// TestPageQueriesUseIndexes runs the store methods each hot page calls
// (/, /api/v1/workbenches, /usage, /gpus, /admin/billing: the same calls
// their handlers make, for one user) and EXPLAINs every statement they
// actually issue. Unlike TestHotQueriesUseIndexes it does not rebuild the
// statements: a method that gains a query gains its check.
func TestPageQueriesUseIndexes(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	const user = 7
	month := MonthStart(time.Now())
	end := month.AddDate(0, 1, 0)
	ids := []string{"wb-a", "wb-b"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Methods that read through the raw pool (EnergySummary) are not
	// captured: their statements are added from the builder they use.
	var raw []capturedQuery
	energy := func(by string, userID int64) {
		_, err := s.EnergySummary(ctx, month, end, by, userID)
		must(err)
		q, args, err := energySummaryQuery(month, end, by, userID)
		must(err)
		raw = append(raw, capturedQuery{sql: q, vars: args})
	}
	// perUser marks the pages whose every read is the caller's.
	perUser := map[string]bool{"/ and /api/v1/workbenches": true, "/usage": true}
	pages := map[string]func(){
		// The caller's workbenches, their live cost, the budget banner.
		"/ and /api/v1/workbenches": func() {
			_, err := s.ListWorkbenches(ctx, user)
			must(err)
			_, err = s.IntervalsToBillOf(ctx, 0, ids)
			must(err)
			_, err = s.WorkbenchCharges(ctx, ids)
			must(err)
			_, err = s.EffectiveQuota(ctx, user)
			must(err)
			_, err = s.MonthTotals(ctx, user, month)
			must(err)
			_, err = s.IntervalsToBillOf(ctx, user, nil)
			must(err)
			_, err = s.StorageToBillOf(ctx, user)
			must(err)
			// Every page: the top bar's unread notifications.
			_, err = s.UnreadNotifications(ctx, user)
			must(err)
		},
		"/usage": func() {
			_, _, err := s.UsageSummary(ctx, month, end, "workbench", user)
			must(err)
			_, _, err = s.StatementPage(ctx, user, month, end, 100, 100)
			must(err)
			energy("workbench", user)
			_, _, err = s.ElectricityPrice(ctx)
			must(err)
		},
		// Every GPU, the queue, the active workbenches holding GPUs, the
		// bookings from now on.
		"/gpus": func() {
			_, err := s.GPUStates(ctx)
			must(err)
			_, err = s.GPUAllocations(ctx)
			must(err)
			_, err = s.UnitAllocations(ctx)
			must(err)
			_, err = s.ListWorkbenches(ctx, 0, StateQueued)
			must(err)
			_, err = s.ListWorkbenches(ctx, 0, ActiveStates...)
			must(err)
			_, err = s.Reservations(ctx, time.Now())
			must(err)
		},
		// A page of users' home storage and effective limits (the storage
		// column and bar), searched by user, never every user's.
		"/admin/users and /admin/quotas": func() {
			_, err := s.StorageUsedOf(ctx, []int64{user, user + 1})
			must(err)
			_, err = s.EffectiveQuotasOf(ctx, []int64{user, user + 1})
			must(err)
		},
		// The month's groups: the whole month by design, read from the
		// monthly rollup, never the whole ledger.
		"/admin/billing": func() {
			for _, by := range []string{"user", "workbench", "group"} {
				_, _, err := s.UsageSummary(ctx, month, end, by, 0)
				must(err)
				energy(by, 0)
			}
		},
	}
	for page, run := range pages {
		t.Run(page, func(t *testing.T) {
			raw = nil
			queries := captureReads(t, s, run)
			queries = append(queries, raw...)
			if len(queries) == 0 {
				t.Fatal("no statement captured")
			}
			for _, q := range queries {
				plan := explainCaptured(t, s, q)
				for _, step := range plan {
					if strings.HasPrefix(step, "SCAN ") && !wholeTableStep(step) {
						t.Errorf("full scan:\n  %s\nplan: %q", q.sql, plan)
					}
				}
				// The caller's rows are searched by user, not found by
				// walking a period of everyone's.
				if perUser[page] && strings.Contains(q.sql, "user_id = ?") && !strings.Contains(strings.Join(plan, "\n"), "user_id=?") {
					if why, ok := knownByUser(q.sql); ok {
						t.Logf("TODO: not searched by user (%s): %s", why, q.sql)
					} else {
						t.Errorf("the caller's rows are not searched by user:\n  %s\nplan: %q", q.sql, plan)
					}
				}
				t.Logf("%s\n  plan: %q", q.sql, plan)
			}
		})
	}
}

func knownByUser(sql string) (string, bool) {
	for tbl, why := range byUserKnown {
		if strings.Contains(sql, "FROM "+tbl+" ") || strings.Contains(sql, "FROM `"+tbl+"`") {
			return tbl + ": " + why, true
		}
	}
	return "", false
}

// wholeTableStep tells a scan of a table listed in wholeTableReads.
func wholeTableStep(step string) bool {
	f := strings.Fields(step)
	if len(f) < 2 {
		return false
	}
	for _, tbl := range wholeTableReads {
		if f[1] == tbl {
			return true
		}
	}
	return false
}

func explainCaptured(t *testing.T, s *Store, q capturedQuery) []string {
	t.Helper()
	rows, err := s.sql.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q.sql, q.vars...)
	if err != nil {
		t.Fatalf("explain %s: %v", q.sql, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

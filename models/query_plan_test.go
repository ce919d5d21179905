package models

import (
	"context"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// TestHotQueriesUseIndexes runs EXPLAIN QUERY PLAN on the queries every
// page view makes for its caller (issue 15) and fails on a full scan of a
// table: their cost must follow what the caller owns, not what the portal
// holds. The statements are the ones the store runs (the same builders).
func TestHotQueriesUseIndexes(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	ids := []string{"wb-a", "wb-b"}
	cases := map[string]func(tx *gorm.DB) *gorm.DB{
		"ListWorkbenches(owner)": func(tx *gorm.DB) *gorm.DB {
			return listWorkbenchesQuery(tx, 7, nil).Find(&[]Workbench{})
		},
		"IntervalsToBillOf(workbenches)": func(tx *gorm.DB) *gorm.DB {
			return intervalsToBillQuery(tx, 0, ids).Find(&[]UsageInterval{})
		},
		"IntervalsToBillOf(user)": func(tx *gorm.DB) *gorm.DB {
			return intervalsToBillQuery(tx, 7, nil).Find(&[]UsageInterval{})
		},
		"StorageToBillOf(user)": func(tx *gorm.DB) *gorm.DB {
			return storageToBillQuery(tx, 7).Find(&[]StorageInterval{})
		},
		"EffectiveQuota(groups)": func(tx *gorm.DB) *gorm.DB {
			return tx.Where("scope = ? AND subject_id IN (SELECT group_id FROM group_members WHERE user_id = ?)", ScopeGroup, 7).Find(&[]quotaRow{})
		},
		// Every reconciliation, on every workbench ever deleted.
		"PendingDeletes": func(tx *gorm.DB) *gorm.DB {
			return pendingDeletesQuery(tx).Find(&[]Workbench{})
		},
		"MonthTotals": func(tx *gorm.DB) *gorm.DB {
			var n []int64
			return tx.Raw(`SELECT COALESCE(SUM(amount_micros), 0) FROM ledger_entries WHERE user_id = ? AND period_start >= ?`, 7, time.Now()).Scan(&n)
		},
		"StatementPage": func(tx *gorm.DB) *gorm.DB {
			return statementQuery(tx, 7, time.Now().AddDate(0, -1, 0), time.Now()).Offset(100).Limit(100).Find(&[]LedgerEntry{})
		},
		// /usage: one user's month (the monthly rollup) and a span that
		// is not whole months (the ledger itself), by workbench.
		"UsageSummary(user, month)": func(tx *gorm.DB) *gorm.DB {
			month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			q, err := usageSummaryQuery(tx, month, month.AddDate(0, 1, 0), "workbench", 7)
			if err != nil {
				t.Fatal(err)
			}
			return q.Scan(&[]UsageItem{})
		},
		"UsageSummary(user, days)": func(tx *gorm.DB) *gorm.DB {
			day := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
			q, err := usageSummaryQuery(tx, day, day.AddDate(0, 0, 5), "workbench", 7)
			if err != nil {
				t.Fatal(err)
			}
			return q.Scan(&[]UsageItem{})
		},
		"WorkbenchCharges": func(tx *gorm.DB) *gorm.DB {
			var rows []struct{ WorkbenchID string }
			return workbenchChargesQuery(tx, ids).Scan(&rows)
		},
		// Every SSH connection, before its key has signed.
		"UserBySSHKey": func(tx *gorm.DB) *gorm.DB {
			return tx.Where("fingerprint = ? AND verified_at IS NOT NULL", "SHA256:x").Find(&[]SSHKey{})
		},
		"PendingSSHKey": func(tx *gorm.DB) *gorm.DB {
			return tx.Where("verify_code = ? AND fingerprint = ? AND verified_at IS NULL", "abcdefghij", "SHA256:x").Find(&[]SSHKey{})
		},
		// Every load of a workbench page: the owner's list of
		// administrators' views, and an administrator's view being recorded.
		"AuditsOn(workbench)": func(tx *gorm.DB) *gorm.DB {
			return auditsOnQuery(tx, ActionViewAsAdmin, "wb-a", time.Now(), 5).Scan(&[]auditWithTotal{})
		},
		"WriteViewAudit(last by actor)": func(tx *gorm.DB) *gorm.DB {
			return lastAuditQuery(tx, ActionViewAsAdmin, "wb-a", "admin").Find(&[]AuditEntry{})
		},
		"attachGPUs": func(tx *gorm.DB) *gorm.DB {
			return tx.Where("workbench_id IN ?", ids).Order("gpu_uuid").Find(&[]gpuAllocation{})
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			sql := s.db.WithContext(ctx).ToSQL(build)
			plan := explainCaptured(t, s, capturedQuery{sql: sql})
			if len(plan) == 0 {
				t.Fatalf("no plan for %s", sql)
			}
			// A user's usage reads by user: the month alone would walk
			// every user's rows of that month.
			if strings.HasPrefix(name, "UsageSummary(user") && !strings.Contains(strings.Join(plan, "\n"), "user_id=?") {
				t.Errorf("%s does not search by user: %q", name, plan)
			}
			// A statement's lines read their tier from their usage
			// interval, found by its primary key (one lookup a line).
			if name == "StatementPage" && !hasStep(plan, "SEARCH iv USING INTEGER PRIMARY KEY (rowid=?)") {
				t.Errorf("%s does not read each line's interval by its key:\n  %s\nplan: %q", name, sql, plan)
			}
			for _, step := range plan {
				// "SCAN t" reads every row of t; "SCAN t USING [COVERING]
				// INDEX i" walks a whole index, also a full scan.
				if strings.HasPrefix(step, "SCAN ") {
					t.Errorf("full scan in %s:\n  %s\nplan: %q", name, sql, plan)
				}
			}
			t.Logf("%s: %q", name, plan)
		})
	}
}

// hasStep reports whether plan has a step that starts with want
// (a join's step ends with "LEFT-JOIN").
func hasStep(plan []string, want string) bool {
	for _, step := range plan {
		if strings.HasPrefix(step, want) {
			return true
		}
	}
	return false
}

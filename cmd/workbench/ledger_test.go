package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// `workbench ledger credit|reverse` append audited corrections with a
// reason; without one they refuse and append nothing.
func TestLedgerCLI(t *testing.T) {
	dir := portalData(t)
	if _, _, err := runCLI(t, "ada-password-1\n", "user", "add", "ada", "--password-stdin", "--data-dir", dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "", "ledger", "credit", "ada", "12.50", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "reason") {
		t.Fatalf("a credit without a reason: %v", err)
	}
	out, _, err := runCLI(t, "", "ledger", "credit", "ada", "12.50", "--reason", "outage on node 3", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "credit of 12.50 to ada") {
		t.Fatalf("credit: %q %v", out, err)
	}
	ctx := context.Background()
	s, err := models.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, _ := s.UserByUsername(ctx, "ada")
	lines, _ := s.Statement(ctx, u.ID, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
	if len(lines) != 1 || lines[0].AmountMicros != -12_500_000 || lines[0].Note != "outage on node 3" || lines[0].CreatedBy != "cli" {
		t.Fatalf("ledger after the credit: %+v", lines)
	}
	out, _, err = runCLI(t, "", "ledger", "reverse", "#"+itoa(lines[0].ID), "--reason", "credited the wrong user", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "reverses "+itoa(lines[0].ID)) {
		t.Fatalf("reverse: %q %v", out, err)
	}
	if _, _, err := runCLI(t, "", "ledger", "reverse", itoa(lines[0].ID), "--reason", "again", "--data-dir", dir); err == nil || err.Error() != "the line ids: line "+itoa(lines[0].ID)+" was already reversed" {
		t.Fatalf("a line reversed twice: %v", err)
	}
	m, _ := s.MonthTotals(ctx, u.ID, models.MonthStart(time.Now()))
	if amount := m.AmountMicros; amount != 0 {
		t.Fatalf("credit and its reversal net to %d, want 0", amount)
	}
	audit, _ := s.ListAudit(ctx, 10)
	n := 0
	for _, a := range audit {
		if strings.HasPrefix(a.Action, "ledger.") && a.Actor == "cli" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d audit entries, want 2", n)
	}
	// The confirmation says the amount booked, to the micro-unit (0.105
	// read "credit of 0.11").
	if out, _, err := runCLI(t, "", "ledger", "credit", "ada", "0.105", "--reason", "exact", "--data-dir", dir); err != nil || !strings.Contains(out, "credit of 0.105 to ada") {
		t.Fatalf("credit 0.105: %q %v", out, err)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// `ledger credit ada -5`: a negative amount is no flag but a wrong
// amount, and the refusal says so and what takes money back (a reversal);
// it read "flag provided but not defined: -5" with the flag list. The
// amount after "--", and a reason that starts with "-", read the same as
// before. Nothing is appended.
func TestLedgerCreditNegativeAmount(t *testing.T) {
	dir := portalData(t)
	if _, _, err := runCLI(t, "ada-password-1\n", "user", "add", "ada", "--password-stdin", "--data-dir", dir); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"ledger", "credit", "ada", "-5", "--reason", "typo", "--data-dir", dir},
		{"ledger", "credit", "--reason", "typo", "ada", "-12.50", "--data-dir", dir},
		{"ledger", "credit", "ada", "--reason", "typo", "--data-dir", dir, "--", "-5"},
		{"ledger", "credit", "ada", "-5", "--data-dir", dir}, // the amount before the missing reason
	} {
		_, stderr, err := runCLI(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), "must be positive") || !strings.Contains(err.Error(), "workbench ledger reverse") {
			t.Errorf("%v: %v, want the amount refused, saying a reversal takes money back", args, err)
		}
		if strings.Contains(stderr, "flag provided but not defined") || err != nil && strings.Contains(err.Error(), "flag") {
			t.Errorf("%v: read the amount as a flag: %v %q", args, err, stderr)
		}
	}
	// A word for an amount says what an amount looks like, once.
	if _, _, err := runCLI(t, "", "ledger", "credit", "ada", "abc", "--reason", "typo", "--data-dir", dir); err == nil ||
		err.Error() != `amount "abc": enter an amount such as 12 or 12.50` {
		t.Errorf("amount abc: %v", err)
	}
	// A reason may start with "-": the flag takes the next word.
	out, _, err := runCLI(t, "", "ledger", "credit", "ada", "5", "--reason", "-5 off for the outage", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "credit of 5.00 to ada (-5 off for the outage)") {
		t.Fatalf("a reason starting with '-': %q %v", out, err)
	}
	ctx := context.Background()
	s, err := models.Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, _ := s.UserByUsername(ctx, "ada")
	lines, _ := s.Statement(ctx, u.ID, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
	if len(lines) != 1 || lines[0].AmountMicros != -5_000_000 {
		t.Fatalf("ledger: %+v, want only the one credit of 5", lines)
	}
}

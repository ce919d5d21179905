package templates_test

import (
	"context"
	"encoding/csv"
	"os"
	"testing"

	"workbench/templates"
	"workbench/templates/i18n"
)

// Every tier of the shipped cloud price list reads in Chinese on the
// calculator: "monthly" (a month's lease) was shown in English seven times.
func TestEveryShippedTierIsNamedInChinese(t *testing.T) {
	f, err := os.Open("../models/seeddata/cloud-gpu-prices.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("price list: %v (%d rows)", err, len(rows))
	}
	col := -1
	for i, h := range rows[0] {
		if h == "tier" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no tier column in %v", rows[0])
	}
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		tier := r[col]
		if seen[tier] {
			continue
		}
		seen[tier] = true
		if got := templates.TierName(zh, tier); got == tier {
			t.Errorf("tier %q is shown in English on the Chinese calculator", tier)
		}
	}
}

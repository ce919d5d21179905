package handlers

import (
	"context"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates/i18n"
)

// A statement line's quantity and rate unit are in the reader's language;
// English stays as the CSV and the API keep it.
func TestStatementLineInTheReadersLanguage(t *testing.T) {
	zh := i18n.WithLocale(context.Background(), i18n.Chinese)
	en := i18n.WithLocale(context.Background(), i18n.English)
	for _, c := range []struct {
		lc       context.Context
		resource string
		milli    int64
		want     string
	}{
		{zh, pricing.CPU, 32000, "32 核"},
		{zh, pricing.CPU, 1000, "1 核"},
		{zh, pricing.MIG, 2000, "2 MIG 实例"},
		{zh, pricing.Slice, 1000, "1 GPU 切片"},
		{zh, pricing.GPU, 4000, "4 GPU"},
		{en, pricing.CPU, 32000, "32 cores"},
		{en, pricing.CPU, 1000, "1 core"},
		{en, pricing.MIG, 2000, "2 MIG instance"},
		// Unused booked units (on average over the window), not GiB.
		{en, models.ResourceReservation, 1500, "1.5 units"},
		{zh, models.ResourceReservation, 1500, "1.5 个单元"},
		{en, models.ResourceCredit, 0, "—"},
	} {
		if got := quantityText(c.lc, c.resource, c.milli); got != c.want {
			t.Errorf("%s %s %d: %q, want %q", i18n.FromContext(c.lc).Lang(), c.resource, c.milli, got, c.want)
		}
	}
	at := time.Date(2026, 12, 3, 9, 14, 5, 0, time.UTC)
	l := models.LedgerEntry{Resource: pricing.CPU, QuantityMilli: 32000, RateMicros: 20_000, Seconds: 60, PeriodStart: at, PeriodEnd: at.Add(time.Minute)}
	h := &Handler{}
	if got := h.statementLine(zh, l, nil, func(int64) string { return "" }).Rate; got != "0.02 / 核时" {
		t.Errorf("zh rate %q, want 0.02 / 核时", got)
	}
	if got := h.statementLine(en, l, nil, func(int64) string { return "" }).Rate; got != "0.02 / core-hour" {
		t.Errorf("en rate %q, want 0.02 / core-hour", got)
	}
}

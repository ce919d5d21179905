package models

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// The shipped catalog parses, keeps every row's source and date (blank
// where the research had none), and stores multi-GPU offers per GPU.
func TestShippedCloudPrices(t *testing.T) {
	rows, err := ParseCloudPriceCSV(bytes.NewReader(cloudPriceSeed))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 46 {
		t.Fatalf("rows %d, want 46", len(rows))
	}
	byOffer := map[string]CloudPrice{}
	for _, r := range rows {
		if r.Source == "" {
			t.Errorf("%s %s has no source", r.Provider, r.Offer)
		}
		byOffer[r.Provider+"|"+r.Offer+"|"+r.Tier] = r
	}
	aws := byOffer["AWS|p5.48xlarge|on-demand"]
	if aws.PriceMicros != 6_880_000 || aws.GPUsInOffer != 8 || aws.AsOf != "2026-09-10" || aws.Currency != "USD" {
		t.Errorf("AWS p5: %+v", aws)
	}
	seed := byOffer["Chinese cloud market (2023 Q3 survey, provider unnamed)|A100 80GB spot instance|spot"]
	if seed.PriceMicros != 4_000_000 || seed.Currency != "CNY" || seed.AsOf != "2023-Q3" || seed.Source != "market article on Chinese GPU clouds (2023 Q3 figures)" {
		t.Errorf("seed spot: %+v", seed)
	}
	// No row is named after an internal file (the research documents are
	// "seed 000", "seed 001" … inside the project).
	for _, r := range rows {
		for _, f := range []string{r.Provider, r.Source, r.Note, r.Offer} {
			if strings.Contains(strings.ToLower(f), "seed 0") {
				t.Errorf("a catalog row names an internal file: %q (%s %s)", f, r.Provider, r.Offer)
			}
		}
	}
	if r := byOffer["Azure|NC24ads_A100_v4|on-demand"]; r.AsOf != "" || r.PriceMicros != 3_673_000 {
		t.Errorf("undated row: %+v", r)
	}
	if r := byOffer["Chinese cloud market (2023 Q3 survey, DGX rental provider)|DGX A100 weekly rental|reserved-weekly"]; r.PriceMicros != 20_830_000 {
		t.Errorf("weekly rental: %+v", r)
	}
}

func TestSeedCloudPricesOnce(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	n, err := s.SeedCloudPrices(ctx)
	if err != nil || n != 46 {
		t.Fatalf("first seed: %d %v", n, err)
	}
	if n, err := s.SeedCloudPrices(ctx); err != nil || n != 0 {
		t.Fatalf("second seed: %d %v", n, err)
	}
	// An admin who empties the catalog keeps it empty across restarts.
	rows, _ := s.ListCloudPrices(ctx)
	for _, r := range rows {
		if err := s.DeleteCloudPrice(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := s.SeedCloudPrices(ctx); n != 0 {
		t.Fatalf("re-seeded %d rows into an emptied catalog", n)
	}
	if err := s.DeleteCloudPrice(ctx, rows[0].ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}

func TestCloudPriceValidationAndCRUD(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	valid := func() CloudPrice {
		return CloudPrice{Provider: " Acme ", Offer: "a1", GPUModel: "H100-80GB", Tier: "On-Demand", Currency: "usd", PriceMicros: 990_000, AsOf: "2026-10", Source: "sheet", GPUsInOffer: 1}
	}
	for _, c := range []struct {
		mut   func(*CloudPrice)
		field string
	}{
		{func(p *CloudPrice) { p.Provider = "" }, "provider"},
		{func(p *CloudPrice) { p.Source = "" }, "source"},
		{func(p *CloudPrice) { p.Offer = "a\nb" }, "offer"},
		{func(p *CloudPrice) { p.Tier = "cheap" }, "tier"},
		{func(p *CloudPrice) { p.Currency = "dollar" }, "currency"},
		{func(p *CloudPrice) { p.Currency = "XYZ" }, "currency"}, // three letters, no currency
		{func(p *CloudPrice) { p.Currency = "XXX" }, "currency"}, // ISO's "no currency"
		{func(p *CloudPrice) { p.PriceMicros = 0 }, "price_per_gpu_hour"},
		{func(p *CloudPrice) { p.PriceMicros = -5 }, "price_per_gpu_hour"},
		{func(p *CloudPrice) { p.GPUsInOffer = 65 }, "gpus_in_offer"},
		{func(p *CloudPrice) { p.GPUsInOffer = 0 }, "gpus_in_offer"}, // not silently 1
		{func(p *CloudPrice) { p.AsOf = "2999-01-01" }, "as_of"},     // not in the future
		{func(p *CloudPrice) { p.AsOf = "2026-13-01" }, "as_of"},
		{func(p *CloudPrice) { p.AsOf = "yesterday" }, "as_of"},
	} {
		p := valid()
		c.mut(&p)
		var ve *ValidationError
		if err := s.CreateCloudPrice(ctx, &p); !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: %v", c.field, err)
		}
	}
	p := valid()
	if err := s.CreateCloudPrice(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if p.Provider != "Acme" || p.Tier != "on-demand" || p.Currency != "USD" || p.GPUsInOffer != 1 {
		t.Errorf("not normalised: %+v", p)
	}
	dup := valid()
	if err := s.CreateCloudPrice(ctx, &dup); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate: %v", err)
	}
	p.PriceMicros, p.AsOf = 1_250_000, "2026-Q4"
	if err := s.UpdateCloudPrice(ctx, &p); err != nil {
		t.Fatal(err)
	}
	got, err := s.CloudPriceByID(ctx, p.ID)
	if err != nil || got.PriceMicros != 1_250_000 || got.AsOf != "2026-Q4" || !got.CreatedAt.Equal(p.CreatedAt) {
		t.Fatalf("after update: %+v %v", got, err)
	}
	if _, err := s.CloudPriceByID(ctx, 9999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing row: %v", err)
	}
}

func TestParseMoneyMicros(t *testing.T) {
	for in, want := range map[string]int64{"3.431": 3_431_000, "12": 12_000_000, "0.000001": 1, ".5": 500_000, "7.": 7_000_000} {
		if got, err := ParseMoneyMicros(in); err != nil || got != want {
			t.Errorf("%q: %d %v", in, got, err)
		}
	}
	for _, in := range []string{"", ".", "-1", "1e3", "1,5", "0.0000001", "NaN", strings.Repeat("9", 13)} {
		if got, err := ParseMoneyMicros(in); err == nil {
			t.Errorf("%q parsed as %d", in, got)
		}
	}
}

func TestCalculatorSettings(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if err := s.SetTierDiscount(ctx, "spot", 5000); err != nil {
		t.Fatal(err)
	}
	if err := s.SetExchangeRate(ctx, "cny", 140_000, "2026-11-30", "a central bank's reference rate"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.SetTierDiscount(ctx, "on-demand", 100), s.SetTierDiscount(ctx, "spot", 10000),
		s.SetExchangeRate(ctx, "yuan", 1, "", ""), s.SetExchangeRate(ctx, "EUR", -1, "", ""),
		s.SetExchangeRate(ctx, "EUR", 1_100_000, "next week", ""), s.SetExchangeRate(ctx, "EUR", 1_100_000, "2999-01-01", "")} {
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("accepted: %v", err)
		}
	}
	cs, err := s.CalculatorSettings(ctx)
	if err != nil || cs.DiscountsBps["spot"] != 5000 || cs.FXMicros["CNY"] != 140_000 || len(cs.DiscountsBps) != 1 {
		t.Fatalf("settings %+v %v", cs, err)
	}
	if m := cs.FXMeta["CNY"]; m.AsOf != "2026-11-30" || m.Source != "a central bank's reference rate" {
		t.Errorf("rate's date and source: %+v", m)
	}
	// Blank date and source: today, "set by an admin".
	if err := s.SetExchangeRate(ctx, "EUR", 1_100_000, "", ""); err != nil {
		t.Fatal(err)
	}
	cs, _ = s.CalculatorSettings(ctx)
	if m := cs.FXMeta["EUR"]; m.AsOf != s.now().UTC().Format("2006-01-02") || m.Source != "set by an admin" {
		t.Errorf("blank date and source: %+v", m)
	}
	for _, cur := range []string{"CNY", "EUR"} {
		if err := s.SetExchangeRate(ctx, cur, 0, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if cs, _ := s.CalculatorSettings(ctx); len(cs.FXMicros) != 0 || len(cs.FXMeta) != 0 {
		t.Fatalf("rate not removed: %+v", cs)
	}
}

// Migration 00060 renames the rows an install seeded from the first
// catalog ("Provider B in seed 000") to their plain descriptions.
func TestCloudPricesPlainNamesMigration(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	old := []CloudPrice{
		{Provider: "Provider B in seed 000", Offer: "A100 spot instance old", GPUModel: "A100", GPUsInOffer: 1, Tier: "spot", Currency: "CNY", PriceMicros: 3_500_000, AsOf: "2023-Q3", Source: "seed 000"},
		{Provider: "Provider in seed 002 (unnamed)", Offer: "V100 old", GPUModel: "V100", GPUsInOffer: 1, Tier: "on-demand", Currency: "CNY", PriceMicros: 3_500_000, Source: "seed 002"},
	}
	for i := range old {
		if err := s.CreateCloudPrice(ctx, &old[i]); err != nil {
			t.Fatal(err)
		}
	}
	b, err := migrationFiles.ReadFile("migrations/00060_cloud_prices_plain_names.sql")
	if err != nil {
		t.Fatal(err)
	}
	up, _, _ := strings.Cut(strings.SplitN(string(b), "-- +goose Up", 2)[1], "-- +goose Down")
	if _, err := s.sql.ExecContext(ctx, up); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"Chinese cloud market (2023 Q3 survey, spot-focused provider)", "Chinese cloud market (per-second billing provider, unnamed)"} {
		got, _ := s.CloudPriceByID(ctx, old[i].ID)
		if got.Provider != want || strings.Contains(got.Source, "seed") {
			t.Errorf("row %d after the migration: %q from %q", i, got.Provider, got.Source)
		}
	}
}

package models

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/currency"
	"gorm.io/gorm"

	"workbench/models/pricing"
)

// cloudPriceSeed is the researched cloud price list (shared/data in the
// project), shipped inside the binary so that an air-gapped installation
// starts with sourced prices.
//
//go:embed seeddata/cloud-gpu-prices.csv
var cloudPriceSeed []byte

// CloudPrice is one row of the calculator's cloud price catalog: what a
// cloud charges per GPU-hour for an offer, with the date it was seen and
// where. Multi-GPU offers are stored per GPU.
type CloudPrice struct {
	ID          int64     `gorm:"primaryKey" json:"id"`
	Provider    string    `json:"provider"`
	Offer       string    `json:"offer"`
	GPUModel    string    `gorm:"column:gpu_model" json:"gpu_model"`
	GPUsInOffer int       `gorm:"column:gpus_in_offer" json:"gpus_in_offer"`
	Tier        string    `json:"tier"`
	Currency    string    `json:"currency"`
	PriceMicros int64     `gorm:"column:price_micros" json:"price_per_gpu_hour_micros"`
	AsOf        string    `gorm:"column:as_of" json:"as_of"`
	Source      string    `json:"source"`
	Note        string    `json:"note"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Cloud price tiers the catalog accepts: the four the calculator compares,
// plus other reserved terms a source may quote ("reserved-weekly").
var CloudTiers = []string{"on-demand", "spot", "reserved-1y", "reserved-3y"}

var (
	otherReservedRe = regexp.MustCompile(`^(reserved-[a-z0-9]{1,20}|weekly|monthly|yearly)$`)
	currencyRe      = regexp.MustCompile(`^[A-Z]{3}$`)
	// asOfRe: a day, a month, a year or a quarter, as sources give them.
	asOfRe = regexp.MustCompile(`^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?|-Q[1-4])?$`)
)

// ISOCurrency reports whether code is a currency of ISO 4217 in capitals
// ("USD"), not merely three letters: "XYZ" was taken, and the calculator
// then compared its prices as if they were money it could convert. The
// codes for "no currency" (XXX) and testing (XTS) are no prices' either.
func ISOCurrency(code string) bool {
	if !currencyRe.MatchString(code) || code == "XXX" || code == "XTS" {
		return false
	}
	_, err := currency.ParseISO(code)
	return err == nil
}

// maxCloudPriceMicros bounds a price per GPU-hour (a million units).
const maxCloudPriceMicros = 1_000_000 * 1_000_000

// Validate normalises and checks a catalog row, naming the field at fault.
func (p *CloudPrice) Validate() error {
	p.Provider = strings.TrimSpace(p.Provider)
	p.Offer = strings.TrimSpace(p.Offer)
	p.GPUModel = strings.TrimSpace(p.GPUModel)
	p.Tier = strings.ToLower(strings.TrimSpace(p.Tier))
	p.Currency = strings.ToUpper(strings.TrimSpace(p.Currency))
	p.AsOf = strings.TrimSpace(p.AsOf)
	p.Source = strings.TrimSpace(p.Source)
	p.Note = strings.TrimSpace(p.Note)
	for _, f := range []struct{ name, v string }{{"provider", p.Provider}, {"offer", p.Offer}, {"gpu_model", p.GPUModel}, {"source", p.Source}} {
		if f.v == "" {
			return invalid(f.name, "is required")
		}
		// 300: a source may be a title followed by its address.
		if len(f.v) > 300 || strings.ContainsAny(f.v, "\r\n\t") {
			return invalid(f.name, "must be one line of at most 300 characters")
		}
	}
	if len(p.Note) > 500 || strings.ContainsAny(p.Note, "\r\n") {
		return invalid("note", "must be one line of at most 500 characters")
	}
	if !contains(CloudTiers, p.Tier) && !otherReservedRe.MatchString(p.Tier) {
		return invalid("tier", "must be on-demand, spot, reserved-1y or reserved-3y")
	}
	if !ISOCurrency(p.Currency) {
		return invalid("currency", "must be a currency code of ISO 4217 such as USD or CNY")
	}
	if p.GPUsInOffer < 1 || p.GPUsInOffer > 64 {
		return invalid("gpus_in_offer", "must be between 1 and 64")
	}
	if p.PriceMicros <= 0 || p.PriceMicros > maxCloudPriceMicros {
		return invalid("price_per_gpu_hour", "must be more than 0 and at most 1,000,000")
	}
	if p.AsOf != "" && !asOfRe.MatchString(p.AsOf) {
		return invalid("as_of", "must be a date such as 2026-09-10, a month (2026-07), a year or a quarter (2023-Q3), or blank")
	}
	return asOfNotInFuture(p.AsOf, time.Now())
}

// ParseMoneyMicros parses a non-negative decimal amount ("3.431") into
// micro-units exactly; more than 6 decimals is refused, not rounded.
func ParseMoneyMicros(s string) (int64, error) {
	s = strings.TrimSpace(s)
	whole, _, _ := strings.Cut(s, ".")
	m, err := pricing.ParseMicros(s)
	switch {
	case s == "" || s == "." || len(whole) > 12 || errors.Is(err, pricing.ErrAmountPrecision) || errors.Is(err, pricing.ErrAmountRange):
		return 0, errors.New("must be an amount such as 3.25 (at most 6 decimals)")
	case err != nil:
		return 0, errors.New("must be an amount such as 3.25 (digits and one dot)")
	}
	return int64(m), nil
}

// ParseCloudPriceCSV reads a catalog in the shipped CSV's layout (header:
// provider, offer, gpu_model, gpus_in_offer, tier, currency,
// price_per_gpu_hour, as_of, source, note). Every row is validated; the
// error names the line.
func ParseCloudPriceCSV(r io.Reader) ([]CloudPrice, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("cloud prices CSV: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, want := range []string{"provider", "offer", "gpu_model", "tier", "currency", "price_per_gpu_hour", "source"} {
		if _, ok := col[want]; !ok {
			return nil, fmt.Errorf("cloud prices CSV: no %q column", want)
		}
	}
	var out []CloudPrice
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cloud prices CSV line %d: %w", line, err)
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		p := CloudPrice{Provider: get("provider"), Offer: get("offer"), GPUModel: get("gpu_model"), Tier: get("tier"),
			Currency: get("currency"), AsOf: get("as_of"), Source: get("source"), Note: get("note"), GPUsInOffer: 1}
		if n := get("gpus_in_offer"); n != "" {
			if p.GPUsInOffer, err = strconv.Atoi(n); err != nil {
				return nil, fmt.Errorf("cloud prices CSV line %d: gpus_in_offer %q is not a number", line, n)
			}
		}
		if p.PriceMicros, err = ParseMoneyMicros(get("price_per_gpu_hour")); err != nil {
			return nil, fmt.Errorf("cloud prices CSV line %d: price_per_gpu_hour %w", line, err)
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("cloud prices CSV line %d: %w", line, err)
		}
		out = append(out, p)
	}
}

// SeedCloudPricesKey records that the catalog was seeded, so that a catalog
// an admin emptied on purpose stays empty.
const seedCloudPricesKey = "cloud_prices_seeded"

// SeedCloudPrices fills the cloud price catalog from the shipped CSV once,
// at the first start; later starts (and concurrent ones) add nothing. It
// returns how many rows it added.
func (s *Store) SeedCloudPrices(ctx context.Context) (int, error) {
	rows, err := ParseCloudPriceCSV(bytes.NewReader(cloudPriceSeed))
	if err != nil {
		return 0, err
	}
	added := 0
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec("INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)", seedCloudPricesKey, s.now().Format(time.RFC3339))
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error // seeded before
		}
		now := s.now()
		for i := range rows {
			rows[i].CreatedAt, rows[i].UpdatedAt = now, now
			r := tx.Exec(`INSERT OR IGNORE INTO cloud_prices (provider, offer, gpu_model, gpus_in_offer, tier, currency,
				price_micros, as_of, source, note, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				rows[i].Provider, rows[i].Offer, rows[i].GPUModel, rows[i].GPUsInOffer, rows[i].Tier, rows[i].Currency,
				rows[i].PriceMicros, rows[i].AsOf, rows[i].Source, rows[i].Note, now, now)
			if r.Error != nil {
				return r.Error
			}
			added += int(r.RowsAffected)
		}
		return nil
	})
	return added, err
}

// ListCloudPrices returns the catalog by GPU model, provider, offer, tier.
func (s *Store) ListCloudPrices(ctx context.Context) ([]CloudPrice, error) {
	var out []CloudPrice
	err := s.db.WithContext(ctx).Order("gpu_model, provider, offer, tier, id").Find(&out).Error
	return out, err
}

// CloudPriceByID returns one catalog row.
func (s *Store) CloudPriceByID(ctx context.Context, id int64) (*CloudPrice, error) {
	var p CloudPrice
	if err := s.db.WithContext(ctx).First(&p, id).Error; err != nil {
		return nil, notFound(err)
	}
	return &p, nil
}

// CreateCloudPrice validates and adds a catalog row.
func (s *Store) CreateCloudPrice(ctx context.Context, p *CloudPrice) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p.ID = 0
	p.CreatedAt, p.UpdatedAt = s.now(), s.now()
	err := s.db.WithContext(ctx).Create(p).Error
	if uniqueViolation(err) {
		return fmt.Errorf("%w: %s already lists %s for %s (%s, %s)", ErrConflict, p.Provider, p.Offer, p.GPUModel, p.Tier, p.Currency)
	}
	return err
}

// UpdateCloudPrice validates and replaces a catalog row.
func (s *Store) UpdateCloudPrice(ctx context.Context, p *CloudPrice) error {
	if err := p.Validate(); err != nil {
		return err
	}
	old, err := s.CloudPriceByID(ctx, p.ID)
	if err != nil {
		return err
	}
	p.CreatedAt, p.UpdatedAt = old.CreatedAt, s.now()
	err = s.db.WithContext(ctx).Save(p).Error
	if uniqueViolation(err) {
		return fmt.Errorf("%w: %s already lists %s for %s (%s, %s)", ErrConflict, p.Provider, p.Offer, p.GPUModel, p.Tier, p.Currency)
	}
	return err
}

// DeleteCloudPrice removes a catalog row.
func (s *Store) DeleteCloudPrice(ctx context.Context, id int64) error {
	res := s.db.WithContext(ctx).Delete(&CloudPrice{}, id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// Calculator settings live in the settings table under these prefixes.
const (
	discountKeyPrefix = "calculator.discount."
	fxKeyPrefix       = "calculator.fx."
	// fxMetaKeyPrefix holds "AS_OF\tSOURCE" of an admin's rate.
	fxMetaKeyPrefix = "calculator.fxmeta."
)

// CalculatorSettings are the admin's choices for the cloud comparison.
type CalculatorSettings struct {
	// DiscountsBps: basis points off on-demand for derived tiers (only
	// those set; the calculator has defaults for the rest).
	DiscountsBps map[string]int64 `json:"discounts_bps"`
	// FXMicros: micro-units of the portal currency per one unit of the key
	// currency.
	FXMicros map[string]int64 `json:"exchange_rates_micros"`
	// FXMeta: the date and source of each rate in FXMicros.
	FXMeta map[string]FXMeta `json:"exchange_rates_meta"`
}

// FXMeta is when an admin's exchange rate was seen and where.
type FXMeta struct {
	AsOf   string `json:"as_of"`
	Source string `json:"source"`
}

// CalculatorSettings reads the discounts and exchange rates set so far.
func (s *Store) CalculatorSettings(ctx context.Context) (CalculatorSettings, error) {
	out := CalculatorSettings{DiscountsBps: map[string]int64{}, FXMicros: map[string]int64{}, FXMeta: map[string]FXMeta{}}
	// Through gorm, so that from InTx it reads the transaction's own
	// writes: the audit row's "after" read the raw pool and recorded the
	// settings as they were before the change.
	rows, err := s.db.WithContext(ctx).Raw("SELECT key, value FROM settings WHERE key LIKE 'calculator.%'").Rows()
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return out, err
		}
		if cur, ok := strings.CutPrefix(k, fxMetaKeyPrefix); ok {
			asOf, source, _ := strings.Cut(v, "\t")
			out.FXMeta[cur] = FXMeta{AsOf: asOf, Source: source}
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue // written by a newer version: ignore rather than fail the page
		}
		if tier, ok := strings.CutPrefix(k, discountKeyPrefix); ok {
			out.DiscountsBps[tier] = n
		} else if cur, ok := strings.CutPrefix(k, fxKeyPrefix); ok {
			out.FXMicros[cur] = n
		}
	}
	for cur := range out.FXMeta {
		if _, ok := out.FXMicros[cur]; !ok {
			delete(out.FXMeta, cur) // a rate removed by an older version
		}
	}
	return out, rows.Err()
}

// SetTierDiscount sets the discount (basis points off on-demand, 0–99.99%)
// that derives tier where a provider does not list it.
func (s *Store) SetTierDiscount(ctx context.Context, tier string, bps int64) error {
	if tier != "spot" && tier != "reserved-1y" && tier != "reserved-3y" {
		return invalid("tier", "a discount applies to spot, reserved-1y or reserved-3y")
	}
	if bps < 0 || bps >= 10000 {
		return invalid("discount_"+tier, "must be between 0 and 99.99%%")
	}
	return s.SetSetting(ctx, discountKeyPrefix+tier, strconv.FormatInt(bps, 10))
}

// SetExchangeRate sets how many micro-units of the portal currency one unit
// of currency is worth, with the date it was seen (blank: today) and its
// source (blank: "set by an admin"); 0 removes the rate, and the shipped
// default (if any) is in force again.
func (s *Store) SetExchangeRate(ctx context.Context, currency string, micros int64, asOf, source string) error {
	currency = strings.ToUpper(strings.TrimSpace(currency))
	if !ISOCurrency(currency) {
		return invalid("currency", "must be a currency code of ISO 4217 such as CNY")
	}
	if micros < 0 || micros > maxCloudPriceMicros {
		return invalid("rate", "must be between 0 and 1,000,000")
	}
	if micros == 0 {
		return s.db.WithContext(ctx).Exec("DELETE FROM settings WHERE key IN (?, ?)", fxKeyPrefix+currency, fxMetaKeyPrefix+currency).Error
	}
	asOf, source = strings.TrimSpace(asOf), strings.TrimSpace(source)
	if asOf == "" {
		asOf = s.now().UTC().Format("2006-01-02")
	}
	if !asOfRe.MatchString(asOf) {
		return invalid("as_of", "must be a date such as 2026-09-10, a month (2026-07), a year or a quarter, or blank for today")
	}
	if err := asOfNotInFuture(asOf, s.now()); err != nil {
		return err
	}
	if source == "" {
		source = "set by an admin"
	}
	if len(source) > 300 || strings.ContainsAny(source, "\r\n\t") {
		return invalid("source", "must be one line of at most 300 characters")
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for k, v := range map[string]string{fxKeyPrefix + currency: strconv.FormatInt(micros, 10), fxMetaKeyPrefix + currency: asOf + "\t" + source} {
			if err := tx.Exec("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", k, v).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

package handlers

import (
	"context"
	"sort"
	"strconv"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// energyFigures is the measured energy of a statement's rows (SPEC §6
// rule 11), keyed as the usage summary keys them, and the electricity
// price that makes it an informational cost (never a charge).
type energyFigures struct {
	mJ     map[string]int64
	price  int64
	priced bool
}

func (h *Handler) energyFor(ctx context.Context, from, to time.Time, groupBy string, userID int64) (energyFigures, error) {
	var e energyFigures
	var err error
	if e.mJ, err = h.store.EnergySummary(ctx, from, to, groupBy, userID); err != nil {
		return e, err
	}
	e.price, e.priced, err = h.store.ElectricityPrice(ctx)
	return e, err
}

// cost is the energy cost of mJ in micro-units (0 without a price).
func (e energyFigures) cost(mJ int64) int64 {
	if !e.priced {
		return 0
	}
	return pricing.EnergyCost(mJ, e.price)
}

// total is the energy of every key.
func (e energyFigures) total() int64 {
	var t int64
	for _, mJ := range e.mJ {
		t += mJ
	}
	return t
}

// costText is the energy cost as a page shows it ("" without a price).
func (h *Handler) energyCostText(ctx context.Context, e energyFigures, mJ int64) string {
	if !e.priced {
		return ""
	}
	return h.amountText(ctx, e.cost(mJ))
}

// costCSV is the energy cost in micro-units for a CSV cell ("" without a price).
func (e energyFigures) costCSV(mJ int64) string {
	if !e.priced {
		return ""
	}
	return strconv.FormatInt(e.cost(mJ), 10)
}

// withEnergyKeys adds a zero-charge row for every key that drew energy but
// has no ledger line in the period yet (a run whose first hour is not
// billed), so the energy shown adds up to the total.
func withEnergyKeys(items []models.UsageItem, e energyFigures) []models.UsageItem {
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		seen[it.Key] = true
	}
	var extra []string
	for k := range e.mJ {
		if !seen[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		items = append(items, models.UsageItem{Key: k})
	}
	return items
}

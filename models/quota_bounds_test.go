package models

import (
	"errors"
	"testing"
)

// A budget is bounded (a billion in the currency): one at int64's top,
// which the API took, wrapped around once credits made the month's
// spending negative, and the user's workbenches were stopped as over budget.
func TestQuotaBudgetBounded(t *testing.T) {
	most := int64(MaxBudgetMicros)
	if err := (&Limits{BudgetPerMonthMicros: &most}).Validate(); err != nil {
		t.Fatalf("a budget of a billion: %v", err)
	}
	over := most + 1
	var ve *ValidationError
	if err := (&Limits{BudgetPerMonthMicros: &over}).Validate(); !errors.As(err, &ve) || ve.Field != "budget_per_month_micros" {
		t.Fatalf("a budget over a billion: %v; want invalid budget_per_month_micros", err)
	}
}

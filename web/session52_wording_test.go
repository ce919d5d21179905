package web_test

import (
	"net/http"
	"net/url"
	"testing"
)

// The credit form's errors name its one rule, "more than 0 and at most
// 1,000,000": -5 said "cannot be negative: enter 0 or more", and then 0
// said "must be more than 0"; an amount too large for the parser said
// "is too large" with no limit. A rate too large names the rate's range.
func TestMoneyFormErrorsNameTheRule(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "ada", "user")
	adminC, _ := mpAdmin(t, p)
	for amount, want := range map[string]string{
		"-5":             "must be more than 0 and at most 1,000,000",
		"0":              "must be more than 0 and at most 1,000,000",
		"99999999999999": "must be more than 0 and at most 1,000,000",
	} {
		code, _, body := mpPost(t, p, adminC, "/admin/billing/credit", url.Values{"user": {"ada"}, "amount": {amount}, "reason": {"goodwill"}})
		if got := mpDoc(t, body).Find(`[data-testid=credit-form] [data-testid=error-amount]`).Text(); code != http.StatusBadRequest || got != want {
			t.Errorf("credit of %s: %d, %q; want 400 %q", amount, code, got, want)
		}
	}
	code, _, body := mpPost(t, p, adminC, "/admin/prices", url.Values{"resource": {"cpu"}, "rate": {"99999999999999"}})
	if got, want := mpDoc(t, body).Find(`[data-testid=price-form] [data-testid=error-rate]`).Text(), "must be between 0 and 1,000,000 per unit"; code != http.StatusBadRequest || got != want {
		t.Errorf("a rate too large: %d, %q; want 400 %q", code, got, want)
	}
}

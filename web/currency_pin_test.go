package web_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"workbench/models"
	"workbench/web"
)

// The currency is the data's, not only the setting's: amounts are stored
// as bare micro-units, so restarting with another --currency relabelled
// every past charge (USD 2.50 read CNY 2.50) without a word. A portal
// whose ledger has lines refuses to start in another currency; one
// without charges yet takes the new setting.
func TestCurrencyCannotChangeUnderCharges(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	open := func(cur string) (*web.Server, error) {
		return openPortal(dir, func(c *web.Config) { c.Currency = cur })
	}
	srv, err := open("USD")
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	// No charge yet: setting the portal up in another currency is fine.
	srv, err = open("CNY")
	if err != nil {
		t.Fatalf("a portal without charges refused a new currency: %v", err)
	}
	u, err := srv.Store.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Store.Credit(ctx, u.ID, 1_000_000, "", "opening balance", "admin"); err != nil {
		t.Fatal(err)
	}
	srv.Close()

	_, err = open("USD")
	var changed *models.ErrCurrencyChanged
	if !errors.As(err, &changed) || changed.Stored != "CNY" || !strings.Contains(err.Error(), "Set it back to CNY") {
		t.Fatalf("restart in USD over CNY charges: %v; want ErrCurrencyChanged saying to set it back", err)
	}
	srv, err = open("CNY")
	if err != nil {
		t.Fatalf("restart in the data's own currency: %v", err)
	}
	srv.Close()
}

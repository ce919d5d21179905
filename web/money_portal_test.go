package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/docker/docker/client"

	"workbench/models"
)

// moneyPortal is the portal process the end-to-end money tests share:
// billing every second and no minimum charge (so the real running time is
// what is compared), the fake Jupyter image built, what its install makes on
// the engine removed at the end (registered before the portal starts, so it
// runs after the portal is gone). start adds alice, tokens and the image.
type moneyPortal struct {
	pp        *portalProc
	fakeRef   string
	installID string
	alice     string // alice's API token, once started
	admin     string // the admin's API token, once started
}

func newMoneyPortal(t *testing.T, ctx context.Context, cli *client.Client, env ...string) *moneyPortal {
	t.Helper()
	fakeRef := fakeJupyterImage(t)
	pp := newPortalProc(t)
	pp.env = append(pp.env, "WORKBENCH_BILLING_INTERVAL=1s", "WORKBENCH_MIN_CHARGE=0")
	pp.env = append(pp.env, env...)
	mp := &moneyPortal{pp: pp, fakeRef: fakeRef}
	store := mp.openStore(t, ctx)
	var err error
	mp.installID, err = store.InstallID(ctx)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	cleanupInstall(t, cli, mp.installID)
	return mp
}

// openStore opens the portal's database beside it (the caller closes it).
func (mp *moneyPortal) openStore(t *testing.T, ctx context.Context) *models.Store {
	t.Helper()
	s, err := models.Open(ctx, mp.pp.dataDir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// start starts the portal, adds alice, makes her and the admin tokens and
// puts the fake image in the catalog as "fake".
func (mp *moneyPortal) start(t *testing.T) {
	t.Helper()
	mp.pp.start()
	mp.pp.cli("alice-password-1\n", "user", "add", "alice", "--password-stdin")
	mp.alice = mp.pp.cli("", "token", "create", "alice")
	mp.admin = mp.pp.cli("", "token", "create", "admin")
	img := catalogJSON(fakeCatalogImage("fake", mp.fakeRef))
	if code, body := mp.pp.http.api("POST", "/api/v1/images", mp.admin, img); code != http.StatusCreated {
		t.Fatalf("add catalog image: %d %v", code, body)
	}
}

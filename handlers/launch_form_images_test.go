package handlers

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/alexedwards/scs/v2"
	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/runtime/memruntime"
)

// formRig serves the launch form of a handler over a given engine, with a
// real SQLite store holding catalogImages images and one user.
type formRig struct {
	m      *orchestrator.Manager
	store  *models.Store
	images []models.Image
	srv    http.Handler
}

const catalogImages = 8

func newFormRig(tb testing.TB, rt runtime.Runtime) *formRig {
	tb.Helper()
	gin.SetMode(gin.TestMode)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := models.Open(ctx, tb.TempDir(), log)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	for i := range catalogImages {
		img := &models.Image{Name: fmt.Sprintf("img%d", i), Image: fmt.Sprintf("workbench-test/form-cache-%d:1", i),
			StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}", Enabled: true}
		if err := store.CreateImage(ctx, img); err != nil {
			tb.Fatal(err)
		}
	}
	if err := store.SeedCatalog(ctx, nil); err != nil { // the CPU flavor
		tb.Fatal(err)
	}
	if err := store.SeedDefaultPrices(ctx, nil); err != nil {
		tb.Fatal(err)
	}
	user, err := store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"})
	if err != nil {
		tb.Fatal(err)
	}
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindNone})
	if err != nil {
		tb.Fatal(err)
	}
	pool := orchestrator.NewPool(inv, nil, store)
	m := orchestrator.NewManager(store, pool, rt, "formcache", orchestrator.Options{}, log)
	tb.Cleanup(m.Wait)
	sessions := scs.New()
	h := New(store, sessions, pool, m, Config{}, log)
	r := gin.New()
	r.GET("/workbenches/new", func(c *gin.Context) { c.Set(ctxUserKey, user) }, h.launchForm)
	imgs, err := store.ListImagesFor(ctx, user.ID, true)
	if err != nil {
		tb.Fatal(err)
	}
	if len(imgs) != catalogImages {
		tb.Fatalf("%d images for the user, want %d", len(imgs), catalogImages)
	}
	return &formRig{m: m, store: store, images: imgs, srv: sessions.LoadAndSave(r)}
}

// form renders the launch form and returns, per image name, what its card
// says under "On this server" and its size.
func (f *formRig) form(tb testing.TB) map[string]string {
	tb.Helper()
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/workbenches/new", nil))
	if rec.Code != http.StatusOK {
		tb.Fatalf("launch form: %d %s", rec.Code, rec.Body)
	}
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	doc.Find(`[data-testid=image-choice]`).Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Find(`input`).Attr("value")
		out[name] = strings.TrimSpace(s.Find(`[data-testid=fact-present]`).Text()) + " " + s.Find(`[data-testid=fact-size]`).Text()
	})
	return out
}

// The launch form inspects each catalog image on the engine once, not on
// every view; a pull, a load from an archive, and the expiry (an image the
// engine got behind the portal's back) each show on the next view.
func TestLaunchFormInspectsEachImageOnce(t *testing.T) {
	ctx := context.Background()
	rt := memruntime.New()
	f := newFormRig(t, rt)
	clock := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	f.m.SetClock(func() time.Time { return clock })
	rt.AddImage(f.images[0].Image, 300_000_000)

	first := f.form(t)
	if got := first["img0"]; got != "yes 300 MB" {
		t.Errorf("present image's card: %q", got)
	}
	if got := first["img1"]; got != "no: downloaded at first launch " {
		t.Errorf("absent image's card: %q", got)
	}
	f.form(t)
	if n := rt.Calls("ImageSize"); n != catalogImages {
		t.Fatalf("two views inspected images %d times, want %d (once per image)", n, catalogImages)
	}

	// An admin's pre-pull: the next view shows the image present.
	if err := f.m.PrePull(ctx, &f.images[1], "admin"); err != nil {
		t.Fatal(err)
	}
	f.m.Wait()
	if got := f.form(t)["img1"]; got != "yes 1 MB" {
		t.Errorf("after the pull, the pulled image's card: %q", got)
	}

	// A `docker save` archive loaded through the portal.
	if _, err := f.m.LoadImage(ctx, saveArchive(t, f.images[2].Image)); err != nil {
		t.Fatal(err)
	}
	if got := f.form(t)["img2"]; !strings.HasPrefix(got, "yes ") {
		t.Errorf("after the load, the loaded image's card: %q", got)
	}
	if n := rt.Calls("ImageSize"); n != 3*catalogImages {
		t.Errorf("inspects after a pull and a load: %d, want %d (each forgets every answer once)", n, 3*catalogImages)
	}

	// Behind the portal's back: seen once the answers expire, not before.
	rt.AddImage(f.images[3].Image, 2_000_000)
	if got := f.form(t)["img3"]; !strings.HasPrefix(got, "no") {
		t.Errorf("an out-of-band change shows before the expiry: %q", got)
	}
	clock = clock.Add(11 * time.Second)
	if got := f.form(t)["img3"]; got != "yes 2 MB" {
		t.Errorf("an out-of-band change after the expiry: %q", got)
	}
	if n := rt.Calls("ImageSize"); n != 4*catalogImages {
		t.Errorf("inspects after the expiry: %d, want %d", n, 4*catalogImages)
	}

	// A failed inspect (engine down) is not kept: the view says unknown
	// (and asks no further), the next one asks again.
	clock = clock.Add(11 * time.Second)
	rt.FailOnce("ImageSize", runtime.ErrEngineUnavailable)
	if got := f.form(t)["img0"]; got != " " {
		t.Errorf("with the engine down, the card says %q, want nothing", got)
	}
	before := rt.Calls("ImageSize")
	if got := f.form(t)["img0"]; got != "yes 300 MB" {
		t.Errorf("after the engine is back, the card says %q", got)
	}
	if n := rt.Calls("ImageSize") - before; n != catalogImages {
		t.Errorf("after a failed inspect the next view inspected %d images, want %d", n, catalogImages)
	}
}

// saveArchive is a minimal `docker save` archive naming ref.
func saveArchive(t *testing.T, ref string) io.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	manifest := fmt.Sprintf(`[{"Config":"c.json","RepoTags":[%q],"Layers":[]}]`, ref)
	for name, body := range map[string]string{"manifest.json": manifest, "c.json": "{}"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// BenchmarkLaunchForm renders the launch form of a catalog of
// catalogImages images over the real engine (skipped without one): each
// view used to inspect every image.
func BenchmarkLaunchForm(b *testing.B) {
	d, err := runtime.NewDocker()
	if err != nil {
		b.Skip(err)
	}
	if err := d.Ping(context.Background()); err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { d.Close() })
	f := newFormRig(b, d)
	f.form(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		f.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/workbenches/new", nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("launch form: %d", rec.Code)
		}
	}
}

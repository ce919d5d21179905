package templates_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"workbench/templates"
)

// render renders c and parses the HTML.
func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc
}

// squash collapses runs of white space, as a browser shows text.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func testid(id string) string { return `[data-testid="` + id + `"]` }

func adminPage(title, path string) templates.Page {
	return templates.Page{Title: title, Path: path, Version: "test",
		User:   &templates.NavUser{Username: "admin", Name: "Administrator", IsAdmin: true},
		Banner: "GPUs are simulated (mock:dgxh100): workbenches get no real GPU."}
}

func userPage(title, path string) templates.Page {
	return templates.Page{Title: title, Path: path, Version: "test",
		User: &templates.NavUser{Username: "ada", Name: "Ada Lovelace"}}
}

func TestGPUsPage(t *testing.T) {
	v := templates.GPUsView{Backend: "mock:dgxh100", Status: "simulated DGX H100, 2 GPUs", Simulated: true, CanDrain: true,
		GPUs: []templates.GPURow{
			{Index: 0, UUID: "GPU-aaaa", Model: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, State: "free", Health: "ok",
				Name: "GPU 0 · H100 80GB HBM3", StateLabel: "Free",
				HasUtil: true, HasMem: true, HasTemp: true, HasPower: true, UtilPercent: 42, MemUsedMiB: 2048, TempC: 51, PowerW: 312.4, UtilHistory: []float64{0, 50, 100, 42}},
			{Index: 1, UUID: "GPU-bbbb", Model: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, State: "drained", Health: "ok",
				Name: "GPU 1 · H100 80GB HBM3", StateLabel: "Drained (not offered)",
				Drained: true, Detail: "drained by admin",
				MIG: []templates.MIGRow{{Profile: "1g.10gb", UUID: "MIG-cccc", MemoryMiB: 9856}}},
		}}
	doc := render(t, templates.GPUsPage(adminPage("GPUs", "/gpus"), v))

	rows := doc.Find(testid("gpu-row"))
	if rows.Length() != 2 {
		t.Fatalf("gpu rows: %d, want 2", rows.Length())
	}
	if doc.Find(testid("no-gpus")).Length() != 0 {
		t.Error("the empty-pool notice shows although there are GPUs")
	}
	first, second := rows.Eq(0), rows.Eq(1)
	if u, _ := first.Attr("data-uuid"); u != "GPU-aaaa" {
		t.Errorf("first row data-uuid %q", u)
	}
	if s := strings.TrimSpace(first.Find(testid("gpu-state")).Text()); s != "Free" {
		t.Errorf("first row state %q", s)
	}
	if !first.Find(testid("gpu-state")).HasClass("state-free") {
		t.Error("the state badge lacks its state-free class")
	}
	if title, _ := first.Find(testid("gpu-name")).Attr("title"); title != "GPU-aaaa" {
		t.Errorf("GPU name's tooltip %q, want its UUID", title)
	}
	for _, want := range []string{"GPU 0 · H100 80GB HBM3", "42%", "2.0 GiB / 79.6 GiB", "51 °C", "312 W"} {
		if !strings.Contains(squash(first.Text()), want) {
			t.Errorf("first row lacks %q: %q", want, squash(first.Text()))
		}
	}
	// A free GPU can be drained, a drained one undrained; each form posts to its GPU.
	if first.Find(testid("drain")).Length() != 1 || first.Find(testid("undrain")).Length() != 0 {
		t.Error("a free GPU should offer Drain only")
	}
	if second.Find(testid("undrain")).Length() != 1 || second.Find(testid("drain")).Length() != 0 {
		t.Error("a drained GPU should offer Undrain only")
	}
	if a, _ := second.Find("form").Attr("action"); a != "/admin/gpus/GPU-bbbb/drain" {
		t.Errorf("undrain form action %q", a)
	}
	if v, _ := second.Find(`input[name=drained]`).Attr("value"); v != "false" {
		t.Errorf("undrain posts drained=%q, want false", v)
	}
	if v, _ := first.Find(`input[name=drained]`).Attr("value"); v != "true" {
		t.Errorf("drain posts drained=%q, want true", v)
	}
	if !strings.Contains(second.Text(), "drained by admin") {
		t.Error("the drained row does not show its detail")
	}
	if mig := second.Find(testid("mig-row")); mig.Length() != 1 || !strings.Contains(mig.Text(), "1g.10gb") {
		t.Errorf("MIG rows: %d %q", mig.Length(), mig.Text())
	}
	// Without a reading the figures stay empty rather than show zeros.
	if strings.Contains(second.Text(), "0 °C") || strings.Contains(second.Text(), "0 W") {
		t.Errorf("a GPU without a reading shows figures: %q", second.Text())
	}

	if b := doc.Find(testid("simulated-badge")); b.Length() != 1 || strings.TrimSpace(b.Text()) != "simulated" {
		t.Errorf("simulated badge: %d %q", b.Length(), b.Text())
	}
	if !strings.Contains(doc.Find(testid("gpu-status")).Text(), "simulated DGX H100") {
		t.Error("the inventory status is missing")
	}
	if b := doc.Find(testid("banner")); !strings.Contains(b.Text(), "simulated") {
		t.Errorf("banner %q", b.Text())
	}

	// Sparklines: one per GPU, points within the 120×28 box.
	lines := doc.Find("svg.spark polyline")
	if lines.Length() != 2 {
		t.Fatalf("sparklines: %d, want 2", lines.Length())
	}
	lines.Each(func(i int, s *goquery.Selection) {
		pts, ok := s.Attr("points")
		if !ok || strings.TrimSpace(pts) == "" {
			t.Errorf("sparkline %d has no points", i)
		}
	})
	if pts, _ := lines.Eq(0).Attr("points"); len(strings.Fields(pts)) != 4 {
		t.Errorf("sparkline 0 points %q: want 4 for 4 samples", pts)
	}
	if pts, _ := lines.Eq(1).Attr("points"); pts != "0,28 120,28" {
		t.Errorf("sparkline without history %q: want a flat line at the bottom", pts)
	}
}

func TestGPUsPageForUsersAndEmptyPool(t *testing.T) {
	v := templates.GPUsView{Status: "NVML, 1 GPU", GPUs: []templates.GPURow{{Index: 0, UUID: "GPU-x", Model: "NVIDIA A100", State: "free"}}}
	doc := render(t, templates.GPUsPage(userPage("GPUs", "/gpus"), v))
	if n := doc.Find(testid("drain")).Length() + doc.Find(testid("undrain")).Length(); n != 0 {
		t.Errorf("a user without CanDrain sees %d drain buttons", n)
	}
	if doc.Find(`form[action*="/drain"]`).Length() != 0 {
		t.Error("a user without CanDrain gets a drain form")
	}
	if doc.Find(testid("simulated-badge")).Length() != 0 || strings.Contains(doc.Find(testid("gpu-table")).Text(), "simulated") {
		t.Error("real GPUs are labelled simulated")
	}

	doc = render(t, templates.GPUsPage(userPage("GPUs", "/gpus"), templates.GPUsView{Status: "no GPUs"}))
	if doc.Find(testid("no-gpus")).Length() != 1 || doc.Find(testid("gpu-table")).Length() != 0 {
		t.Error("an empty pool should show the notice and no table")
	}
}

func TestLoginPageWithError(t *testing.T) {
	p := templates.Page{Title: "Log in", Path: "/login", Version: "test"}
	doc := render(t, templates.LoginPage(p, templates.LoginForm{Username: "ada", Next: "/gpus", Error: "Invalid username or password."}))
	if e := doc.Find(testid("login-error")); strings.TrimSpace(e.Text()) != "Invalid username or password." {
		t.Errorf("login error %q", e.Text())
	} else if r, _ := e.Attr("role"); r != "alert" {
		t.Errorf("login error role %q, want alert", r)
	}
	form := doc.Find(`form[action="/login"]`)
	if m, _ := form.Attr("method"); m != "post" {
		t.Errorf("login form method %q", m)
	}
	if v, _ := form.Find(`input[name=username]`).Attr("value"); v != "ada" {
		t.Errorf("username kept as %q", v)
	}
	if v, _ := form.Find(`input[name=next]`).Attr("value"); v != "/gpus" {
		t.Errorf("next %q", v)
	}
	pw := form.Find(`input[name=password]`)
	if typ, _ := pw.Attr("type"); typ != "password" {
		t.Errorf("password input type %q", typ)
	}
	if _, has := pw.Attr("value"); has {
		t.Error("the password field is pre-filled")
	}
	if doc.Find(testid("login-submit")).Length() != 1 {
		t.Error("no submit button")
	}
	// Logged out: no navigation and no account box.
	if doc.Find("nav.mainnav").Length() != 0 || doc.Find(testid("account-name")).Length() != 0 {
		t.Error("the login page shows the logged-in chrome")
	}
	if title := doc.Find("title").Text(); title != "Log in · Workbench" {
		t.Errorf("title %q", title)
	}

	doc = render(t, templates.LoginPage(p, templates.LoginForm{}))
	if doc.Find(testid("login-error")).Length() != 0 {
		t.Error("an error shows without one")
	}
}

func TestCatalogPage(t *testing.T) {
	v := templates.CatalogView{IsAdmin: true,
		Images: []templates.ImageCard{
			{ID: 1, Name: "PyTorch (CUDA 12)", Image: "quay.io/jupyter/pytorch-notebook:cuda12-python-3.11", Description: "PyTorch",
				Tags: []string{"CUDA 12", "PyTorch"}, Enabled: true},
			{ID: 2, Name: "Old TF", Image: "tensorflow/tensorflow:2.9.0-gpu", Enabled: false},
		},
		Flavors: []templates.FlavorRow{
			{ID: 1, Name: "CPU small", CPUCores: 2, MemoryGiB: "8", ShmMiB: 1024, Enabled: true},
			{ID: 2, Name: "1x H100", GPUModel: "NVIDIA H100 80GB HBM3", GPUCount: 1, CPUCores: 8, MemoryGiB: "64", ShmMiB: 8192, Enabled: true, FreeGPUs: 7,
				UnitText: "1 × NVIDIA H100 80GB HBM3", FreeNoun: "GPUs"},
		}}
	doc := render(t, templates.CatalogPage(adminPage("Catalog", "/catalog"), v))
	cards := doc.Find(testid("image-card"))
	if cards.Length() != 2 {
		t.Fatalf("image cards %d, want 2", cards.Length())
	}
	if c := cards.Eq(0); !strings.Contains(c.Find("h3").Text(), "PyTorch (CUDA 12)") || c.Find(".tag").Length() != 2 ||
		!strings.Contains(c.Find("code").Text(), "pytorch-notebook") {
		t.Errorf("first card: %q", squash(c.Text()))
	}
	if c := cards.Eq(1); !c.HasClass("disabled") || !strings.Contains(c.Find(".badge").Text(), "disabled") {
		t.Error("a disabled image is not marked")
	}
	if a, _ := cards.Eq(1).Find(`a[href]`).Attr("href"); a != "/admin/images/2/edit" {
		t.Errorf("edit link %q", a)
	}
	if doc.Find(testid("new-image")).Length() != 1 || doc.Find(testid("new-flavor")).Length() != 1 {
		t.Error("an admin should get New image / New flavor")
	}
	rows := doc.Find(testid("flavor-row"))
	if rows.Length() != 2 {
		t.Fatalf("flavor rows %d", rows.Length())
	}
	if txt := rows.Eq(0).Text(); !strings.Contains(txt, "none") || !strings.Contains(txt, "—") {
		t.Errorf("CPU flavor row %q", txt)
	}
	if txt := rows.Eq(1).Text(); !strings.Contains(txt, "1 × NVIDIA H100 80GB HBM3") || !strings.Contains(txt, "7 GPUs") || !strings.Contains(txt, "64 GiB") {
		t.Errorf("GPU flavor row %q", squash(txt))
	}

	v.IsAdmin = false
	doc = render(t, templates.CatalogPage(userPage("Catalog", "/catalog"), v))
	if doc.Find(testid("new-image")).Length() != 0 || doc.Find(`a[href*="/admin/"]`).Length() != 0 {
		t.Error("a user sees admin links on the catalog")
	}
}

func TestImageFormFieldError(t *testing.T) {
	f := templates.ImageForm{Name: "Team PyTorch", Image: "Bad Ref!!", Enabled: true,
		Errors: templates.FormErrors{"image": "is not a valid image reference"}}
	doc := render(t, templates.ImageFormPage(adminPage("New image", "/admin/images/new"), f))
	e := doc.Find(testid("error-image"))
	if e.Length() != 1 || strings.TrimSpace(e.Text()) != "is not a valid image reference" {
		t.Fatalf("image error: %d %q", e.Length(), e.Text())
	}
	if e.Prev().Find(`input[name=image]`).Length() != 1 {
		t.Error("the image error does not follow the image field")
	}
	if doc.Find(".field-error").Length() != 1 {
		t.Error("errors show for fields without one")
	}
	if v, _ := doc.Find(`input[name=name]`).Attr("value"); v != "Team PyTorch" {
		t.Errorf("name kept as %q", v)
	}
	if v, _ := doc.Find(`input[name=image]`).Attr("value"); v != "Bad Ref!!" {
		t.Errorf("image kept as %q", v)
	}
	if a, _ := doc.Find(testid("image-form")).Attr("action"); a != "/admin/images" {
		t.Errorf("new image form action %q", a)
	}
	if _, checked := doc.Find(`input[name=enabled]`).Attr("checked"); !checked {
		t.Error("enabled is not checked")
	}

	f.ID, f.Errors = 9, templates.FormErrors{"_": "something broke"}
	doc = render(t, templates.ImageFormPage(adminPage("Edit image", "/admin/images/9/edit"), f))
	if a, _ := doc.Find(testid("image-form")).Attr("action"); a != "/admin/images/9" {
		t.Errorf("edit form action %q", a)
	}
	if !strings.Contains(doc.Find(".form-error").Text(), "something broke") {
		t.Error("a form-wide error is not shown")
	}
}

func TestFieldError(t *testing.T) {
	doc := render(t, templates.FieldError(templates.FormErrors{"name": "is required"}, "name"))
	if e := doc.Find(testid("error-name")); e.Length() != 1 || e.Text() != "is required" || !e.HasClass("field-error") {
		t.Errorf("field error: %d %q", e.Length(), e.Text())
	}
	doc = render(t, templates.FieldError(templates.FormErrors{"name": "is required"}, "email"))
	if doc.Find(".field-error").Length() != 0 {
		t.Error("an error shows for another field")
	}
	doc = render(t, templates.FieldError(nil, "email"))
	if doc.Find(".field-error").Length() != 0 {
		t.Error("an error shows with no errors")
	}
}

func TestLayoutNavigation(t *testing.T) {
	child := templ.Raw(`<p data-testid="child">hello</p>`)
	renderLayout := func(p templates.Page) *goquery.Document {
		t.Helper()
		var buf bytes.Buffer
		if err := templates.Layout(p).Render(templ.WithChildren(context.Background(), child), &buf); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	navLabels := func(doc *goquery.Document) []string {
		var out []string
		doc.Find("nav.mainnav a").Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
		return out
	}

	p := userPage("GPUs", "/gpus")
	p.Flash = "Saved."
	doc := renderLayout(p)
	if got := navLabels(doc); strings.Join(got, ",") != "Workbenches,GPUs,Catalog,Usage,Calculator" {
		t.Errorf("user nav %q", got)
	}
	if doc.Find(`nav.mainnav a[href="/admin/users"]`).Length() != 0 {
		t.Error("a non-admin sees the Admin link")
	}
	if active := doc.Find("nav.mainnav a.active"); active.Length() != 1 || strings.TrimSpace(active.Text()) != "GPUs" {
		t.Errorf("active nav item %q", active.Text())
	}
	if n := strings.TrimSpace(doc.Find(testid("account-name")).Text()); n != "Ada Lovelace" {
		t.Errorf("account name %q", n)
	}
	if doc.Find(`form[action="/logout"][method="post"] button`).Length() != 1 {
		t.Error("no Log out button posting to /logout")
	}
	if f := doc.Find(testid("flash")); strings.TrimSpace(f.Text()) != "Saved." {
		t.Errorf("flash %q", f.Text())
	}
	if doc.Find(testid("banner")).Length() != 0 {
		t.Error("a banner shows without one")
	}
	if doc.Find("main "+testid("child")).Length() != 1 {
		t.Error("children are not rendered inside main")
	}
	if !strings.Contains(doc.Find("footer").Text(), "test") {
		t.Error("the footer lacks the version")
	}

	doc = renderLayout(adminPage("Users", "/admin/users"))
	if got := navLabels(doc); strings.Join(got, ",") != "Workbenches,GPUs,Catalog,Usage,Calculator,Admin" {
		t.Errorf("admin nav %q", got)
	}
	if a := doc.Find("nav.mainnav a.active"); strings.TrimSpace(a.Text()) != "Admin" {
		t.Errorf("active nav on /admin/users: %q", a.Text())
	}
	if !strings.Contains(doc.Find(testid("banner")).Text(), "simulated") {
		t.Error("the banner is missing")
	}
}

func TestAdminUsersPage(t *testing.T) {
	v := templates.UsersView{Self: "admin", Users: []templates.UserRow{
		{ID: 1, Username: "admin", DisplayName: "Administrator", Role: "admin"},
		{ID: 2, Username: "ada", DisplayName: "Ada", Role: "user", Groups: []string{"ml"}},
		{ID: 3, Username: "bob", Role: "user", Disabled: true},
	}, Form: templates.NewUserForm{Username: "x y", Errors: templates.FormErrors{"username": "bad name"}}}
	doc := render(t, templates.AdminUsersPage(adminPage("Users", "/admin/users"), v))
	rows := doc.Find(testid("user-row"))
	if rows.Length() != 3 {
		t.Fatalf("user rows %d", rows.Length())
	}
	if rows.Eq(0).Find(`form[action$="/disable"]`).Length() != 0 {
		t.Error("an admin can disable themself")
	}
	if rows.Eq(1).Find(testid("disable-user")).Length() != 1 {
		t.Error("an active user has no Disable button")
	}
	if !strings.Contains(rows.Eq(2).Text(), "disabled") || !strings.Contains(rows.Eq(2).Text(), "Enable") {
		t.Error("a disabled user is not shown as such")
	}
	if !strings.Contains(doc.Find(testid("error-username")).Text(), "bad name") {
		t.Error("the username error is missing")
	}
	if v, _ := doc.Find(testid("new-user-form")).Find(`input[name=username]`).Attr("value"); v != "x y" {
		t.Errorf("typed username kept as %q", v)
	}
}

func TestSparklinePoints(t *testing.T) {
	// Fewer than two values: a flat line along the bottom, full width.
	for _, vals := range [][]float64{nil, {}, {73}} {
		if got := templates.SparklinePoints(vals, 100, 120, 28); got != "0,28 120,28" {
			t.Errorf("SparklinePoints(%v) = %q, want a flat line", vals, got)
		}
	}
	got := templates.SparklinePoints([]float64{0, 50, 100}, 100, 120, 28)
	if got != "0.0,28.0 60.0,14.0 120.0,0.0" {
		t.Errorf("three values: %q", got)
	}
	// Values outside [0, max] are clamped to the box.
	got = templates.SparklinePoints([]float64{-20, 250, 50, 100}, 100, 90, 10)
	pts := parsePoints(t, got)
	if len(pts) != 4 {
		t.Fatalf("four values gave %d points: %q", len(pts), got)
	}
	if pts[0][1] != 10 || pts[1][1] != 0 || pts[2][1] != 5 || pts[3][1] != 0 {
		t.Errorf("clamping: %q", got)
	}
	// x runs from 0 to w, evenly spaced.
	if pts[0][0] != 0 || pts[3][0] != 90 || pts[1][0] != 30 || pts[2][0] != 60 {
		t.Errorf("x positions: %q", got)
	}
	for _, p := range parsePoints(t, templates.SparklinePoints([]float64{5, 1e9, -1e9, 3, 0, 99}, 100, 120, 28)) {
		if p[0] < 0 || p[0] > 120 || p[1] < 0 || p[1] > 28 {
			t.Errorf("point %v outside the 120×28 box", p)
		}
	}
	// A non-positive max does not divide by zero.
	for _, p := range parsePoints(t, templates.SparklinePoints([]float64{0, 1, 2}, 0, 10, 10)) {
		if p[1] != p[1] || p[1] < 0 || p[1] > 10 { // NaN or outside
			t.Errorf("max 0 gives point %v", p)
		}
	}
}

func parsePoints(t *testing.T, s string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, f := range strings.Fields(s) {
		xs, ys, ok := strings.Cut(f, ",")
		if !ok {
			t.Fatalf("bad point %q in %q", f, s)
		}
		x, err1 := strconv.ParseFloat(xs, 64)
		y, err2 := strconv.ParseFloat(ys, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad point %q in %q", f, s)
		}
		out = append(out, [2]float64{x, y})
	}
	return out
}

package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// The launch form offers what the user's quota allows: a group limited to
// some images and flavors and to 2 GPUs at once sees only its images, and
// the other flavors (and those asking for more GPUs than the quota allows
// at all) disabled with the reason, instead of picking one and being
// refused on submit; the flavor watch offers the same. A user outside the
// group sees everything.
func TestLaunchFormFollowsTheQuota(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	alice, _ := st.UserByUsername(ctx, "alice")
	g, err := st.CreateGroup(ctx, "nlp lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddGroupMember(ctx, g.ID, alice.ID); err != nil {
		t.Fatal(err)
	}
	two := int64(2)
	if err := st.SetQuota(ctx, models.ScopeGroup, g.ID, models.Limits{MaxGPUs: &two,
		AllowedImages:  []string{"PyTorch (CUDA 12)"},
		AllowedFlavors: []string{"CPU small", "1x H100 80GB HBM3", "4x H100 80GB HBM3"}}, "admin"); err != nil {
		t.Fatal(err)
	}
	form := func(user string) *goquery.Document {
		t.Helper()
		c := p.client()
		p.login(c, user, user+"-password")
		res, body := p.get(c, "/workbenches/new")
		if res.StatusCode != 200 {
			t.Fatalf("%s's launch form: %d", user, res.StatusCode)
		}
		return mpDoc(t, body)
	}
	images := func(doc *goquery.Document) []string {
		var out []string
		doc.Find(`[data-testid=image-choice] input[name=image]`).Each(func(_ int, s *goquery.Selection) { out = append(out, s.AttrOr("value", "")) })
		return out
	}
	flavor := func(doc *goquery.Document, name string) (disabled bool, why string) {
		t.Helper()
		s := doc.Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return s.Find(`input[name=flavor]`).AttrOr("value", "") == name
		})
		if s.Length() != 1 {
			t.Fatalf("flavor %s is not in the form", name)
		}
		_, disabled = s.Find(`input`).Attr("disabled")
		return disabled, strings.TrimSpace(s.Find(`[data-testid=flavor-unavailable]`).Text())
	}

	doc := form("alice")
	if got := images(doc); len(got) != 1 || got[0] != "PyTorch (CUDA 12)" {
		t.Errorf("alice's images %q, want only PyTorch (CUDA 12)", got)
	}
	for name, want := range map[string]string{
		"CPU small":         "",
		"1x H100 80GB HBM3": "",
		"2x H100 80GB HBM3": "your quota does not allow this flavor",
		"4x H100 80GB HBM3": "your quota allows at most 2 GPUs at once",
	} {
		disabled, why := flavor(doc, name)
		if why != want || disabled != (want != "") {
			t.Errorf("alice's %s: disabled=%v reason %q, want %q", name, disabled, why, want)
		}
	}
	if v := doc.Find(`input[name=image][checked]`).AttrOr("value", ""); v != "PyTorch (CUDA 12)" {
		t.Errorf("preselected image %q, want the one allowed", v)
	}

	// The flavor watch on /notifications offers the same flavors.
	c := p.client()
	p.login(c, "alice", "alice-password")
	_, body := p.get(c, "/notifications")
	var watchable []string
	mpDoc(t, body).Find(`[data-testid=flavor-watch-flavor] option`).Each(func(_ int, s *goquery.Selection) {
		watchable = append(watchable, s.AttrOr("value", ""))
	})
	if strings.Join(watchable, ",") != "1x H100 80GB HBM3" {
		t.Errorf("alice can watch the flavors %q, want only 1x H100 80GB HBM3 (CPU small has no GPU to wait for)", watchable)
	}

	doc = form("bob")
	if got := images(doc); len(got) < 3 {
		t.Errorf("bob (no quota) sees images %q", got)
	}
	if disabled, why := flavor(doc, "4x H100 80GB HBM3"); disabled {
		t.Errorf("bob's 4x H100 is disabled: %q", why)
	}
}

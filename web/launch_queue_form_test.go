package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// The launch form waits for a free GPU by default, offers the priority
// classes, and shows each GPU flavor's preemptible price beside the usual
// one: 1 × H100 at 3.00 × (100 − 70) % + 8 cores at 0.02 + 64 GiB at 0.005
// = 1.38 per hour.
func TestLaunchFormQueueChoices(t *testing.T) {
	p := newPortal(t)
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "alice", Password: "alice-password"}); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	_, body := p.get(c, "/workbenches/new")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if _, on := doc.Find(`[data-testid=launch-queue]`).Attr("checked"); !on {
		t.Error(`"wait for a free GPU" is not checked by default`)
	}
	var classes []string
	doc.Find(`[data-testid=launch-priority] option`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("value")
		classes = append(classes, v)
	})
	if strings.Join(classes, ",") != ",interactive,batch,preemptible" {
		t.Errorf("priority options %v", classes)
	}
	price := ""
	doc.Find(`[data-testid=flavor-choice]`).Each(func(_ int, s *goquery.Selection) {
		if v, _ := s.Find(`input[name=flavor]`).Attr("value"); v == "1x H100 80GB HBM3" {
			price = strings.TrimSpace(s.Find(`[data-testid=flavor-preemptible-price]`).Text())
		}
	})
	if price != "preemptible: 1.38 USD/h" {
		t.Errorf("1x H100 preemptible price %q", price)
	}
}

// A user is offered the classes up to their own default, which is marked:
// with a class above every default and alice's group defaulting to batch,
// her form offered "urgent" and "interactive", each refused when chosen
// ("only administrators may choose it"), and marked interactive as her
// default. An admin is offered every class.
func TestLaunchFormOffersOnlyChoosableClasses(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	alice, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SavePriorityClass(ctx, &models.PriorityClass{Name: "urgent", Rank: 500, Description: "deadlines"}); err != nil {
		t.Fatal(err)
	}
	g, err := p.srv.Store.CreateGroup(ctx, "ml", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.AddGroupMember(ctx, g.ID, alice.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.srv.Store.SetPriorityDefault(ctx, models.PriorityScopeGroup, g.ID, "batch"); err != nil {
		t.Fatal(err)
	}
	offered := func(user, password string) (names []string, marked string) {
		c := p.client()
		p.login(c, user, password)
		_, body := p.get(c, "/workbenches/new")
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		doc.Find(`[data-testid=launch-priority] option`).Each(func(_ int, s *goquery.Selection) {
			v, _ := s.Attr("value")
			names = append(names, v)
			if strings.HasSuffix(s.Text(), "(default)") {
				marked = v
			}
		})
		return names, marked
	}
	if names, marked := offered("alice", "alice-password"); strings.Join(names, ",") != ",batch,preemptible" || marked != "batch" {
		t.Errorf("alice is offered %v with %q marked default, want [ batch preemptible] with batch", names, marked)
	}
	if names, _ := offered("admin", adminPassword); strings.Join(names, ",") != ",urgent,interactive,batch,preemptible" {
		t.Errorf("the admin is offered %v, want every class", names)
	}
}

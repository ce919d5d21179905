package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// The edit form shows a flavor's maximum runtime with the decimals it
// needs, and saving it unchanged keeps it: the form showed whole hours, so
// an unchanged save turned 5400 s into 3600 s and 240 s into 0 (none).
func TestFlavorFormKeepsMaxRuntime(t *testing.T) {
	p := newPortal(t)
	c, admin := mpAdmin(t, p)
	for _, tc := range []struct {
		secs int64
		show string
	}{{5400, "1.5"}, {240, "0.0667"}, {7200, "2"}, {0, "0"}} {
		name := "rt-" + strconv.FormatInt(tc.secs, 10)
		code, body := p.api("POST", "/api/v1/flavors", admin,
			`{"name":"`+name+`","cpu_cores":1,"memory_gib":2,"max_runtime_seconds":`+strconv.FormatInt(tc.secs, 10)+`}`)
		if code != http.StatusCreated {
			t.Fatalf("create %s: %d %v", name, code, body)
		}
		id := strconv.FormatInt(int64(body["id"].(float64)), 10)
		_, page := p.get(c, "/admin/flavors/"+id+"/edit")
		doc := mpDoc(t, page)
		if v, _ := doc.Find(`input[name=max_runtime_hours]`).Attr("value"); v != tc.show {
			t.Errorf("%d s shows as %q hours, want %q", tc.secs, v, tc.show)
		}
		// Save the form as the page filled it in.
		form := url.Values{}
		doc.Find(`form input[name], form select[name]`).Each(func(_ int, s *goquery.Selection) {
			name, _ := s.Attr("name")
			if typ, _ := s.Attr("type"); typ == "checkbox" {
				if _, on := s.Attr("checked"); on {
					v, _ := s.Attr("value")
					form.Add(name, v)
				}
				return
			}
			if goquery.NodeName(s) == "select" {
				v, _ := s.Find("option[selected]").Attr("value")
				form.Set(name, v)
				return
			}
			v, _ := s.Attr("value")
			form.Set(name, v)
		})
		if st, _, resp := mpPost(t, p, c, "/admin/flavors/"+id, form); st != http.StatusSeeOther {
			t.Fatalf("save %s unchanged: %d %s", name, st, resp)
		}
		fl, err := p.srv.Store.FlavorByID(context.Background(), int64(body["id"].(float64)))
		if err != nil || fl.MaxRuntimeS != tc.secs {
			t.Errorf("%s saved unchanged: max runtime %d s, want %d (%v)", name, fl.MaxRuntimeS, tc.secs, err)
		}
	}
}

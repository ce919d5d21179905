package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// The owner's list says where a queued launch stands and why, as its page
// does ("Position 1 in the queue · 1 × H100 80GB HBM3 needed; 0 free; …"):
// it read "queued" alone, also for a preempted run waiting to resume.
func TestWorkbenchListShowsQueuePlaceAndReason(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	for _, it := range gpus["items"].([]any) {
		uuid := it.(map[string]any)["uuid"].(string)
		if code, out := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", admin, `{"drained":true}`); code != 200 {
			t.Fatalf("drain: %d %v", code, out)
		}
	}
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"pretrain","image":"PyTorch (CUDA 12)","flavor":"1x H100 80GB HBM3","queue":true,"preemptible":true}`)
	if code != http.StatusAccepted || wb["state"] != "queued" {
		t.Fatalf("queued launch: %d %v", code, wb)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	_, body := p.get(c, "/")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	row := doc.Find(`[data-testid=workbench-row][data-state=queued]`)
	if row.Length() != 1 {
		t.Fatalf("%d queued rows in the list", row.Length())
	}
	got := strings.Join(strings.Fields(row.Find(`[data-testid=row-queue]`).Text()), " ")
	if !strings.HasPrefix(got, "Position 1 in the queue · 1 × H100 80GB HBM3 needed; 0 free") {
		t.Errorf("the queued row says %q, want its place and why it waits", got)
	}
}

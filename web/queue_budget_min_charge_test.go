package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A queued launch is placed only if what is left of its owner's budget
// covers its minimum charge, as a launch that does not wait is: the queue
// placed one with less left, and the run was charged its whole minimum past
// the budget (a student of a class spent 0.3074 of a 0.25 budget). Here the
// budget is lowered while the launch waits; when a GPU frees up the launch
// leaves the queue refused, saying why, and nothing runs.
func TestQueuedLaunchNeedsTheBudgetForItsMinimumCharge(t *testing.T) {
	p := newPortal(t)
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	// One currency unit per GPU-second: the 60 s minimum charge is 60.
	rates := fmt.Sprintf(`{"rates":[{"resource":"gpu","gpu_model":%q,"rate_micros":3600000000}]}`, moneyGPUModel(t, p))
	if code, body := p.api("PUT", "/api/v1/admin/prices", admin, rates); code != 200 {
		t.Fatalf("set price: %d %v", code, body)
	}
	if code, body := p.api("PUT", "/api/v1/admin/quotas/users/alice", admin, `{"budget_per_month_micros":1000000000}`); code != 200 {
		t.Fatalf("set quota: %d %v", code, body)
	}
	all := drainAllGPUs(t, p, admin)
	// Rates take effect within the second they are set.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	code, wb := p.api("POST", "/api/v1/workbenches", alice, fmt.Sprintf(`{"name":"waits","image":"fake","flavor":%q,"queue":true}`, moneyFlavor))
	if code != http.StatusAccepted || wb["state"] != "queued" {
		t.Fatalf("queued launch with the budget to pay for it: %d %v", code, wb)
	}
	// 30 left cannot pay the minimum charge of 60.
	if code, body := p.api("PUT", "/api/v1/admin/quotas/users/alice", admin, `{"budget_per_month_micros":30000000}`); code != 200 {
		t.Fatalf("lower the budget: %d %v", code, body)
	}
	if code, out := p.api("PUT", "/api/v1/gpus/"+all[0]+"/drain", admin, `{"drained":false}`); code != http.StatusOK {
		t.Fatalf("undrain: %d %v", code, out)
	}
	id := wb["id"].(string)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, wb = p.api("GET", "/api/v1/workbenches/"+id, alice, "")
		if wb["state"] != "queued" || time.Now().After(deadline) {
			break
		}
	}
	reason, _ := wb["reason"].(string)
	if wb["state"] != "failed" || !strings.Contains(reason, "cannot cover this flavor's minimum charge") {
		t.Fatalf("with 30 left of the budget and a minimum charge of 60 the queued launch is %v (%q), want failed (a launch that never ran), refused for the minimum charge", wb["state"], reason)
	}
}

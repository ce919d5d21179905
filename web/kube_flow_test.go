package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/chromedp/chromedp"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"workbench/internal/testsupport/kubecluster"
	"workbench/models"
	"workbench/orchestrator/runtime"
	"workbench/web"
)

// kubePortal is a portal on the shared test cluster with GPU nodes of its
// own (prefix-0 … prefix-(nodes-1), gpus each, chosen by a node selector so
// that other tests' nodes do not count) and a catalog image "kwok". kwok
// runs no process: a fake Jupyter here answers the readiness check for
// every running Pod (the runtime's Endpoint hook), as in the runtime's own
// cluster tests.
type kubePortal struct {
	*testPortal
	c      *kubecluster.Cluster
	flavor string // the one-GPU flavor of the nodes' model
}

func newKubePortal(t *testing.T, prefix string, nodes, gpus int) *kubePortal {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the Kubernetes test cluster (skipped with -short)")
	}
	c := kubecluster.Shared(t)
	c.AddGPUNodes(t, prefix, nodes, gpus, "NVIDIA A100-SXM4-40GB", nil)
	for i := range nodes {
		patch := `{"metadata":{"labels":{"workbench.test/pool":"` + prefix + `"}}}`
		if _, err := c.Client.CoreV1().Nodes().Patch(t.Context(), prefix+"-"+strconv.Itoa(i), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	jupyter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/api/status") {
			_, _ = io.WriteString(w, `{"started":"now"}`)
			return
		}
		http.NotFound(w, req)
	}))
	t.Cleanup(jupyter.Close)
	host, portText, _ := net.SplitHostPort(strings.TrimPrefix(jupyter.URL, "http://"))
	port, _ := strconv.Atoi(portText)
	p := newPortal(t, func(cfg *web.Config) {
		cfg.GPUs = "auto"
		cfg.Kube = web.KubeConfig{Runtime: web.RuntimeKubernetes, Kubeconfig: c.Kubeconfig, Namespace: c.Namespace,
			NodeSelector: "workbench.test/pool=" + prefix,
			Endpoint: func(info runtime.ContainerInfo, _ string) (string, int) {
				if !info.Running {
					return "", 0
				}
				return host, port
			}}
	})
	p.addImage(&models.Image{Name: "kwok", Image: "quay.io/jupyter/base-notebook:kwok",
		StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser:    "1000", HomePath: "/home/jovyan", Enabled: true})
	kp := &kubePortal{testPortal: p, c: c}
	fls, err := p.srv.Store.ListFlavors(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fls {
		if f.GPUCount == 1 && f.GPUModel == "NVIDIA-A100-SXM4-40GB" && !f.Shared() {
			kp.flavor = f.Name
		}
	}
	if kp.flavor == "" {
		t.Fatalf("no one-GPU A100 flavor seeded: %+v", fls)
	}
	return kp
}

// user creates a user and returns a logged-in browser client.
func (kp *kubePortal) user(name string) (*http.Client, *models.User) {
	kp.t.Helper()
	u, err := kp.srv.Store.CreateUser(context.Background(), models.NewUser{Username: name, Password: name + "-password", Role: "user"})
	if err != nil {
		kp.t.Fatal(err)
	}
	cl := kp.client()
	kp.login(cl, name, name+"-password")
	return cl, u
}

// launchForm posts the launch form as a browser does and returns the new
// workbench's id (the redirect), or "" and the page when it was refused.
func (kp *kubePortal) launchForm(cl *http.Client, name string, queue bool) (string, int, string) {
	kp.t.Helper()
	form := url.Values{"name": {name}, "image": {"kwok"}, "flavor": {kp.flavor}, "idle_minutes": {"60"}}
	if queue {
		form.Set("queue", "on")
	}
	res, body := kp.postFormBody(cl, "/workbenches", form)
	if res.StatusCode == http.StatusSeeOther {
		return strings.TrimPrefix(res.Header.Get("Location"), "/workbenches/"), res.StatusCode, body
	}
	return "", res.StatusCode, body
}

// workbench reads the workbench as its owner's browser does (the JSON API
// with the session).
func (kp *kubePortal) workbench(cl *http.Client, id string) map[string]any {
	kp.t.Helper()
	code, wb := kp.sessionAPI(cl, "GET", "/api/v1/workbenches/"+id, "")
	if code != 200 {
		kp.t.Fatalf("GET workbench %s: %d %v", id, code, wb)
	}
	return wb
}

// waitWB waits until the workbench is in state (failing at once on failed).
func (kp *kubePortal) waitWB(cl *http.Client, id, state string) map[string]any {
	kp.t.Helper()
	var wb map[string]any
	kubeEventually(kp.t, 3*time.Minute, "workbench "+id+" "+state, func() bool {
		wb = kp.workbench(cl, id)
		if wb["state"] == "failed" && state != "failed" {
			kp.t.Fatalf("workbench %s failed: %v", id, wb["reason"])
		}
		return wb["state"] == state
	})
	return wb
}

// pod reads the workbench's Pod (nil when there is none).
func (kp *kubePortal) pod(id string) *corev1.Pod {
	kp.t.Helper()
	wb, err := kp.srv.Store.WorkbenchByID(context.Background(), id)
	if err != nil {
		kp.t.Fatal(err)
	}
	if wb.ContainerID == "" {
		return nil
	}
	pod, err := kp.c.Client.CoreV1().Pods(kp.c.Namespace).Get(context.Background(), wb.ContainerID, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		kp.t.Fatal(err)
	}
	return pod
}

// kubeEventually polls cond every 50 ms until it holds, or fails after
// timeout (a bound for a stuck test, not a timing assumption).
func kubeEventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKubeUserFlowThroughPortal is the Docker path's user flow, through the
// portal's pages, on Kubernetes: a launch makes a Pod that runs, a stop
// deletes it and bills the run, the GPU quota refuses a second GPU, and a
// launch that waits in the portal's queue while the pool is full gets its
// Pod when a GPU frees.
func TestKubeUserFlowThroughPortal(t *testing.T) {
	kp := newKubePortal(t, "kflow", 1, 2)
	ctx := context.Background()
	alice, aliceU := kp.user("alice")
	one := int64(1)
	if err := kp.srv.Store.SetQuota(ctx, models.ScopeUser, aliceU.ID, models.Limits{MaxGPUs: &one}, "admin"); err != nil {
		t.Fatal(err)
	}

	// Launch: a Pod asking for one GPU, running.
	id, code, body := kp.launchForm(alice, "exp1", true)
	if id == "" {
		t.Fatalf("launch: %d %s", code, body)
	}
	wb := kp.waitWB(alice, id, "running")
	if gpus, _ := wb["gpus"].([]any); len(gpus) != 1 {
		t.Fatalf("running workbench holds %v", wb["gpus"])
	}
	pod := kp.pod(id)
	if pod == nil || pod.Status.Phase != corev1.PodRunning {
		t.Fatalf("the running workbench's Pod: %+v", pod)
	}
	if q := pod.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; q.Value() != 1 {
		t.Fatalf("Pod GPU limit %v, want 1", q.String())
	}
	if _, page := kp.get(alice, "/workbenches/"+id); !strings.Contains(page, `data-testid="open-jupyter"`) {
		t.Errorf("the running workbench's page offers no Open button")
	}
	// The proxy reaches "Jupyter" where the runtime says it is (here the
	// fake standing in for the Pod: kwok runs no process).
	if res, body := kp.get(alice, "/wb/"+id+"/api/status"); res.StatusCode != 200 || !strings.Contains(body, "started") {
		t.Errorf("through the proxy: %d %q", res.StatusCode, body)
	}

	// Over the quota, not waiting: refused on the form with a clear error
	// (with "wait" checked it would queue, as on Docker).
	over, code, body := kp.launchForm(alice, "exp2", false)
	if over != "" || code < 400 {
		t.Fatalf("a second GPU over a quota of 1: id %q, status %d", over, code)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if msg := doc.Find(`[data-testid=launch-error]`).Text(); !strings.Contains(strings.ToLower(msg), "quota") {
		t.Fatalf("refusal over quota says %q, want the quota named", msg)
	}

	// bob takes the other GPU: the pool is full.
	bob, _ := kp.user("bob")
	bobID, code, body := kp.launchForm(bob, "bob1", true)
	if bobID == "" {
		t.Fatalf("bob's launch: %d %s", code, body)
	}
	kp.waitWB(bob, bobID, "running")

	// carol waits in the portal's queue: no Pod until a GPU frees.
	carol, _ := kp.user("carol")
	carolID, code, body := kp.launchForm(carol, "carol1", true)
	if carolID == "" {
		t.Fatalf("carol's queued launch: %d %s", code, body)
	}
	cw := kp.workbench(carol, carolID)
	if cw["state"] != "queued" || cw["queue_position"] != float64(1) {
		t.Fatalf("carol's launch with the pool full: state %v, position %v, want queued at 1", cw["state"], cw["queue_position"])
	}
	if kp.pod(carolID) != nil {
		t.Fatal("a queued workbench has a Pod")
	}
	_, page := kp.get(carol, "/workbenches/"+carolID)
	if doc, _ = goquery.NewDocumentFromReader(strings.NewReader(page)); !strings.Contains(doc.Find(`[data-testid=queue-position]`).Text(), "1") {
		t.Errorf("carol's page shows no queue position: %q", doc.Find(`[data-testid=queue-notice]`).Text())
	}

	// Stop alice's: the Pod goes, the run is closed and priced, and
	// carol's starts on the freed GPU.
	podName := pod.Name
	if res := kp.postForm(alice, "/workbenches/"+id+"/stop", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("stop: %d", res.StatusCode)
	}
	kp.waitWB(alice, id, "stopped")
	kubeEventually(t, time.Minute, "alice's Pod deleted", func() bool {
		_, err := kp.c.Client.CoreV1().Pods(kp.c.Namespace).Get(ctx, podName, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	ivs, err := kp.srv.Store.IntervalsOf(ctx, id)
	if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
		t.Fatalf("usage intervals after stop: %+v %v", ivs, err)
	}
	var priced int64
	kubeEventually(t, time.Minute, "a priced ledger line for alice's run", func() bool {
		lines, err := kp.srv.Store.Statement(ctx, aliceU.ID, time.Now().AddDate(0, 0, -1), time.Now().AddDate(0, 0, 1))
		if err != nil {
			t.Fatal(err)
		}
		priced = 0
		for _, l := range lines {
			if l.WorkbenchID == id && l.Resource == "gpu" && l.AmountMicros > 0 {
				priced += l.AmountMicros
			}
		}
		return priced > 0
	})
	cw = kp.waitWB(carol, carolID, "running")
	if cp := kp.pod(carolID); cp == nil || cp.Status.Phase != corev1.PodRunning {
		t.Fatalf("carol's Pod after the GPU freed: %+v", cp)
	}
	if gpus, _ := cw["gpus"].([]any); len(gpus) != 1 {
		t.Fatalf("carol's running workbench holds %v", cw["gpus"])
	}

	for _, s := range []struct {
		cl *http.Client
		id string
	}{{bob, bobID}, {carol, carolID}} {
		kp.postForm(s.cl, "/workbenches/"+s.id+"/stop", nil)
		kp.waitWB(s.cl, s.id, "stopped")
	}
}

// TestKubePendingPodShownAsQueued: a workbench whose Pod the scheduler
// cannot place (a Pod the portal does not know holds the node's GPUs) stays
// "starting" (its units are bound) but reads as queued, with the
// scheduler's reason, on the dashboard, on its page and in the API
// (waiting_for: kubernetes); it runs once the node frees.
func TestKubePendingPodShownAsQueued(t *testing.T) {
	kp := newKubePortal(t, "kpend", 1, 2)
	ctx := context.Background()
	hog := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gpu-hog", Namespace: kp.c.Namespace},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"workbench.test/pool": "kpend"}, Containers: []corev1.Container{{Name: "hog", Image: "hog",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}}}}}
	if _, err := kp.c.Client.CoreV1().Pods(kp.c.Namespace).Create(ctx, hog, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeEventually(t, time.Minute, "the hog to hold the node's GPUs", func() bool {
		p, err := kp.c.Client.CoreV1().Pods(kp.c.Namespace).Get(ctx, "gpu-hog", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != ""
	})
	alice, _ := kp.user("alice")
	id, code, body := kp.launchForm(alice, "pending", true)
	if id == "" {
		t.Fatalf("launch: %d %s", code, body)
	}
	var wb map[string]any
	kubeEventually(t, 2*time.Minute, "the scheduler's reason on the workbench", func() bool {
		wb = kp.workbench(alice, id)
		if wb["state"] == "failed" {
			t.Fatalf("failed: %v", wb["reason"])
		}
		reason, _ := wb["reason"].(string)
		return strings.Contains(reason, "Insufficient nvidia.com/gpu")
	})
	if wb["state"] != "starting" || wb["waiting_for"] != "kubernetes" {
		t.Fatalf("a Pending Pod's workbench: state %v, waiting_for %v; want starting, kubernetes", wb["state"], wb["waiting_for"])
	}

	// The page's live updates say so too (their first event is the
	// current state), so its script keeps showing "queued".
	if ev := firstStateEvent(t, kp.testPortal, alice, id); ev["state"] != "starting" || ev["waiting_for"] != "kubernetes" {
		t.Errorf("first event %v, want starting, waiting_for kubernetes", ev)
	}

	// The dashboard's row: the Queued badge and the scheduler's reason.
	_, page := kp.get(alice, "/")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	row := doc.Find(`[data-testid=workbench-row][data-id="` + id + `"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid=wb-state]`).Text()); got != "queued" {
		t.Errorf("dashboard badge %q, want queued (the queued state's label)", got)
	}
	if got := row.Find(`[data-testid=wb-waiting-reason]`).Text(); !strings.Contains(got, "Insufficient nvidia.com/gpu") || !strings.Contains(got, "Kubernetes") {
		t.Errorf("dashboard reason %q, want the scheduler's", got)
	}
	// The workbench page: the same badge, the reason, who holds it, and
	// no progress bar (the progress of a held launch says nothing).
	_, page = kp.get(alice, "/workbenches/"+id)
	if doc, err = goquery.NewDocumentFromReader(strings.NewReader(page)); err != nil {
		t.Fatal(err)
	}
	status := doc.Find(`[data-testid=wb-status]`)
	if got := strings.TrimSpace(status.Find(`[data-testid=wb-state]`).Text()); got != "queued" {
		t.Errorf("page badge %q, want queued (the queued state's label)", got)
	}
	if got := status.Find(`[data-testid=wb-reason]`).Text(); !strings.Contains(got, "Insufficient nvidia.com/gpu") {
		t.Errorf("page reason %q, want the scheduler's", got)
	}
	if status.Find(`[data-testid=kube-pending-notice]`).Length() != 1 || status.Find(`[data-testid=wb-progress]`).Length() != 0 {
		t.Errorf("page: want the Kubernetes notice and no progress bar:\n%s", status.Text())
	}
	if w, _ := status.Attr("data-waiting-for"); w != "kubernetes" {
		t.Errorf("page data-waiting-for %q", w)
	}
	// In Chinese the reason reads translated around the scheduler's text.
	zh := kp.client()
	kp.login(zh, "alice", "alice-password")
	req, _ := http.NewRequest("GET", kp.ts.URL+"/workbenches/"+id, nil)
	req.Header.Set("Accept-Language", "zh-CN")
	res, err := zh.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	zdoc, err := goquery.NewDocumentFromReader(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := zdoc.Find(`[data-testid=wb-reason]`).Text(); !strings.Contains(got, "Kubernetes 排队中") || !strings.Contains(got, "Insufficient nvidia.com/gpu") {
		t.Errorf("zh-CN reason %q", got)
	}

	// In a browser the page reads "queued" too, and keeps reading it while
	// the Pod waits (its script reloads on any change it is told of).
	bctx := btNewBrowserWithin(t, 5*time.Minute)
	btNavigate(t, bctx, kp.ts.URL+"/login")
	btLogin(t, bctx, "alice", "alice-password")
	btNavigate(t, bctx, kp.ts.URL+"/workbenches/"+id)
	btDo(t, bctx, "wait for the page to apply its first live update",
		chromedp.WaitReady(chromedp.CSS(`[data-testid=wb-status][data-followed]`)))
	if got := btText(t, bctx, "[data-testid=wb-state]"); got != "queued" {
		t.Errorf("the page in the browser reads %q after a live update, want queued", got)
	}

	// The node frees: the Pod is placed and the workbench runs, no longer
	// waiting for anyone.
	if err := kp.c.Client.CoreV1().Pods(kp.c.Namespace).Delete(ctx, "gpu-hog", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	// The open page follows by itself, to the running page.
	if state, seen := btWaitWorkbenchState(t, bctx, "running", 3*time.Minute); state != "running" {
		t.Errorf("the open page reached %q (saw %v), want running without a reload by hand", state, seen)
	}
	wb = kp.waitWB(alice, id, "running")
	if _, ok := wb["waiting_for"]; ok {
		t.Errorf("a running workbench waits for %v", wb["waiting_for"])
	}
	kp.postForm(alice, "/workbenches/"+id+"/stop", nil)
	kp.waitWB(alice, id, "stopped")
}

// TestKubePoolPageGroupsByNode: on Kubernetes the pool page lists the GPUs
// under a heading per node.
func TestKubePoolPageGroupsByNode(t *testing.T) {
	kp := newKubePortal(t, "kgrp", 2, 2)
	cl := kp.client()
	kp.login(cl, "admin", adminPassword)
	_, page := kp.get(cl, "/gpus")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	// Each heading is followed by its node's GPUs, and only those.
	var got []string
	node := ""
	doc.Find(`[data-testid=gpu-table] tbody tr`).Each(func(_ int, s *goquery.Selection) {
		if n, ok := s.Attr("data-node"); ok && s.AttrOr("data-testid", "") == "gpu-node" {
			node = n
			got = append(got, "node "+n+" ("+strings.TrimSpace(s.Text())+")")
			return
		}
		if s.AttrOr("data-testid", "") == "gpu-row" {
			uuid := s.AttrOr("data-uuid", "")
			if !strings.HasPrefix(uuid, node+":") {
				t.Errorf("GPU %s listed under node %q", uuid, node)
			}
			got = append(got, uuid)
		}
	})
	want := "node kgrp-0 (Node kgrp-0),kgrp-0:gpu-0,kgrp-0:gpu-1,node kgrp-1 (Node kgrp-1),kgrp-1:gpu-0,kgrp-1:gpu-1"
	if strings.Join(got, ",") != want {
		t.Errorf("pool table:\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}

// TestKubeNoGPUNodeRefusalNamesTheCluster: a GPU launch when no node of
// the cluster advertises NVIDIA GPUs any more is refused naming the
// cluster and the device plugin, not a Docker engine's runtime.
func TestKubeNoGPUNodeRefusalNamesTheCluster(t *testing.T) {
	kp := newKubePortal(t, "knogpu", 1, 1)
	alice, _ := kp.user("alice")
	if err := kp.c.Client.CoreV1().Nodes().Delete(t.Context(), "knogpu-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	adm := kp.client()
	kp.login(adm, "admin", adminPassword)
	kubeEventually(t, time.Minute, "the pool to lose the node's GPU", func() bool {
		_, body := kp.get(adm, "/api/v1/gpus")
		return strings.Contains(body, `"items":[]`)
	})
	id, code, body := kp.launchForm(alice, "nogpu", false)
	if id != "" || code != http.StatusConflict {
		t.Fatalf("GPU launch with no GPU node: id %q, status %d: %s", id, code, body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg := doc.Find(`[data-testid=launch-error]`).Text()
	if !strings.Contains(msg, "no node of the Kubernetes cluster advertises NVIDIA GPUs") || strings.Contains(msg, "Docker") {
		t.Fatalf("refusal %q, want the cluster named, not Docker", msg)
	}
}

// firstStateEvent reads the first event of the workbench's live updates
// (/api/v1/workbenches/:id/events): its current state.
func firstStateEvent(t *testing.T, p *testPortal, cl *http.Client, id string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", p.ts.URL+"/api/v1/workbenches/"+id+"/events", nil)
	res, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			return ev
		}
	}
	t.Fatalf("no event from %s: %v", req.URL, sc.Err())
	return nil
}

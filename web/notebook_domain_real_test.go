package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A real Jupyter (Notebook 6, base_url /wb/{id}/ as in path mode) works on
// its own origin: Chromium opens it through the one-time code, and the
// page's own script creates a kernel and runs 5*4 over the kernel
// WebSocket, with nothing but the notebook host's cookie and origin.
func TestBrowserRealJupyterOnNotebookDomain(t *testing.T) {
	np := newNBPortal(t)
	np.addImage(realCatalogImage("jupyter", realJupyterImage(t)))
	alice := tokenFor(t, np.testPortal, "alice", "user")
	code, wb := np.api("POST", "/api/v1/workbenches", alice, `{"name":"real","image":"jupyter","flavor":"CPU small"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, np.testPortal, alice, id, "running")

	ctx := btNewBrowser(t)
	btNavigate(t, ctx, np.portal+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	// Jupyter may need a moment after "running" to answer every route.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp := btNavigate(t, ctx, np.portal+"/wb/"+id+"/tree")
		if resp.Status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the notebook tree: status %d at %s", resp.Status, resp.URL)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if loc := btLocation(t, ctx); loc.Scheme+"://"+loc.Host != np.nbOrigin(id) {
		t.Fatalf("the notebook is at %s, want the origin %s", loc, np.nbOrigin(id))
	}
	btScreenshot(t, ctx, "notebook-domain-real-jupyter.png")
	// The script below runs in the tree page: wait until the page and
	// Jupyter's own scripts are done with it (the file list filled), so
	// that nothing of the page's loading aborts the script's requests (a
	// "Failed to fetch" of the kernel POST under a full suite's load,
	// with the portal logging the request as cancelled by the client).
	btDo(t, ctx, "wait for the tree page to settle",
		chromedp.WaitReady(chromedp.CSS(`#notebook_list .list_item, #notebook_list .list_placeholder`)),
		chromedp.Poll[chromedp.Void](`document.readyState === "complete"`))

	const run = `(async () => {
	  const base = "/wb/ID/";
	  const r = await fetch(base + "api/kernels", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({name: "python3"})});
	  if (r.status !== 201) return "create kernel: HTTP " + r.status;
	  const k = await r.json();
	  const rnd = () => Math.random().toString(16).slice(2) + Date.now().toString(16);
	  const ws = new WebSocket("ws://" + location.host + base + "api/kernels/" + k.id + "/channels");
	  const msgID = rnd();
	  return await new Promise(resolve => {
	    setTimeout(() => resolve("timeout"), 40000);
	    ws.onerror = () => resolve("websocket error");
	    ws.onopen = () => ws.send(JSON.stringify({
	      header: {msg_id: msgID, session: rnd(), username: "alice", msg_type: "execute_request", version: "5.3", date: new Date().toISOString()},
	      parent_header: {}, metadata: {}, buffers: [], channel: "shell",
	      content: {code: "5*4", silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: true}}));
	    ws.onmessage = e => {
	      if (typeof e.data !== "string") return;
	      const m = JSON.parse(e.data);
	      if (!m.parent_header || m.parent_header.msg_id !== msgID) return;
	      if (m.header.msg_type === "execute_result") resolve("result " + m.content.data["text/plain"]);
	      if (m.header.msg_type === "error") resolve("kernel error " + m.content.ename);
	    };
	  });
	})()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](strings.ReplaceAll(run, "ID", id), chromedp.EvalAwaitPromise))
	if err != nil || got != "result 20" {
		t.Fatalf("5*4 from the notebook page's own script: %q %v", got, err)
	}
	np.srv.Manager.Wait()
}

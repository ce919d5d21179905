//go:build linux

package web_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
)

// pyJupyterClient is a Jupyter client in Python, as a user would run
// outside the portal: the REST API with "Authorization: token …" through
// urllib, the kernel channels over tornado's WebSocket client with the
// same header (no Origin, no cookie), and the kernel messages built and
// parsed by jupyter_client's own Session. It prints the result of 6*7.
const pyJupyterClient = `
import json, sys, urllib.request
from tornado import ioloop, websocket, httpclient
from jupyter_client.session import Session, json_default
base, tok = sys.argv[1], sys.argv[2]
hdr = {"Authorization": "token " + tok, "Content-Type": "application/json"}
req = urllib.request.Request(base + "api/kernels", data=b'{"name":"python3"}', headers=hdr, method="POST")
kernel = json.load(urllib.request.urlopen(req, timeout=60))
async def main():
    url = base.replace("http", "ws", 1) + "api/kernels/" + kernel["id"] + "/channels"
    conn = await websocket.websocket_connect(httpclient.HTTPRequest(url, headers=hdr, request_timeout=60))
    s = Session(username="jupyter-client")
    msg = s.msg("execute_request", content={"code": "6*7", "silent": False, "store_history": False,
        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
    msg["channel"] = "shell"
    conn.write_message(json.dumps(msg, default=json_default))
    while True:
        raw = await conn.read_message()
        if raw is None:
            sys.exit("connection closed")
        if not isinstance(raw, str):
            continue
        m = json.loads(raw)
        if m.get("parent_header", {}).get("msg_id") != msg["header"]["msg_id"]:
            continue
        if m["msg_type"] == "execute_result":
            print("RESULT", m["content"]["data"]["text/plain"])
            return
        if m["msg_type"] == "error":
            sys.exit("kernel error: " + json.dumps(m["content"]))
ioloop.IOLoop.current().run_sync(main, timeout=120)
`

// runPyJupyterClient runs pyJupyterClient in a throwaway container of the
// real Jupyter image on the host's network (the test portal listens on
// loopback) and returns its output.
func runPyJupyterClient(t *testing.T, ctx context.Context, cli *client.Client, image, server, tok string) (string, int64) {
	t.Helper()
	began := time.Now()
	defer func() { t.Logf("Python client container ran %s", time.Since(began).Round(time.Millisecond)) }()
	created, err := cli.ContainerCreate(ctx, &container.Config{
		Image: image, User: "1000", Cmd: []string{"python3", "-c", pyJupyterClient, server, tok},
		Labels: map[string]string{"workbench-test": "jupyter-client"},
	}, &container.HostConfig{NetworkMode: "host"}, nil, nil, "")
	if err != nil {
		t.Fatalf("create client container: %v", err)
	}
	t.Cleanup(func() {
		_ = cli.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
	})
	if err := cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start client container: %v", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	waitC, errC := cli.ContainerWait(wctx, created.ID, container.WaitConditionNotRunning)
	var code int64
	select {
	case r := <-waitC:
		code = r.StatusCode
	case err := <-errC:
		t.Fatalf("wait for the client: %v", err)
	}
	rc, err := cli.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out bytes.Buffer
	_, _ = stdcopy.StdCopy(&out, &out, rc)
	return strings.TrimSpace(out.String()), code
}

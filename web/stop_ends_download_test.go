//go:build linux

package web_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestStopEndsDownload: a download through the proxy from a workbench that
// stops ends at once, with an error, instead of hanging. A stopped
// container's network goes away with the download's data still queued, so
// its end never reached the portal: a client reading at about 3 MiB/s saw
// nothing more, and no error, until TCP keepalive gave up on the upstream
// connection (166 s on a live portal).
func TestStopEndsDownload(t *testing.T) {
	p, _ := realJupyterPortal(t)
	alice := tokenFor(t, p, "alice", "user")
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"results","image":"jupyter","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")

	// A 48 MiB result in the home, put there through Jupyter's contents API.
	const size = 48 << 20
	body, _ := json.Marshal(map[string]any{"type": "file", "format": "base64", "content": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("result\n"), size/7+1)[:size])})
	req, _ := http.NewRequest(http.MethodPut, p.ts.URL+"/wb/"+id+"/api/contents/result.bin", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", p.ts.URL)
	res, err := ac.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		t.Fatalf("put the result: %d", res.StatusCode)
	}

	res, err = ac.Get(p.ts.URL + "/wb/" + id + "/files/result.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("download: %d", res.StatusCode)
	}
	// A slow client: 64 KiB every 20 ms, until the download ends.
	ended := make(chan error, 1)
	read := make(chan int64, 1)
	go func() {
		buf := make([]byte, 64<<10)
		var n int64
		for {
			m, err := io.ReadFull(res.Body, buf)
			n += int64(m)
			if n >= 1<<20 {
				select {
				case read <- n:
				default:
				}
			}
			if err != nil {
				ended <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	<-read // the download is under way
	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code/100 != 2 {
		t.Fatalf("stop: %d %v", code, body)
	}
	waitState(t, p, alice, id, "stopped")
	select {
	case err := <-ended:
		if err == io.EOF {
			t.Fatal("the download of a stopped workbench ended as if complete")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the download still hung 20 s after its workbench stopped")
	}
}

package proxy

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestStreamsWithoutBuffering proves the first chunk reaches the client
// while the upstream is still blocked: the upstream only finishes after the
// client has read the first chunk, so a buffering proxy deadlocks and the
// request's deadline fails the test.
//
// Both kinds of streamed response are covered: a body of unknown length
// (chunked) and a server-sent event stream.
func TestStreamsWithoutBuffering(t *testing.T) {
	t.Run("chunked", func(t *testing.T) { testStream(t, "application/octet-stream") })
	t.Run("event-stream", func(t *testing.T) { testStream(t, "text/event-stream") })
}

func testStream(t *testing.T, contentType string) {
	release := make(chan struct{})
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, "first|")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "second")
	}), nil)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.front.URL+"/wb/abc/api/events/subscribe", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	first := make([]byte, len("first|"))
	if _, err := io.ReadFull(res.Body, first); err != nil {
		t.Fatalf("first chunk not delivered before upstream finished: %v", err)
	}
	if string(first) != "first|" {
		t.Fatalf("first chunk %q", first)
	}
	close(release)
	rest, err := io.ReadAll(res.Body)
	if err != nil || string(rest) != "second" {
		t.Fatalf("rest %q, err %v", rest, err)
	}
}

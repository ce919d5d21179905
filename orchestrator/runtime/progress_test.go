package runtime

import (
	"errors"
	"strings"
	"testing"
)

func TestPullProgress(t *testing.T) {
	msg := func(status, id string, cur, total int64) pullMessage {
		var m pullMessage
		m.Status, m.ID = status, id
		m.ProgressDetail.Current, m.ProgressDetail.Total = cur, total
		return m
	}
	p := newPullProgress()
	steps := []struct {
		m    pullMessage
		want int
	}{
		{msg("Pulling from library/x", "1", 0, 0), 0},
		{msg("Pulling fs layer", "a", 0, 0), 0},
		{msg("Pulling fs layer", "b", 0, 0), 0},
		{msg("Already exists", "c", 0, 0), 0},
		// a: 50/100 downloaded; b unknown → assumed 100 too: 50/400.
		{msg("Downloading", "a", 50, 100), 12},
		{msg("Downloading", "b", 100, 300), 18},   // 150/800
		{msg("Download complete", "a", 0, 0), 25}, // 200/800
		{msg("Extracting", "a", 100, 100), 37},    // 300/800
		{msg("Pull complete", "a", 0, 0), 37},     // unchanged
		{msg("Downloading", "b", 50, 300), 37},    // never goes back
		{msg("Pull complete", "b", 0, 0), 99},     // all done, 100 only at the end
		{msg("Digest: sha256:abc", "", 0, 0), 99}, // image-level line
		{msg("Status: Downloaded", "", 0, 0), 99}, // image-level line
	}
	for i, s := range steps {
		if got := p.update(s.m); got != s.want {
			t.Errorf("step %d (%s %s): %d%%, want %d%%", i, s.m.Status, s.m.ID, got, s.want)
		}
	}
}

func TestReadPull(t *testing.T) {
	var calls []int
	stream := `{"status":"Pulling fs layer","id":"a"}
{"status":"Downloading","id":"a","progressDetail":{"current":10,"total":100}}
{"status":"Downloading","id":"a","progressDetail":{"current":10,"total":100}}
{"errorDetail":{"message":"unauthorized: authentication required"},"error":"unauthorized"}
`
	err := readPull(strings.NewReader(stream), func(pct int, _ string) { calls = append(calls, pct) }, -1)
	if err == nil || err.Error() != "unauthorized: authentication required" {
		t.Fatalf("err = %v", err)
	}
	if len(calls) != 2 || calls[1] != 5 {
		t.Errorf("progress calls %v, want [0 5] (one per change)", calls)
	}
	if err := readPull(strings.NewReader(`{"status":"ok"}`+"\n"+`{"status":`), func(int, string) {}, -1); err == nil {
		t.Error("truncated stream accepted")
	}
	var pe *PullError = &PullError{Ref: "x", Reason: "boom"}
	if !errors.As(error(pe), &pe) || pe.Error() != "boom" {
		t.Errorf("PullError = %q", pe.Error())
	}
}

func TestPullProgressBytes(t *testing.T) {
	var seen []PullProgress
	stream := `{"status":"Pulling fs layer","id":"a"}
{"status":"Pulling fs layer","id":"b"}
{"status":"Downloading","id":"a","progressDetail":{"current":10000000,"total":40000000}}
{"status":"Downloading","id":"b","progressDetail":{"current":5000000,"total":60000000}}
`
	if err := readPullDetailed(strings.NewReader(stream), func(p PullProgress) { seen = append(seen, p) }); err != nil {
		t.Fatal(err)
	}
	last := seen[len(seen)-1]
	if last.DoneBytes != 15000000 || last.TotalBytes != 100000000 {
		t.Errorf("bytes %d of %d, want 15000000 of 100000000", last.DoneBytes, last.TotalBytes)
	}
}

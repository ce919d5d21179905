package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// btAnnounced waits for the layout's live region (#announcer) to say
// something and returns what it says, or "" if it stays silent for limit.
// app.js fills it a moment after load, so it is polled, not read once.
func btAnnounced(t *testing.T, ctx context.Context, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		got, err := chromedp.Run(rctx, chromedp.Evaluate[string](
			`(() => { const e = document.getElementById("announcer"); return e ? e.textContent : ""; })()`))
		cancel()
		if err == nil && got != "" {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ""
}

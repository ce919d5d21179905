package templates

import (
	"fmt"
	"net/http"
	"time"
)

func statusTitle(status int) string {
	if t := http.StatusText(status); t != "" {
		return fmt.Sprintf("%d · %s", status, t)
	}
	return fmt.Sprint(status)
}

// GiB formats MiB as GiB with one decimal.
func GiB(mib uint64) string { return fmt.Sprintf("%.1f GiB", float64(mib)/1024) }

// When formats a time for tables; zero and nil read as "—".
func When(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

package web_test

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"
	_ "github.com/mattn/go-sqlite3"

	"workbench/models"
	"workbench/web"
)

// smallDisk mounts a tmpfs of size bytes for a portal's data directory,
// unmounted when t ends (after the portal is closed: registered first).
// Mounting needs root, as CI has; elsewhere the test is skipped.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("a small disk for the data directory needs a tmpfs mount (root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillDisk fills the disk of dataDir to the last byte. The database's
// write-ahead log is first truncated (a checkpoint), so the next write
// to the database has to grow a file and fails with SQLITE_FULL, as on a
// disk that filled up: a log left at its size would take a few more
// writes in place. The filler is removed when t ends.
func fillDisk(t *testing.T, dataDir string) {
	t.Helper()
	db, err := sql.Open("sqlite3", filepath.Join(dataDir, models.DBFileName)+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for {
		var busy, logged, done int
		if err := db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		if busy == 0 {
			break // readers in the portal let go: the log is empty now
		}
	}
	filler := filepath.Join(dataDir, "filler")
	t.Cleanup(func() { _ = os.Remove(filler) })
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	for n := len(chunk) / 2; n > 0; n /= 2 { // the last bytes too
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
}

// In Chromium, JavaScript on and off, on a data directory whose disk
// really fills up (a tmpfs): an admin clicks Move on a queued request that
// left the queue meanwhile. The refusal ("first is no longer in the
// queue") is decided by reading, and was put in the session for the queue
// page, which could not be saved on the full disk: the click came back to
// the queue without a word. The refusal is now on the page it opens.
func TestBrowserRefusalShownOnAFullDisk(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			data := smallDisk(t, "64m")
			p, _ := enginePortal(t, func(c *web.Config) { c.DataDir = data })
			first, second := queueTwo(t, p)
			b := btSignedIn(t, js, p.ts.URL, "admin", btAdminPassword)
			btNavigate(t, b, p.ts.URL+"/admin/queue")
			// A first move, with the password confirmed, while the disk
			// has room.
			if resp := btMoveToFront(t, b, second); resp.Status != http.StatusOK {
				t.Fatalf("the first move: %d", resp.Status)
			}

			// "first" leaves the queue (its owner stopped it) while the
			// page is open, and the disk fills up.
			bg := context.Background()
			if err := p.srv.Store.SetWorkbenchState(bg, first, models.StateStopped, 0, "", nil); err != nil {
				t.Fatal(err)
			}
			fillDisk(t, data)
			row := `[data-testid=queue-row][data-id="` + first + `"]`
			resp := btSubmit(t, b, "click Move on the row of a request that left the queue", chromedp.Click(chromedp.CSS(row+` [data-testid=queue-move]`)))
			if resp.Status != http.StatusServiceUnavailable {
				t.Errorf("Move refused on a full disk: status %d at %s, want 503 with the refusal", resp.Status, btLocation(t, b))
			}
			if msg := btText(t, b, `body`); !strings.Contains(msg, "first is no longer in the queue.") {
				t.Errorf("the page after the click reads %q, want why Move was refused", msg)
			}
			btScreenshot(t, b, "refusal-full-disk-"+jsName(js)+".png")
		})
	}
}

package orchestrator

import (
	"context"
	"sync"
	"time"
)

// imagePresenceFresh is how long an engine's answer to "is this image here,
// and how big" is reused by the launch form and the catalog, which ask it
// for every image on every view (one ImageInspect each).
//
// Why a short expiry and not the engine's image events: the portal's own
// image operations (pre-pull, the pull of a launch or an image test, load
// from an archive, save as image, removal of a saved image) forget the
// cache as they end (forgetImages), so what an admin or user does here
// shows on the next view. What the expiry covers is the engine changed
// behind the portal's back (an operator's `docker pull` or `docker rmi`,
// or `workbench image load`, another process).
// Image events would cover that too, but need a second event subscription
// — the container stream's install-label filter is ANDed with the type, and
// images carry no install label — with its own reconnect loop and its own
// way of failing silently, for a card that is informational: a launch
// never relies on it (EnsureImage asks the engine itself). Ten seconds of
// staleness after an out-of-band change is the trade.
const imagePresenceFresh = 10 * time.Second

// imagePresence keeps ImageSize answers by image reference. A failed
// inspect (engine down) is never kept. It is not a models.Cache: those
// follow writes to the database's tables, and this is the engine's state.
type imagePresence struct {
	mu sync.Mutex
	// gen moves on every forget: an inspect that began before a forget
	// does not store its (possibly outdated) answer.
	gen uint64
	m   map[string]presenceEntry
}

type presenceEntry struct {
	present bool
	size    int64
	at      time.Time
}

func (p *imagePresence) get(ref string, now time.Time) (presenceEntry, uint64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.m[ref]
	if ok && (now.Before(e.at) || now.Sub(e.at) >= imagePresenceFresh) {
		ok = false // expired, or a clock set back
	}
	return e, p.gen, ok
}

func (p *imagePresence) put(ref string, gen uint64, e presenceEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gen != p.gen {
		return
	}
	if p.m == nil {
		p.m = map[string]presenceEntry{}
	}
	p.m[ref] = e
}

// forget drops every answer. Whole, not by reference: the engine names
// one image in several ways (docker.io/library/x:latest is x), a load
// reports the names in the archive, a mirror pulls under another name,
// and a catalog holds tens of images, so asking again costs little.
func (p *imagePresence) forget() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gen++
	clear(p.m)
}

// ImageSize reports whether an image is present on this server and its
// size in bytes, reusing an answer younger than imagePresenceFresh that no
// image operation of this portal has made stale since.
func (m *Manager) ImageSize(ctx context.Context, ref string) (bool, int64, error) {
	now := m.clock()
	e, gen, ok := m.images.get(ref, now)
	if ok {
		return e.present, e.size, nil
	}
	present, size, err := m.rt.ImageSize(ctx, ref)
	if err != nil {
		return false, 0, err
	}
	m.images.put(ref, gen, presenceEntry{present: present, size: size, at: now})
	return present, size, nil
}

// forgetImages is called when an image operation of this portal ends,
// whether or not it succeeded (a failed pull or load may still have
// changed what the engine holds).
func (m *Manager) forgetImages() { m.images.forget() }

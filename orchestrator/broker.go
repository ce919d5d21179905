package orchestrator

import (
	"sync"
	"time"
)

// Update is one workbench state change, as streamed to pages and the API.
type Update struct {
	ID       string `json:"id"`
	State    string `json:"state"`
	Progress int    `json:"progress"`
	Reason   string `json:"reason"`
	Error    string `json:"error,omitempty"` // why a stop failed (the state stays stopping)
	// Yielding is set by a preemption notice (true) and its rescission
	// (false) only: the page reloads to show or drop the notice.
	Yielding *bool     `json:"yielding,omitempty"`
	At       time.Time `json:"at"`
}

// Broker fans workbench updates out to subscribers (SSE streams). A slow
// subscriber loses intermediate updates rather than blocking the manager:
// each update carries the full state, so the latest one is enough.
type Broker struct {
	mu   sync.Mutex
	subs map[chan Update]string // channel → workbench id ("" = all)
}

// NewBroker returns an empty broker.
func NewBroker() *Broker { return &Broker{subs: map[chan Update]string{}} }

// Subscribe returns a channel of updates for workbench id ("" for all) and a
// function that ends the subscription.
func (b *Broker) Subscribe(id string) (<-chan Update, func()) {
	ch := make(chan Update, 16)
	b.mu.Lock()
	b.subs[ch] = id
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		if _, ok := b.subs[ch]; ok {
			delete(b.subs, ch)
			close(ch)
		}
		b.mu.Unlock()
	}
}

// Publish delivers u to every matching subscriber without blocking.
func (b *Broker) Publish(u Update) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch, id := range b.subs {
		if id != "" && id != u.ID {
			continue
		}
		select {
		case ch <- u:
		default: // full: drop the oldest, keep the newest
			select {
			case <-ch:
			default:
			}
			select {
			case ch <- u:
			default:
			}
		}
	}
}

package orchestrator

import (
	"context"
	"errors"
	"sync"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// PrePullState is where an admin's pre-pull of an image stands. It lives in
// memory: a reload of the catalog page finds it, a portal restart ends it
// (the engine keeps what it downloaded, and the image is then either
// present or can be pulled again).
type PrePullState struct {
	Ref        string
	Running    bool
	Percent    int
	DoneBytes  int64
	TotalBytes int64
	Mirror     string // the mirror's reference, when a registry mirror serves the pull
	Error      string // one plain sentence
	Details    string // the engine's error
	StartedBy  string
	StartedAt  time.Time
	FinishedAt time.Time
}

// prePulls holds the pre-pulls of this process, by image reference.
type prePulls struct {
	mu sync.Mutex
	m  map[string]*PrePullState
}

func (p *prePulls) get(ref string) (PrePullState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.m[ref]
	if !ok {
		return PrePullState{}, false
	}
	return *s, true
}

// begin records a new pull of ref unless one is running.
func (p *prePulls) begin(ref, by string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*PrePullState{}
	}
	if s := p.m[ref]; s != nil && s.Running {
		return false
	}
	p.m[ref] = &PrePullState{Ref: ref, Running: true, StartedBy: by, StartedAt: time.Now().UTC()}
	return true
}

func (p *prePulls) update(ref string, fn func(*PrePullState)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.m[ref]; s != nil {
		fn(s)
	}
}

// PrePull downloads img's image in the background, so the first launch of
// it does not wait (or fail) on the registry. It returns at once; a pull of
// the same image already under way is not started twice.
func (m *Manager) PrePull(ctx context.Context, img *models.Image, by string) error {
	if err := m.rt.Ping(ctx); err != nil {
		return errors.Join(ErrEngineUnavailable, err)
	}
	if !m.pulls.begin(img.Image, by) {
		return nil
	}
	ref := img.Image
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(m.life, 6*time.Hour)
		defer cancel()
		err := m.rt.PullImage(ctx, ref, func(p runtime.PullProgress) {
			m.pulls.update(ref, func(s *PrePullState) {
				s.Percent, s.DoneBytes, s.TotalBytes, s.Mirror = p.Percent, p.DoneBytes, p.TotalBytes, p.Mirror
			})
		})
		// Before the state says done: a card that shows the pull ended
		// also shows the image present.
		m.forgetImages()
		m.pulls.update(ref, func(s *PrePullState) {
			s.Running, s.FinishedAt = false, time.Now().UTC()
			var pe *runtime.PullError
			switch {
			case errors.As(err, &pe):
				s.Error, s.Details = sentence(pe.AdminReason), pe.Details // an admin's pull
			case err != nil:
				s.Error, s.Details = reasonf("The image could not be pulled; try again, and check the portal's log if it keeps failing."), err.Error()
			default:
				s.Percent = 100
			}
		})
		m.log.Info("pre-pull ended", "ref", ref, "err", err)
	}()
	return nil
}

// PrePullStatus returns the state of the last pre-pull of ref in this
// process, if any.
func (m *Manager) PrePullStatus(ref string) (PrePullState, bool) { return m.pulls.get(ref) }

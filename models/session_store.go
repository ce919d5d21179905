package models

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"sync"
	"time"
)

// SessionStore keeps alexedwards/scs sessions in the sessions table.
//
// scs re-commits a session on every request when an idle timeout is set (to
// push the expiry forward). A SQLite write per page view would serialise all
// requests on the single writer, so Commit skips the write when the data is
// unchanged and the stored expiry is less than a minute old: idle expiry is
// then exact to within a minute, which is plenty.
type SessionStore struct {
	s  *Store
	mu sync.Mutex
	// last remembers, per token, what was last written.
	last map[string]committed
}

type committed struct {
	sum    [32]byte
	expiry time.Time
}

// SessionStore returns the scs store backed by this database.
func (s *Store) SessionStore() *SessionStore {
	return &SessionStore{s: s, last: make(map[string]committed)}
}

// Find implements scs.Store.
func (st *SessionStore) Find(token string) ([]byte, bool, error) {
	return st.FindCtx(context.Background(), token)
}

// Commit implements scs.Store.
func (st *SessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return st.CommitCtx(context.Background(), token, b, expiry)
}

// Delete implements scs.Store.
func (st *SessionStore) Delete(token string) error {
	return st.DeleteCtx(context.Background(), token)
}

// FindCtx implements scs.CtxStore.
func (st *SessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	var b []byte
	now := float64(st.s.now().UnixNano()) / 1e9
	err := st.s.sql.QueryRowContext(ctx, "SELECT data FROM sessions WHERE token = ? AND expiry > ?", token, now).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// CommitCtx implements scs.CtxStore.
func (st *SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	sum := sha256.Sum256(b)
	st.mu.Lock()
	prev, ok := st.last[token]
	st.mu.Unlock()
	if ok && prev.sum == sum && expiry.Sub(prev.expiry) < time.Minute && expiry.After(prev.expiry.Add(-time.Minute)) {
		return nil
	}
	_, err := st.s.sql.ExecContext(ctx,
		"INSERT INTO sessions (token, data, expiry) VALUES (?, ?, ?) ON CONFLICT(token) DO UPDATE SET data = excluded.data, expiry = excluded.expiry",
		token, b, float64(expiry.UnixNano())/1e9)
	if err != nil {
		return err
	}
	st.mu.Lock()
	st.last[token] = committed{sum: sum, expiry: expiry}
	st.mu.Unlock()
	return nil
}

// DeleteCtx implements scs.CtxStore.
func (st *SessionStore) DeleteCtx(ctx context.Context, token string) error {
	st.mu.Lock()
	delete(st.last, token)
	st.mu.Unlock()
	_, err := st.s.sql.ExecContext(ctx, "DELETE FROM sessions WHERE token = ?", token)
	return err
}

// DeleteExpired removes expired sessions; the server calls it periodically.
func (st *SessionStore) DeleteExpired(ctx context.Context) (int64, error) {
	now := st.s.now()
	st.mu.Lock()
	for t, c := range st.last {
		if c.expiry.Before(now) {
			delete(st.last, t)
		}
	}
	st.mu.Unlock()
	res, err := st.s.sql.ExecContext(ctx, "DELETE FROM sessions WHERE expiry <= ?", float64(now.UnixNano())/1e9)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// CountSessions returns the number of live sessions (for tests and metrics).
func (st *SessionStore) CountSessions(ctx context.Context) (int64, error) {
	var n int64
	err := st.s.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions WHERE expiry > ?", float64(st.s.now().UnixNano())/1e9).Scan(&n)
	return n, err
}

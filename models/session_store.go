package models

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// SessionStore keeps alexedwards/scs sessions in the sessions table.
//
// Only the server process reads and writes sessions, so the store also keeps
// every session it has seen in memory: a page view or a proxied notebook
// request then costs no SQLite read. Writes go through to the table first,
// so a restart loses nothing.
//
// scs re-commits a session on every request when an idle timeout is set (to
// push the expiry forward). A SQLite write per page view would serialise all
// requests on the single writer, so Commit skips the write when the data is
// unchanged and the stored expiry is less than a minute old: idle expiry is
// then exact to within a minute, which is plenty.
//
// The table holds SHA-256 of each session id, never the id itself (see
// storedSessionID), so a backup or a read of the database file yields no
// session that could be replayed.
type SessionStore struct {
	s  *Store
	mu sync.Mutex
	// last remembers, per token, what was last written.
	last map[string]committed
}

type committed struct {
	sum    [32]byte
	expiry time.Time // as last written to the table
	data   []byte
	live   time.Time // the expiry scs asked for (the table may lag by a minute)
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
	now := st.s.now()
	st.mu.Lock()
	c, ok := st.last[token]
	st.mu.Unlock()
	if ok && c.data != nil {
		if !now.Before(c.live) {
			return nil, false, nil
		}
		return c.data, true, nil
	}
	var b []byte
	var expiry float64
	err := st.s.sql.QueryRowContext(ctx, "SELECT data, expiry FROM sessions WHERE token = ? AND expiry > ?", storedSessionID(token),
		float64(now.UnixNano())/1e9).Scan(&b, &expiry)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	exp := time.Unix(0, int64(expiry*1e9))
	st.mu.Lock()
	st.last[token] = committed{sum: sha256.Sum256(b), expiry: exp, data: b, live: exp}
	st.mu.Unlock()
	return b, true, nil
}

// CommitCtx implements scs.CtxStore.
func (st *SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	sum := sha256.Sum256(b)
	st.mu.Lock()
	prev, ok := st.last[token]
	if ok && prev.sum == sum && expiry.Sub(prev.expiry) < time.Minute && expiry.After(prev.expiry.Add(-time.Minute)) {
		prev.live = expiry
		st.last[token] = prev
		st.mu.Unlock()
		return nil
	}
	st.mu.Unlock()
	_, err := st.s.sql.ExecContext(ctx,
		"INSERT INTO sessions (token, data, expiry) VALUES (?, ?, ?) ON CONFLICT(token) DO UPDATE SET data = excluded.data, expiry = excluded.expiry",
		storedSessionID(token), b, float64(expiry.UnixNano())/1e9)
	if err != nil {
		return err
	}
	st.mu.Lock()
	st.last[token] = committed{sum: sum, expiry: expiry, data: append([]byte(nil), b...), live: expiry}
	st.mu.Unlock()
	return nil
}

// DeleteCtx implements scs.CtxStore.
func (st *SessionStore) DeleteCtx(ctx context.Context, token string) error {
	st.mu.Lock()
	delete(st.last, token)
	st.mu.Unlock()
	_, err := st.s.sql.ExecContext(ctx, "DELETE FROM sessions WHERE token = ?", storedSessionID(token))
	return err
}

// DeleteExpired removes expired sessions; the server calls it periodically.
func (st *SessionStore) DeleteExpired(ctx context.Context) (int64, error) {
	now := st.s.now()
	st.mu.Lock()
	for t, c := range st.last {
		if c.live.Before(now) {
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

// storedSessionID is what the sessions table keeps of a session id: its
// SHA-256 in hex. The id is 256 random bits from scs, so a fast hash is
// enough (as for API tokens).
func storedSessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

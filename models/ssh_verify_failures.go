package models

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Failed SSH key verification attempts (verify-<code>@portal), counted by
// client address: web/sshgate/verify_limit.go says the rule. They are
// rows, not the gate's memory, so a restart or an upgrade of the portal
// does not hand a guesser a fresh set of tries. The gate consults them
// once per verify attempt only (one statement); ordinary SSH logins never
// touch them.

// SSHVerifyFailuresAllowed codes that name no pending key may be tried from
// one address within SSHVerifyFailureWindow.
const (
	SSHVerifyFailuresAllowed = 10
	SSHVerifyFailureWindow   = 10 * time.Minute
)

// ReserveSSHVerifyAttempt counts one attempt from addr at now as failed
// before its code is looked up, in one statement (concurrent connections
// from the address get no more tries than allowed). It returns the
// reservation's id, to give back should the code be right. When addr has
// no attempts left it counts nothing and returns 0 and how long until its
// oldest counted failure leaves the window.
func (s *Store) ReserveSSHVerifyAttempt(ctx context.Context, addr string, now time.Time) (id int64, wait time.Duration, err error) {
	now = now.UTC()
	since := now.Add(-SSHVerifyFailureWindow)
	// Twice at most: should the oldest failure be swept between the two
	// statements, the address has an attempt again.
	for range 2 {
		res, err := s.sql.ExecContext(ctx, `INSERT INTO ssh_verify_failures (addr, at) SELECT ?, ?
			WHERE (SELECT COUNT(*) FROM ssh_verify_failures WHERE addr = ? AND at > ?) < ?`,
			addr, now, addr, since, SSHVerifyFailuresAllowed)
		if err != nil {
			return 0, 0, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, 0, err
		} else if n == 1 {
			id, err = res.LastInsertId()
			return id, 0, err
		}
		var oldest time.Time
		err = s.sql.QueryRowContext(ctx, "SELECT at FROM ssh_verify_failures WHERE addr = ? AND at > ? ORDER BY at LIMIT 1", addr, since).Scan(&oldest)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		return 0, oldest.Add(SSHVerifyFailureWindow).Sub(now), nil
	}
	return 0, 0, errors.New("ssh verify attempts: the count kept changing")
}

// GiveBackSSHVerifyAttempt undoes the reservation id: its code was right
// (or the portal, not the code, failed).
func (s *Store) GiveBackSSHVerifyAttempt(ctx context.Context, id int64) error {
	_, err := s.sql.ExecContext(ctx, "DELETE FROM ssh_verify_failures WHERE id = ?", id)
	return err
}

// DeleteOldSSHVerifyFailures removes failures that have left the window
// by the store's clock; the server's periodic session cleanup calls it.
func (s *Store) DeleteOldSSHVerifyFailures(ctx context.Context) (int64, error) {
	res, err := s.sql.ExecContext(ctx, "DELETE FROM ssh_verify_failures WHERE at <= ?", s.now().Add(-SSHVerifyFailureWindow))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

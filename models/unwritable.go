package models

import (
	"context"
	"errors"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// Unwritable reports whether err is the database refusing a write because
// of where it lives, not because of what was written: its disk is full
// (SQLITE_FULL), it is read-only (a file system remounted read-only, a
// file made immutable: SQLITE_READONLY), or the disk failed the write
// (SQLITE_IOERR). Until an operator frees or fixes the disk, no change
// can be recorded; reads still work.
func Unwritable(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case sqlite3.ErrFull, sqlite3.ErrReadonly, sqlite3.ErrIoErr:
		return true
	}
	return false
}

// QueryOnly makes every connection of the store refuse writes
// (SQLITE_READONLY, as a read-only disk does), or write again. It holds
// all connections of the pool while it sets them, so it waits for the
// work under way. For tests of a database that cannot be written.
func (s *Store) QueryOnly(ctx context.Context, on bool) error {
	v := 0
	if on {
		v = 1
	}
	n := s.sql.Stats().MaxOpenConnections
	conns := make([]interface{ Close() error }, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := s.sql.Conn(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA query_only = %d", v)); err != nil {
			return err
		}
	}
	return nil
}

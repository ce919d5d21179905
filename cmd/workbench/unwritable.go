package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"workbench/models"
)

// A command that cannot write (the data directory's disk full or
// read-only) said only SQLite's "database or disk is full": not which
// disk, nor what to do. The error now names the file and what to do, and
// keeps SQLite's words first.

// unwritableError is a write refused because of where a file lives
// (models.Unwritable): the portal's database, or a backup being written.
type unwritableError struct {
	err    error
	file   string
	backup bool // file is the backup being written, not the database
}

func (e *unwritableError) Error() string {
	dir := filepath.Dir(e.file)
	if e.backup {
		return fmt.Sprintf("%v: the backup %s cannot be written, as the disk of %s is full or read-only: free space there (df -h %s) or write the backup to another disk; the database was not changed",
			e.err, e.file, dir, dir)
	}
	return fmt.Sprintf("%v: the portal's database %s cannot be written, as the disk of %s is full or read-only: free space there (df -h %s) or make it writable again (a file system mounted read-only, the files' owner or mode), then run the command again",
		e.err, e.file, dir, dir)
}

func (e *unwritableError) Unwrap() error { return e.err }

// openedDatabase remembers the database a command opened (openStoreAs),
// for run to name it when a write to it was refused.
type openedDatabase struct {
	mu   sync.Mutex
	path string
}

type openedKey struct{}

func withOpenedDatabase(ctx context.Context) (context.Context, *openedDatabase) {
	o := &openedDatabase{}
	return context.WithValue(ctx, openedKey{}, o), o
}

// noteOpened records that the command opened the database at path.
func noteOpened(ctx context.Context, path string) {
	if o, ok := ctx.Value(openedKey{}).(*openedDatabase); ok {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		o.mu.Lock()
		o.path = path
		o.mu.Unlock()
	}
}

// explainUnwritable is err, or, when err is a write the database the
// command opened refused because of its disk, err naming the database and
// what to do. An error already explained (a backup's) is left as it is.
func explainUnwritable(err error, o *openedDatabase) error {
	var done *unwritableError
	if err == nil || !models.Unwritable(err) || errors.As(err, &done) {
		return err
	}
	o.mu.Lock()
	path := o.path
	o.mu.Unlock()
	if path == "" {
		return err
	}
	return &unwritableError{err: err, file: path}
}

// storeHookKey carries a function that openStoreAs calls on the store it
// opened: tests make it refuse writes (Store.QueryOnly), as a full or
// read-only disk does.
type storeHookKey struct{}

package models

import (
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"workbench/models/pricing"
)

// tableVersions counts the writes to each table, so read-mostly values
// derived from a table (the catalog, the price list) can be cached and
// dropped as soon as the table changes. Every write through gorm bumps the
// count of its table (Create, Update, Delete; a raw Exec, whose table gorm
// does not know, bumps every table), so a new store method that writes one
// of these tables invalidates the caches without anyone remembering to.
type tableVersions struct {
	all atomic.Uint64 // bumped by writes whose table is unknown
	mu  sync.Mutex
	per map[string]*atomic.Uint64
}

func (v *tableVersions) counter(table string) *atomic.Uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.per == nil {
		v.per = map[string]*atomic.Uint64{}
	}
	c := v.per[table]
	if c == nil {
		c = new(atomic.Uint64)
		v.per[table] = c
	}
	return c
}

// version is a number that changes whenever one of tables is written.
func (v *tableVersions) version(tables ...string) uint64 {
	sum := v.all.Load()
	for _, t := range tables {
		sum += v.counter(t).Load()
	}
	return sum
}

func (v *tableVersions) bump(db *gorm.DB) {
	if db.Error != nil && db.RowsAffected == 0 {
		return
	}
	if w, ok := db.Get(writtenKey); ok {
		w.(*writtenTables).add(db.Statement.Table) // bumped again at the commit (InTx)
	}
	if t := db.Statement.Table; t != "" {
		v.counter(t).Add(1)
		return
	}
	v.all.Add(1)
}

// writtenKey holds, on a transaction's statements, the tables it wrote.
const writtenKey = "workbench:written_tables"

// writtenTables are the tables a transaction wrote ("" for a write whose
// table gorm does not know).
type writtenTables struct {
	mu     sync.Mutex
	tables map[string]bool
}

func (w *writtenTables) add(table string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tables == nil {
		w.tables = map[string]bool{}
	}
	w.tables[table] = true
}

// anyOf says whether one of tables was written, or a table gorm does not
// know (a raw statement, which may have written any); false on nil.
func (w *writtenTables) anyOf(tables []string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tables[""] {
		return true
	}
	for _, t := range tables {
		if w.tables[t] {
			return true
		}
	}
	return false
}

// bumpAll moves the versions of the tables written.
func (w *writtenTables) bumpAll(v *tableVersions) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for t := range w.tables {
		if t == "" {
			v.all.Add(1)
		} else {
			v.counter(t).Add(1)
		}
	}
}

// register hooks the counters into gorm's write callbacks.
func (v *tableVersions) register(db *gorm.DB) error {
	cb := db.Callback()
	if err := cb.Create().After("gorm:create").Register("workbench:table_version", v.bump); err != nil {
		return err
	}
	if err := cb.Update().After("gorm:update").Register("workbench:table_version", v.bump); err != nil {
		return err
	}
	if err := cb.Delete().After("gorm:delete").Register("workbench:table_version", v.bump); err != nil {
		return err
	}
	return cb.Raw().After("gorm:raw").Register("workbench:table_version", func(db *gorm.DB) {
		if w, ok := db.Get(writtenKey); ok {
			w.(*writtenTables).add("")
		}
		v.all.Add(1)
	})
}

// cacheTTL bounds how long a cached value may outlive a write made inside a
// transaction: the counter moves when the statement runs, before the
// commit, so a reader in between could cache what it read before the
// commit. InTx moves it again once it commits (writtenTables), so this
// bounds only a transaction made some other way.
const cacheTTL = 5 * time.Second

// cached is one read-mostly value kept until its tables change.
type cached[T any] struct {
	mu      sync.Mutex
	ok      bool
	version uint64
	at      time.Time
	val     T

	// shared, on a Store bound to a transaction or a snapshot, is the
	// shared Store's cache of the same value. It is read, never written,
	// while the transaction has written none of the value's tables
	// (written; nil for a snapshot, which writes nothing): the shared
	// value is then what the transaction would read itself. Without it a
	// month's usage (Billing.MonthUsage, a snapshot on every page with the
	// quota banner) and the launch transaction's quota check read the
	// whole price list from SQLite on every call (issue 15: a fifth of
	// /usage's CPU under load).
	shared  *cached[T]
	written *writtenTables
}

// get returns the cached value if the tables are unchanged since it was
// read, else loads it afresh. Loads are not serialised: two concurrent
// misses both read, which is cheaper than making readers wait on a lock
// held across a query.
func (c *cached[T]) get(v *tableVersions, tables []string, load func() (T, error)) (T, error) {
	ver := v.version(tables...)
	if c.shared != nil && !c.written.anyOf(tables) {
		if val, ok := c.shared.peek(ver); ok {
			return val, nil
		}
	}
	c.mu.Lock()
	if c.ok && c.version == ver && time.Since(c.at) < cacheTTL {
		val := c.val
		c.mu.Unlock()
		return val, nil
	}
	c.mu.Unlock()
	start := time.Now()
	val, err := load()
	if err != nil {
		return val, err
	}
	if v.version(tables...) == ver { // not written while we read
		c.mu.Lock()
		c.ok, c.version, c.at, c.val = true, ver, start, val
		c.mu.Unlock()
	}
	return val, nil
}

// peek returns the cached value if it is valid at version ver, without
// loading it.
func (c *cached[T]) peek(ver uint64) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && c.version == ver && time.Since(c.at) < cacheTTL {
		return c.val, true
	}
	var zero T
	return zero, false
}

// newCaches gives s empty caches of its own.
func (s *Store) newCaches() {
	s.schedules = &cached[map[string]pricing.Schedule]{}
	s.images = &cached[[]Image]{}
	s.flavors = &cached[[]Flavor]{}
	s.orphans = &cached[[]OrphanUnit]{}
}

// boundCaches gives s, a copy of parent bound to a transaction that
// records what it writes in written (nil: a read-only snapshot), caches of
// its own that fall back on parent's while the transaction has not
// written their tables. What is loaded inside the transaction stays in
// s's caches: it must not outlive a rollback in the shared ones.
func (s *Store) boundCaches(parent *Store, written *writtenTables) {
	s.newCaches()
	s.schedules.shared, s.schedules.written = parent.schedules, written
	s.images.shared, s.images.written = parent.images, written
	s.flavors.shared, s.flavors.written = parent.flavors, written
	s.orphans.shared, s.orphans.written = parent.orphans, written
}

// Cache keeps one value derived from tables, for callers outside the
// package (the orchestrator's telemetry attribution): Get reads it afresh
// only when one of tables was written since the last read, or cacheTTL
// has passed. The zero value is ready to use.
type Cache[T any] struct{ c cached[T] }

// Get returns the value read from tables, loading it with load when a
// table changed since the last load (or the value is older than a few
// seconds, which bounds a write made inside a transaction). The value is
// shared between callers: treat it as read-only.
func (c *Cache[T]) Get(s *Store, tables []string, load func() (T, error)) (T, error) {
	return c.c.get(s.versions, tables, load)
}

package models

import (
	"database/sql"
	"time"

	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// openPreparedReads is a second gorm handle on the same connection pool
// that keeps prepared statements. SQLite spends as long preparing the hot
// page queries (a join over a wide table) as running them: in a profile of
// the home page under load, sqlite3_prepare_v2 was a fifth of the CPU.
//
// It is for single read statements outside transactions only. Inside a
// transaction gorm would prepare on a second pooled connection, which can
// deadlock against transactions waiting in BEGIN IMMEDIATE (see Open); and
// a prepared Exec runs only the first of several statements.
func openPreparedReads(sqlDB *sql.DB) (*gorm.DB, error) {
	return gorm.Open(sqlite.Dialector{Conn: sqlDB}, &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true,
		PrepareStmt:            true,
		// Statements with IN (?, ?, …) differ by their number of
		// arguments; an LRU bound keeps the cache small.
		PrepareStmtMaxSize: 256,
		PrepareStmtTTL:     time.Hour,
		NowFunc:            func() time.Time { return time.Now().UTC() },
	})
}

-- +goose Up
-- An SSH key is pending until its holder proves they have the private key
-- by connecting once as verify-<verify_code> with it (the SSH server marks
-- it verified only after the signature is checked). A pending key opens
-- nothing and blocks no one: anyone may paste someone else's public key,
-- so the fingerprint is unique only among verified keys, and once per
-- account. Keys added before this existed count as verified (as of when
-- they were added): they have been opening workbenches all along.
--
-- SQLite cannot drop the old column's UNIQUE: the table is rebuilt, with
-- its ids and its id sequence (key ids are named in audit rows and checked
-- by open connections, so a deleted key's id is never given out again).
CREATE TABLE ssh_keys_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    public_key   TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME,
    verify_code  TEXT NOT NULL DEFAULT '', -- '' once verified
    verified_at  DATETIME                  -- NULL while pending
);
INSERT INTO ssh_keys_new (id, user_id, name, public_key, fingerprint, created_at, last_used_at, verify_code, verified_at)
SELECT id, user_id, name, public_key, fingerprint, created_at, last_used_at, '', created_at FROM ssh_keys;
DELETE FROM sqlite_sequence WHERE name = 'ssh_keys_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'ssh_keys_new', seq FROM sqlite_sequence WHERE name = 'ssh_keys';
DROP TABLE ssh_keys;
ALTER TABLE ssh_keys_new RENAME TO ssh_keys;
CREATE UNIQUE INDEX ssh_keys_user_name ON ssh_keys(user_id, name);
CREATE UNIQUE INDEX ssh_keys_user_fingerprint ON ssh_keys(user_id, fingerprint);
CREATE UNIQUE INDEX ssh_keys_verified_fingerprint ON ssh_keys(fingerprint) WHERE verified_at IS NOT NULL;
-- What a verify-<code> connection looks up, before it is signed.
CREATE INDEX ssh_keys_pending_fingerprint ON ssh_keys(fingerprint) WHERE verified_at IS NULL;

-- +goose Down
-- Pending keys go: the old table holds each fingerprint once.
CREATE TABLE ssh_keys_old (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    public_key   TEXT NOT NULL,
    fingerprint  TEXT NOT NULL UNIQUE,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME
);
INSERT INTO ssh_keys_old (id, user_id, name, public_key, fingerprint, created_at, last_used_at)
SELECT id, user_id, name, public_key, fingerprint, created_at, last_used_at FROM ssh_keys WHERE verified_at IS NOT NULL;
DELETE FROM sqlite_sequence WHERE name = 'ssh_keys_old';
INSERT INTO sqlite_sequence (name, seq) SELECT 'ssh_keys_old', seq FROM sqlite_sequence WHERE name = 'ssh_keys';
DROP TABLE ssh_keys;
ALTER TABLE ssh_keys_old RENAME TO ssh_keys;
CREATE UNIQUE INDEX ssh_keys_user_name ON ssh_keys(user_id, name);

-- +goose Up
-- Accounts, sessions, API tokens, the image catalog, flavors, GPU pool state
-- and the audit log: everything the foundation of the portal needs.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE COLLATE NOCASE,
    display_name  TEXT NOT NULL DEFAULT '',
    email         TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL DEFAULT 'user' CHECK (role IN ('admin', 'user')),
    password_hash TEXT NOT NULL,
    disabled      INTEGER NOT NULL DEFAULT 0,
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL
);

CREATE TABLE groups (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
    description TEXT NOT NULL DEFAULT '',
    created_at  DATETIME NOT NULL
);

CREATE TABLE group_members (
    group_id INTEGER NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
    user_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_user ON group_members(user_id);

-- Server-side sessions (alexedwards/scs store). expiry is a Unix time in seconds.
CREATE TABLE sessions (
    token  TEXT PRIMARY KEY,
    data   BLOB NOT NULL,
    expiry REAL NOT NULL
);
CREATE INDEX sessions_expiry ON sessions(expiry);

-- API tokens are 256-bit random secrets; only their SHA-256 is stored.
CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    expires_at   DATETIME,
    last_used_at DATETIME,
    revoked_at   DATETIME,
    created_at   DATETIME NOT NULL,
    UNIQUE (user_id, name)
);

CREATE TABLE images (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE COLLATE NOCASE,
    image         TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    tags          TEXT NOT NULL DEFAULT '',
    start_command TEXT NOT NULL,
    run_as_user   TEXT NOT NULL DEFAULT '1000',
    home_path     TEXT NOT NULL DEFAULT '/home/jovyan',
    enabled       INTEGER NOT NULL DEFAULT 1,
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL
);

CREATE TABLE flavors (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE COLLATE NOCASE,
    gpu_model  TEXT NOT NULL DEFAULT '',
    gpu_count  INTEGER NOT NULL DEFAULT 0 CHECK (gpu_count >= 0),
    cpu_cores  REAL NOT NULL CHECK (cpu_cores > 0),
    memory_gib INTEGER NOT NULL CHECK (memory_gib > 0),
    shm_mib    INTEGER NOT NULL DEFAULT 1024 CHECK (shm_mib >= 0),
    enabled    INTEGER NOT NULL DEFAULT 1,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

-- Admin decisions about physical GPUs, keyed by UUID so they survive re-indexing.
CREATE TABLE gpu_states (
    uuid       TEXT PRIMARY KEY,
    drained    INTEGER NOT NULL DEFAULT 0,
    note       TEXT NOT NULL DEFAULT '',
    updated_by TEXT NOT NULL DEFAULT '',
    updated_at DATETIME NOT NULL
);

CREATE TABLE audit_log (
    id     INTEGER PRIMARY KEY,
    at     DATETIME NOT NULL,
    actor  TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '',
    before TEXT NOT NULL DEFAULT '',
    after  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log(at);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE gpu_states;
DROP TABLE flavors;
DROP TABLE images;
DROP TABLE api_tokens;
DROP TABLE sessions;
DROP TABLE group_members;
DROP TABLE groups;
DROP TABLE users;
DROP TABLE settings;

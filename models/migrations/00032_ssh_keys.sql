-- +goose Up
-- SSH public keys users register to reach their workbenches through the
-- portal's SSH server. A deleted key is gone: that is its revocation.
CREATE TABLE ssh_keys (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    public_key   TEXT NOT NULL,
    fingerprint  TEXT NOT NULL UNIQUE,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME
);
CREATE UNIQUE INDEX ssh_keys_user_name ON ssh_keys(user_id, name);

-- +goose Down
DROP TABLE ssh_keys;

-- +goose Up
-- Tokens scoped to one workbench (JupyterHub's access:servers idea): a
-- Jupyter client (VS Code, jupyter console, curl) sends one to the proxy as
-- "Authorization: token …" or ?token= and reaches that workbench only.
-- Only the SHA-256 of the secret is kept.
CREATE TABLE workbench_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workbench_id TEXT NOT NULL REFERENCES workbenches(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    prefix       TEXT NOT NULL,
    expires_at   DATETIME,
    last_used_at DATETIME,
    revoked_at   DATETIME,
    created_at   DATETIME NOT NULL
);
CREATE UNIQUE INDEX workbench_tokens_name ON workbench_tokens(workbench_id, name);

-- +goose Down
DROP TABLE workbench_tokens;

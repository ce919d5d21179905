-- +goose Up
-- Revocation: bumping a user's auth_epoch ends every portal session made
-- before (each session remembers the epoch it was made in).
ALTER TABLE users ADD COLUMN auth_epoch INTEGER NOT NULL DEFAULT 0;

-- Notebook domain: one-time codes the portal hands out to open a workbench
-- on its own origin, and the sessions the notebook host makes from them.
-- Only SHA-256 hashes of the secrets are stored. portal_session_hash ties
-- both to the portal session they came from, so logging out ends them.
CREATE TABLE notebook_codes (
    code_hash           TEXT PRIMARY KEY,
    user_id             INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workbench_id        TEXT NOT NULL,
    portal_session_hash TEXT NOT NULL,
    expires_at          DATETIME NOT NULL
);
CREATE TABLE notebook_sessions (
    token_hash          TEXT PRIMARY KEY,
    user_id             INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    workbench_id        TEXT NOT NULL,
    portal_session_hash TEXT NOT NULL,
    expires_at          DATETIME NOT NULL,
    created_at          DATETIME NOT NULL
);
CREATE INDEX notebook_sessions_user ON notebook_sessions(user_id);
CREATE INDEX notebook_sessions_portal ON notebook_sessions(portal_session_hash);

-- +goose Down
DROP TABLE notebook_sessions;
DROP TABLE notebook_codes;
ALTER TABLE users DROP COLUMN auth_epoch;

-- +goose Up
-- Browsers trusted past their address's login delay (handlers'
-- throttle_device.go; OWASP's device cookies): kept here, not in the
-- portal's memory, so an upgrade or a restart does not hold a known
-- browser back behind its lab's NAT address. Only the SHA-256 of the
-- cookie's token is stored, as for API and session tokens.
CREATE TABLE login_devices (
    token_hash TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expires_at DATETIME NOT NULL
);
CREATE INDEX idx_login_devices_user ON login_devices (user_id);
CREATE INDEX idx_login_devices_expires ON login_devices (expires_at);

-- Failed SSH key verification attempts (verify-<code>@portal) by client
-- address (web/sshgate/verify_limit.go): kept here so that a restart does
-- not give a guesser a fresh set of tries. One row per failed attempt;
-- rows older than the window are swept.
CREATE TABLE ssh_verify_failures (
    id   INTEGER PRIMARY KEY,
    addr TEXT NOT NULL,
    at   DATETIME NOT NULL
);
CREATE INDEX idx_ssh_verify_failures_addr_at ON ssh_verify_failures (addr, at);
CREATE INDEX idx_ssh_verify_failures_at ON ssh_verify_failures (at);

-- +goose Down
DROP TABLE ssh_verify_failures;
DROP TABLE login_devices;

-- +goose Up
-- How an audited action reached the portal when it was not a signed-in
-- browser session: the API token it came with ("token #12 ci-bot"). A key
-- or a price changed by a script named only the token's owner, so a leaked
-- token's doings could not be told from the owner's own. Empty for
-- sessions, the CLI and the portal's own work.
ALTER TABLE audit_log ADD COLUMN via TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE audit_log DROP COLUMN via;

-- +goose Up
-- A notebook code is bound to the browser that asked for it: the notebook
-- host sets a random state cookie on its own origin before the portal mints
-- the code, and the code opens only with that cookie. Without it, a user
-- could mint a code for their own workbench and send the link to someone
-- else, whose browser would sign into the sender's notebook (login CSRF).
-- Codes live a minute; any made before this column are refused.
ALTER TABLE notebook_codes ADD COLUMN browser_state_hash TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE notebook_codes DROP COLUMN browser_state_hash;

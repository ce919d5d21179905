-- +goose Up
-- Corrections (SPEC §6 rule 13) are ledger lines an admin appends: a credit
-- or the reversal of specific lines, each with a reason. created_by names
-- who appended a line ('' for the biller).
ALTER TABLE ledger_entries ADD COLUMN created_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE ledger_entries DROP COLUMN created_by;

-- +goose Up
-- GET /api/v1/usage/lines pages a month's ledger lines by id (keyset: the
-- page after line N starts above it). The month is substr(period_start, 1,
-- 7), as the ledger_monthly rollup files a line, so the lines add up to the
-- month's total exactly. With the month inside the index, a page is one
-- range in id order: one user's (ledger_user_month) or everyone's
-- (ledger_month, an admin's); ledger_user_period would give the month's
-- lines by time and each page would sort them all by id first. (An index
-- ends with the rowid, which is id: no need to name it.)
CREATE INDEX ledger_user_month ON ledger_entries(user_id, substr(period_start, 1, 7));
CREATE INDEX ledger_month ON ledger_entries(substr(period_start, 1, 7));

-- +goose Down
DROP INDEX ledger_month;
DROP INDEX ledger_user_month;

-- +goose Up
-- /usage sums one user's month from the rollup; its key starts with the
-- month, so without this index the sum walks every user's rows of that month.
CREATE INDEX ledger_monthly_user_month ON ledger_monthly (user_id, month);

-- +goose Down
DROP INDEX ledger_monthly_user_month;

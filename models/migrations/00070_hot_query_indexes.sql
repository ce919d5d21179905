-- +goose Up
-- Indexes for the queries every page view makes, scoped to the caller
-- (issue 15; models/query_plan_test.go checks they are used).

-- A user's workbenches, newest first (home page, GET /api/v1/workbenches).
CREATE INDEX workbenches_owner_created ON workbenches(owner_id, created_at) WHERE deleted_at IS NULL;

-- The unbilled (open or unsettled) intervals of one user or of the
-- workbenches listed: live cost and budgets.
CREATE INDEX usage_intervals_unsettled_user ON usage_intervals(user_id) WHERE ended_at IS NULL OR settled = 0;
CREATE INDEX usage_intervals_unsettled_wb ON usage_intervals(workbench_id) WHERE ended_at IS NULL OR settled = 0;

-- The unbilled storage of one user (their month's usage on every page).
CREATE INDEX storage_intervals_unsettled_user ON storage_intervals(user_id) WHERE ended_at IS NULL OR settled = 0;

-- What the ledger already charged each listed workbench (covering).
CREATE INDEX ledger_workbench_amount ON ledger_entries(workbench_id, amount_micros);

-- +goose Down
DROP INDEX ledger_workbench_amount;
DROP INDEX storage_intervals_unsettled_user;
DROP INDEX usage_intervals_unsettled_wb;
DROP INDEX usage_intervals_unsettled_user;
DROP INDEX workbenches_owner_created;

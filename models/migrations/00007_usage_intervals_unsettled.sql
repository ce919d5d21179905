-- +goose Up
-- IntervalsToBill (ended_at IS NULL OR settled = 0) runs on every launch's
-- quota check, every live-cost view and every billing round; without this
-- it scans all intervals ever recorded. The partial index holds only the
-- open and unsettled ones, a handful, however long the history: with a year
-- of history (50,000 runs) the quota check's cost per launch went from
-- 8.8 ms to 1.1 ms (web BenchmarkLaunchQuotaCheck).
CREATE INDEX usage_intervals_unsettled ON usage_intervals(id) WHERE ended_at IS NULL OR settled = 0;

-- +goose Down
DROP INDEX usage_intervals_unsettled;

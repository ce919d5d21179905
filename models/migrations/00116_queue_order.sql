-- +goose Up
-- An administrator's reorder (issue 12 §6, "queue view with reorder"): a
-- queued workbench moved to a position gets, with the others of its
-- priority class waiting for the same units, an explicit order (1, 2, …)
-- that the scheduler follows within the class, after boosts. Like a boost,
-- it counts only for the wait it was set in (ignored once queue_ordered_at
-- is older than queued_at).
ALTER TABLE workbenches ADD COLUMN queue_order INTEGER;
ALTER TABLE workbenches ADD COLUMN queue_ordered_at DATETIME;

-- +goose Down
ALTER TABLE workbenches DROP COLUMN queue_ordered_at;
ALTER TABLE workbenches DROP COLUMN queue_order;

-- +goose Up
-- An administrator's boost (issue 12 §6): a queued workbench boosted at
-- this time goes ahead of the unboosted ones of its priority class (the
-- latest boost first). It counts only for the wait it was given in: a
-- boost older than queued_at (a later re-queue) is ignored.
ALTER TABLE workbenches ADD COLUMN queue_boosted_at DATETIME;

-- +goose Down
ALTER TABLE workbenches DROP COLUMN queue_boosted_at;

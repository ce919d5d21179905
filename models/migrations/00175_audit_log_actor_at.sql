-- +goose Up
-- The audit page reads newest first by when the action happened, then
-- by id (a row kept in memory while the database could not be written is
-- written later with its own, earlier time). audit_log_at (at, then the
-- rowid, the id) already reads the whole log in that order; the page
-- filtered by actor walked it all to find one actor's rows. This reads
-- one actor's rows in order, and counts them from the index alone.
CREATE INDEX audit_log_actor_at ON audit_log(actor, at);

-- +goose Down
DROP INDEX audit_log_actor_at;

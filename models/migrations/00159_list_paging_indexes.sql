-- +goose Up
-- GET /api/v1/workbenches pages by keyset (newest first, ties by id: the
-- page after (created_at, id) starts below it), so each page is a range of
-- an index in that order and costs the same at any depth: one owner's
-- (workbenches_owner_created gains id) and an admin's list of everyone's.
DROP INDEX workbenches_owner_created;
CREATE INDEX workbenches_owner_created ON workbenches(owner_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX workbenches_created ON workbenches(created_at, id) WHERE deleted_at IS NULL;

-- +goose Down
DROP INDEX workbenches_created;
DROP INDEX workbenches_owner_created;
CREATE INDEX workbenches_owner_created ON workbenches(owner_id, created_at) WHERE deleted_at IS NULL;

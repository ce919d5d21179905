-- +goose Up
-- A deleted group's row is removed (its name is free for a new group), but
-- its ledger lines keep its id (migration 149): the billing pages read its
-- name from here and call it deleted, "ml101 (deleted group 7)", rather
-- than mix its lines with a new group that took the name. Its id is never
-- given to a new group (CreateGroup): a group's ids were reused, and the
-- lines of a deleted newest group went to the next group created.
CREATE TABLE deleted_groups (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    deleted_at DATETIME -- NULL: deleted before this table
);

-- Groups deleted before: the name their newest line or energy row gave
-- them (the ledger stays as it is).
INSERT INTO deleted_groups (id, name)
SELECT t.group_id, COALESCE(
    (SELECT l.group_name FROM ledger_entries l WHERE l.group_id = t.group_id ORDER BY l.id DESC LIMIT 1),
    (SELECT e.group_name FROM interval_energy e WHERE e.group_id = t.group_id ORDER BY e.hour DESC LIMIT 1))
FROM (SELECT group_id FROM ledger_entries UNION SELECT group_id FROM interval_energy) t
WHERE t.group_id IS NOT NULL AND t.group_id NOT IN (SELECT id FROM groups);

-- +goose Down
DROP TABLE deleted_groups;

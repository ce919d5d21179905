-- +goose Up
-- Who was in which group when (session 55): usage is billed to the group
-- its owner was in while it ran, not to the group they are in when the
-- bill is written. A line written after a move went to the new group, and
-- the hour in progress when a group was deleted (home storage since its
-- last bill too) went to no group. One row per stretch of membership:
-- from_at NULL is a member since before this table, until_at NULL a
-- member still. group_members stays the membership now; the store writes
-- both in one transaction (joinGroup, leaveGroup). No foreign keys: a
-- deleted group's or user's stretches are kept, as their lines are.
CREATE TABLE group_memberships (
    id       INTEGER PRIMARY KEY,
    user_id  INTEGER NOT NULL,
    group_id INTEGER NOT NULL,
    from_at  DATETIME,
    until_at DATETIME
);
CREATE INDEX group_memberships_user ON group_memberships (user_id);
CREATE INDEX group_memberships_group ON group_memberships (group_id);
-- One open stretch per membership.
CREATE UNIQUE INDEX group_memberships_open ON group_memberships (user_id, group_id) WHERE until_at IS NULL;

INSERT INTO group_memberships (user_id, group_id, from_at, until_at)
SELECT user_id, group_id, NULL, NULL FROM group_members;

-- +goose Down
DROP TABLE group_memberships;

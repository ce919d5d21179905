-- +goose Up
-- A group's leads (team leads, finance contacts) read the group's monthly
-- statement without being admins. A lead is a member first.
ALTER TABLE group_members ADD COLUMN lead INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE group_members DROP COLUMN lead;

-- +goose Up
-- A deleted account's row keeps the name it had (deleted-<id> is its
-- username now, and the old name is free for a new account), so that the
-- administrator's billing still says whose the money was: an instructor
-- who removed a class's students at the end of term read deleted-3,
-- deleted-11 … on the term's bills. Accounts deleted before this read it
-- back from their user.delete audit row (its after.username is the
-- tombstone's name, its target the old name).
ALTER TABLE users ADD COLUMN former_username TEXT NOT NULL DEFAULT '';
UPDATE users SET former_username = COALESCE((
    SELECT a.target FROM audit_log a
    WHERE a.action = 'user.delete' AND json_valid(a.after) AND json_extract(a.after, '$.username') = users.username
    ORDER BY a.id DESC LIMIT 1), '')
WHERE deleted_at IS NOT NULL;

-- +goose Down
ALTER TABLE users DROP COLUMN former_username;

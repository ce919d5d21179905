-- +goose Up
-- Every page's top bar counts the caller's unread notifications: this
-- index holds only unread rows, so the count reads those and no more.
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;

-- +goose Down
DROP INDEX notifications_unread;

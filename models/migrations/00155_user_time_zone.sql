-- +goose Up
-- The time zone a user reads times in beside UTC ("Asia/Shanghai"); empty
-- reads UTC only. Times are still stored, typed and exported in UTC.
ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE users DROP COLUMN time_zone;

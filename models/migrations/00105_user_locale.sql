-- +goose Up
-- The language a user chose with the header's switch (issue 14 §3): a
-- BCP 47 tag the portal speaks ("en", "zh-CN"), or '' for "follow the
-- browser's Accept-Language".
ALTER TABLE users ADD COLUMN locale TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE users DROP COLUMN locale;

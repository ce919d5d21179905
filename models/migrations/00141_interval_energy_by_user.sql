-- +goose Up
-- A user's energy on /usage is read by user and month. interval_energy_hour
-- is (hour, user_id), so that read walked every user's rows of the month;
-- this index reaches the caller's rows only (models/query_plan_pages_test.go).
CREATE INDEX interval_energy_user_hour ON interval_energy(user_id, hour);

-- +goose Down
DROP INDEX interval_energy_user_hour;

-- +goose Up
-- A flavor's CPU share as integer thousandths of a core: a REAL of 2.01
-- read back as 2.0099999 became 2009 m on the invoice while the calculator
-- said 2010. Rounded to the nearest milli-core, which is what was meant.
ALTER TABLE flavors ADD COLUMN cpu_milli INTEGER NOT NULL DEFAULT 0;
UPDATE flavors SET cpu_milli = CAST(ROUND(cpu_cores * 1000) AS INTEGER);
ALTER TABLE flavors DROP COLUMN cpu_cores;

-- +goose Down
ALTER TABLE flavors ADD COLUMN cpu_cores REAL NOT NULL DEFAULT 1;
UPDATE flavors SET cpu_cores = cpu_milli / 1000.0;
ALTER TABLE flavors DROP COLUMN cpu_milli;

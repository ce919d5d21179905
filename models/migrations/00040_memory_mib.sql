-- +goose Up
-- Memory as integer MiB, like CPU as milli-cores (00023): a flavor of
-- 1.5 GiB could not be written, and memory is priced per GiB-hour exactly
-- from MiB (rate × MiB × s / (1024 × 3600)). Existing whole GiB × 1024.
-- usage_intervals carries no triggers (only ledger_entries is append-only),
-- so its column is converted the same way; ledger lines keep their
-- quantity_milli and amounts untouched.
ALTER TABLE flavors ADD COLUMN memory_mib INTEGER NOT NULL DEFAULT 0;
UPDATE flavors SET memory_mib = memory_gib * 1024;
ALTER TABLE flavors DROP COLUMN memory_gib;
ALTER TABLE usage_intervals ADD COLUMN memory_mib INTEGER NOT NULL DEFAULT 0;
UPDATE usage_intervals SET memory_mib = memory_gib * 1024;
ALTER TABLE usage_intervals DROP COLUMN memory_gib;

-- +goose Down
ALTER TABLE flavors ADD COLUMN memory_gib INTEGER NOT NULL DEFAULT 1;
UPDATE flavors SET memory_gib = MAX(1, (memory_mib + 1023) / 1024);
ALTER TABLE flavors DROP COLUMN memory_mib;
ALTER TABLE usage_intervals ADD COLUMN memory_gib INTEGER NOT NULL DEFAULT 0;
UPDATE usage_intervals SET memory_gib = (memory_mib + 1023) / 1024;
ALTER TABLE usage_intervals DROP COLUMN memory_mib;

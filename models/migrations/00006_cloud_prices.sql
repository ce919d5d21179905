-- +goose Up
-- The calculator's cloud price catalog (SPEC §7): researched cloud GPU
-- prices, each with the date it was seen and its source, editable by admins.
-- Seeded once from the CSV shipped in the binary (models/seeddata).
CREATE TABLE cloud_prices (
    id             INTEGER PRIMARY KEY,
    provider       TEXT NOT NULL,
    offer          TEXT NOT NULL,
    gpu_model      TEXT NOT NULL,
    gpus_in_offer  INTEGER NOT NULL DEFAULT 1 CHECK (gpus_in_offer >= 1),
    tier           TEXT NOT NULL,
    currency       TEXT NOT NULL,
    price_micros   INTEGER NOT NULL CHECK (price_micros > 0), -- per GPU-hour
    as_of          TEXT NOT NULL DEFAULT '',                 -- as the source gave it: 2026-09-10, 2026-07, 2023-Q3 or blank
    source         TEXT NOT NULL,
    note           TEXT NOT NULL DEFAULT '',
    created_at     DATETIME NOT NULL,
    updated_at     DATETIME NOT NULL
);
CREATE UNIQUE INDEX cloud_prices_unique ON cloud_prices(provider, offer, gpu_model, tier, currency);

-- +goose Down
DROP TABLE cloud_prices;

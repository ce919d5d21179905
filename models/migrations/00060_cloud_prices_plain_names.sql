-- +goose Up
-- The first seed named the Chinese market rows after internal research
-- files ("Provider B in seed 000", source "seed 000"). Installs seeded then
-- get the plain descriptions the shipped catalog now uses. Rows an admin
-- renamed are left alone (they no longer match).
UPDATE OR IGNORE cloud_prices SET provider = 'Chinese cloud market (2023 Q3 survey, provider unnamed)',
    source = 'market article on Chinese GPU clouds (2023 Q3 figures)'
  WHERE provider = 'Provider in seed 000 (unnamed)' AND source = 'seed 000';
UPDATE OR IGNORE cloud_prices SET provider = 'Chinese cloud market (2023 Q3 survey, spot-focused provider)',
    source = 'market article on Chinese GPU clouds (2023 Q3 figures)'
  WHERE provider = 'Provider B in seed 000' AND source = 'seed 000';
UPDATE OR IGNORE cloud_prices SET provider = 'Chinese cloud market (2023 Q3 survey, DGX rental provider)',
    source = 'market article on Chinese GPU clouds (2023 Q3 figures)'
  WHERE provider = 'Provider A in seed 000' AND source = 'seed 000';
UPDATE OR IGNORE cloud_prices SET provider = 'Chinese cloud market (per-second billing provider, unnamed)',
    source = 'market article on Chinese GPU clouds (undated)'
  WHERE provider = 'Provider in seed 002 (unnamed)' AND source = 'seed 002';
-- Rows that still carry a file name in their source (edited by an admin
-- but not renamed) at least lose the file name.
UPDATE cloud_prices SET source = 'market article on Chinese GPU clouds'
  WHERE source IN ('seed 000', 'seed 001', 'seed 002');

-- +goose Down
SELECT 1;

-- +goose Up
-- Accounts made by single sign-on (OIDC) are linked to the provider's
-- stable subject, not to the username claim, which a directory may reuse
-- or let users edit. A local account has both empty.
ALTER TABLE users ADD COLUMN oidc_issuer TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN oidc_subject TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX users_oidc_identity ON users(oidc_issuer, oidc_subject) WHERE oidc_subject <> '';

-- +goose Down
DROP INDEX users_oidc_identity;
ALTER TABLE users DROP COLUMN oidc_subject;
ALTER TABLE users DROP COLUMN oidc_issuer;

package models

// What the database holds of each secret, and why (issue 9, "secrets at rest"):
//
//   - passwords: argon2id hashes (password.go);
//   - API tokens: SHA-256 of the secret (token.go); the secret is shown once;
//   - session ids: SHA-256 of the id (session_store.go, storedSessionID);
//   - Jupyter tokens (Workbench.Token): in clear, on purpose. The proxy sends
//     the token upstream with every request it forwards to a workbench, so
//     the portal needs it back; a hash would not do. It opens only that one
//     container's Jupyter, which listens on the portal's private network.
//
// The database file is 0600 in a 0700 data directory (private_dir.go), and
// `workbench backup` writes its copy 0600 (Store.Backup).

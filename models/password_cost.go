package models

// PasswordCheckMemory is the memory, in bytes, one password hash or check
// takes with the configured argon2id parameters. The login handler sizes its
// bound on concurrent checks from it, so raising the parameters lowers the
// number of checks that may run at once instead of raising peak memory.
func PasswordCheckMemory() int64 { return int64(argonMemory) * 1024 }

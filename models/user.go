package models

import (
	"context"
	"errors"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Roles.
const (
	RoleAdmin = "admin"
	RoleUser  = "user"
)

// User is a portal account.
type User struct {
	ID           int64  `gorm:"primaryKey" json:"id"`
	Username     string `json:"username"`
	DisplayName  string `json:"display_name"`
	Email        string `json:"email"`
	Role         string `json:"role"`
	PasswordHash string `json:"-"`
	Disabled     bool   `json:"disabled"`
	// AuthEpoch goes up when every session of the user must end (password
	// reset, disable); a session made in an older epoch is refused.
	AuthEpoch int64 `json:"-"`
	// OIDCIssuer and OIDCSubject link an account made by single sign-on
	// to its identity at the provider; both empty for a local account.
	OIDCIssuer  string `gorm:"column:oidc_issuer" json:"-"`
	OIDCSubject string `gorm:"column:oidc_subject" json:"-"`
	// Locale is the language the user chose in the header ("en",
	// "zh-CN"); empty follows the browser's Accept-Language.
	Locale string `json:"-"`
	// TimeZone is the IANA zone the user reads times in beside UTC
	// ("Asia/Shanghai"); empty reads UTC only (user_time_zone.go).
	TimeZone string `json:"time_zone"`
	// EmailWorkbenchNotices is whether what happens to the user's own
	// workbenches is also emailed (where the portal sends email); the
	// in-app notification is always written.
	EmailWorkbenchNotices bool `gorm:"default:true" json:"email_workbench_notices"`
	// HomeKey is the name the user's home volume and container labels
	// carry: the username when the account was made, kept through a rename
	// (the engine cannot rename a volume). Read it through HomeName.
	HomeKey string `json:"-"`
	// DeletedAt is set once an administrator deleted the account: the row
	// stays as a tombstone named deleted-<id> (user_delete.go).
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
	// FormerUsername is the name a deleted account had (its username is
	// then its tombstone's, deleted-<id>): the administrator's billing
	// names whose the money was by it (UserKeySQL). Empty for a live one.
	FormerUsername string `gorm:"column:former_username" json:"-"`
	// ErasedAt is when a deleted account's workbenches and home volume
	// were gone too; nil while that is still to do.
	ErasedAt  *time.Time `json:"-"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// HomeName is the name u's home volume and container labels carry: its
// home key, or the username for a row made without one.
func (u *User) HomeName() string {
	if u.HomeKey != "" {
		return u.HomeKey
	}
	return u.Username
}

// Deleted reports whether u is a deleted account's tombstone.
func (u *User) Deleted() bool { return u != nil && u.DeletedAt != nil }

// SSO reports whether u signs in through the OIDC provider (and has no
// password of its own).
func (u *User) SSO() bool { return u != nil && u.OIDCSubject != "" }

// IsAdmin reports whether u has the admin role.
func (u *User) IsAdmin() bool { return u != nil && u.Role == RoleAdmin }

// Name is what the UI shows for u.
func (u *User) Name() string {
	if u.DisplayName != "" {
		return u.DisplayName
	}
	return u.Username
}

// NewUser is the input for CreateUser.
type NewUser struct {
	Username    string
	DisplayName string
	Email       string
	Role        string
	Password    string
	// hash is the password's hash when HashNewUser made it ahead of the
	// transaction that stores the user.
	hash string
}

var usernameRe = regexp.MustCompile(`^[a-z][a-z0-9_.-]{1,31}$`)

// ValidUsername reports whether name is an acceptable username: it becomes
// part of Docker labels and volume names, so it is kept to a safe alphabet.
func ValidUsername(name string) error {
	if name == "" { // not a wrong character: none at all
		return invalid("username", "is required")
	}
	if !usernameRe.MatchString(name) {
		return invalid("username", "use 2–32 lowercase letters, digits, '.', '_' or '-', starting with a letter")
	}
	if strings.HasPrefix(name, TombstonePrefix) {
		return invalid("username", "names starting with deleted- are kept for deleted accounts")
	}
	return nil
}

func (n *NewUser) validate() error {
	n.Username = strings.TrimSpace(n.Username)
	if err := ValidUsername(n.Username); err != nil {
		return err
	}
	if n.Role == "" {
		n.Role = RoleUser
	}
	if n.Role != RoleAdmin && n.Role != RoleUser {
		return invalid("role", "must be admin or user")
	}
	n.Email = strings.TrimSpace(n.Email)
	if len(n.Email) > 254 { // RFC 5321's limit on a path
		return invalid("email", "is too long (at most 254 characters)")
	}
	if n.Email != "" {
		if _, err := mail.ParseAddress(n.Email); err != nil {
			return invalid("email", "is not a valid address")
		}
	}
	if len(n.DisplayName) > 100 {
		return invalid("display_name", "is too long")
	}
	return validatePassword(n.Password)
}

// HashNewUser validates n and hashes its password, for a CreateUser inside
// a write transaction: the hash takes tens of milliseconds, and made
// inside the transaction it held the database's write lock all along, so
// parallel user creations queued on it until one gave up ("database is
// locked" after the busy timeout).
func (s *Store) HashNewUser(ctx context.Context, n NewUser) (NewUser, error) {
	if err := n.validate(); err != nil {
		return n, err
	}
	hash, err := s.hashPassword(ctx, n.Password)
	n.hash = hash
	return n, err
}

// CreateUser validates and stores a new user with a hashed password (the
// one HashNewUser made, else hashed here).
func (s *Store) CreateUser(ctx context.Context, n NewUser) (*User, error) {
	if err := n.validate(); err != nil {
		return nil, err
	}
	hash := n.hash
	if hash == "" {
		var err error
		if hash, err = s.hashPassword(ctx, n.Password); err != nil {
			return nil, err
		}
	}
	u := &User{Username: n.Username, DisplayName: strings.TrimSpace(n.DisplayName), Email: n.Email, Role: n.Role, PasswordHash: hash, EmailWorkbenchNotices: true}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if u.HomeKey, err = newHomeKey(tx, u.Username); err != nil {
			return err
		}
		return tx.Create(u).Error
	})
	if err != nil {
		if uniqueViolation(err) {
			return nil, taken("username", "is already taken")
		}
		return nil, err
	}
	return u, nil
}

// UserByID returns the user with id.
func (s *Store) UserByID(ctx context.Context, id int64) (*User, error) {
	var u User
	err := s.rdb.WithContext(ctx).First(&u, id).Error
	return &u, notFound(err)
}

// UserByUsername returns the user named username (case-insensitive).
func (s *Store) UserByUsername(ctx context.Context, username string) (*User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("username = ?", username).First(&u).Error
	return &u, notFound(err)
}

// ListUsers returns all users, by username.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	var us []User
	err := s.db.WithContext(ctx).Order("username").Find(&us).Error
	return us, err
}

// CountUsers returns how many users exist.
func (s *Store) CountUsers(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&User{}).Count(&n).Error
	return n, err
}

// ErrBadCredentials is the one error a failed login gets, whether the user
// is unknown or the password wrong: nothing to enumerate. Only the right
// password of a disabled account gets ErrAccountDisabled: its holder is
// told why, and the attempt is no failed guess.
var ErrBadCredentials = errors.New("invalid username or password")

// Authenticate checks a username and password. The check waits for room in
// the hash gate, up to DefaultHashWait, then is refused with ErrHashBusy;
// it returns ctx's error when the caller leaves while waiting. A hash made with older
// parameters is replaced, after a successful check, by one made with the
// current parameters (the password is only known at login).
func (s *Store) Authenticate(ctx context.Context, username, password string) (*User, error) {
	u, err := s.UserByUsername(ctx, strings.TrimSpace(username))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	hash := dummyHash() // equal timing for unknown users and SSO accounts
	if err == nil && u.PasswordHash != "" {
		hash = u.PasswordHash
	}
	weight := max(hashMemory(hash), PasswordCheckMemory()) // room to rehash too
	if err := s.hashes.acquireWithin(ctx, weight); err != nil {
		return nil, err
	}
	defer s.hashes.release(weight)
	ok, checkErr := CheckPassword(hash, password)
	if u == nil {
		return nil, ErrBadCredentials
	}
	if checkErr != nil {
		return nil, checkErr
	}
	if u.PasswordHash == "" { // a single-sign-on account has no password
		return nil, ErrBadCredentials
	}
	if !ok {
		return nil, ErrBadCredentials
	}
	if u.Disabled {
		return nil, ErrAccountDisabled
	}
	if NeedsRehash(u.PasswordHash) {
		s.upgradeHash(ctx, u, password)
	}
	return u, nil
}

// upgradeHash rewrites u's password hash with the current parameters. Only
// if it is still the hash just checked: a password changed meanwhile wins.
// A failure is logged and the login goes on (the old hash still works).
func (s *Store) upgradeHash(ctx context.Context, u *User, password string) {
	fresh, err := HashPassword(password)
	if err == nil {
		err = s.db.WithContext(ctx).Model(&User{}).Where("id = ? AND password_hash = ?", u.ID, u.PasswordHash).
			Updates(map[string]any{"password_hash": fresh, "updated_at": s.now()}).Error
	}
	if err != nil {
		s.log.Warn("password hash not upgraded", "user", u.Username, "err", err)
		return
	}
	u.PasswordHash = fresh
}

// SetPassword replaces a user's password.
func (s *Store) SetPassword(ctx context.Context, userID int64, password string) error {
	if err := validatePassword(password); err != nil {
		return err
	}
	hash, err := s.hashPassword(ctx, password)
	if err != nil {
		return err
	}
	return s.updateUser(ctx, userID, map[string]any{"password_hash": hash})
}

// SetUserRole makes a user an admin or an ordinary user.
func (s *Store) SetUserRole(ctx context.Context, userID int64, role string) error {
	if role != RoleAdmin && role != RoleUser {
		return invalid("role", "must be admin or user")
	}
	return s.updateUser(ctx, userID, map[string]any{"role": role})
}

// SetUserDisabled disables or enables an account. Disabling also ends the
// user's API tokens' validity (checked at use) and sessions (checked at load).
func (s *Store) SetUserDisabled(ctx context.Context, userID int64, disabled bool) error {
	return s.updateUser(ctx, userID, map[string]any{"disabled": disabled})
}

// SetUserLocale saves the language a user chose; "" forgets the choice.
// The caller passes a tag the portal speaks (the handler checks it).
func (s *Store) SetUserLocale(ctx context.Context, userID int64, locale string) error {
	return s.updateUser(ctx, userID, map[string]any{"locale": locale})
}

// SetEmailWorkbenchNotices turns the email of the user's workbench notices
// on or off.
func (s *Store) SetEmailWorkbenchNotices(ctx context.Context, userID int64, on bool) error {
	return s.updateUser(ctx, userID, map[string]any{"email_workbench_notices": on})
}

// updateUser changes columns of a live account: a deleted account's
// tombstone is not found (it must never get a password, a role or its
// access back).
func (s *Store) updateUser(ctx context.Context, userID int64, fields map[string]any) error {
	fields["updated_at"] = s.now()
	res := s.db.WithContext(ctx).Model(&User{}).Where("id = ? AND deleted_at IS NULL", userID).Updates(fields)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// EnsureAdmin creates the bootstrap admin on an empty database. It returns the
// password when it generated one (to be printed once), "" otherwise.
func (s *Store) EnsureAdmin(ctx context.Context, password string) (created bool, generated string, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&User{}).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if password == "" {
			generated = randomString(15)
			password = generated
		}
		if err := validatePassword(password); err != nil {
			return err
		}
		hash, err := HashPassword(password)
		if err != nil {
			return err
		}
		created = true
		return tx.Create(&User{Username: "admin", HomeKey: "admin", DisplayName: SeededAdminName, Role: RoleAdmin, PasswordHash: hash, EmailWorkbenchNotices: true}).Error
	})
	return created, generated, err
}

// UserPage is one page of users by username, optionally only those whose
// username, display name or email contains search (case-insensitive), and
// how many match in all: the admin users page (withDeleted: deleted
// accounts' tombstones too) and the quota console (without).
func (s *Store) UserPage(ctx context.Context, search string, withDeleted bool, offset, limit int) ([]User, int64, error) {
	q := s.db.WithContext(ctx).Model(&User{})
	if !withDeleted {
		q = q.Where("deleted_at IS NULL")
	}
	if search = strings.TrimSpace(search); search != "" {
		like := "%" + likeEscape(search) + "%"
		q = q.Where(`(username LIKE ? ESCAPE '\' OR display_name LIKE ? ESCAPE '\' OR email LIKE ? ESCAPE '\')`, like, like, like)
	}
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	var out []User
	err := q.Order("username").Offset(offset).Limit(limit).Find(&out).Error
	return out, total, err
}

// likeEscape makes s match itself in a LIKE pattern with ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s)
}

package quire

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"time"
)

// Token prefixes, as SPEC.md gives them.
const (
	SessionPrefix = "sess_"
	APIKeyPrefix  = "ak_"
)

// Session is a login session. Only the hash of its secret is stored.
type Session struct {
	ID         string    `json:"id"`
	UserID     string    `json:"user_id"`
	SecretHash string    `json:"secret_hash,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	UserAgent  string    `json:"user_agent,omitempty"`
	RemoteAddr string    `json:"remote_addr,omitempty"`
}

// SessionStore keeps login sessions (in Redis).
type SessionStore interface {
	CreateSession(ctx context.Context, s *Session) error
	Session(ctx context.Context, id string) (*Session, error)
	Sessions(ctx context.Context, userID string) ([]*Session, error)
	DeleteSession(ctx context.Context, id string) error
}

// Scope is what an API key may do. Scopes are ordered: each includes the
// ones before it.
type Scope string

const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
	ScopeAdmin Scope = "admin"
)

// Level returns the access level a scope grants, or AccessNone.
func (s Scope) Level() Access {
	switch s {
	case ScopeRead:
		return AccessRead
	case ScopeWrite:
		return AccessWrite
	case ScopeAdmin:
		return AccessAdmin
	}
	return AccessNone
}

// APIKey is a programmatic credential. Only the hash of its secret is stored.
type APIKey struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	Scope      Scope      `json:"scope"`
	ProjectIDs []string   `json:"project_ids"`
	SecretHash string     `json:"secret_hash,omitempty"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
}

// Access is an ordered access level.
type Access int

const (
	AccessNone Access = iota
	AccessRead
	AccessWrite
	AccessAdmin
)

// ProjectRole is a user's role within a project.
type ProjectRole string

const (
	ProjectViewer ProjectRole = "viewer"
	ProjectEditor ProjectRole = "editor"
	ProjectOwner  ProjectRole = "owner"
)

// Level returns the access level the role grants.
func (r ProjectRole) Level() Access {
	switch r {
	case ProjectViewer:
		return AccessRead
	case ProjectEditor:
		return AccessWrite
	case ProjectOwner:
		return AccessAdmin
	}
	return AccessNone
}

// Valid reports whether r is a known role.
func (r ProjectRole) Valid() bool { return r.Level() != AccessNone }

// Principal is the caller of a request: a session, an API key, or
// nobody (Anonymous).
type Principal struct {
	User      *User
	Key       *APIKey // nil for a session
	SessionID string  // "" for a key
	anonymous bool
}

// Anonymous returns the principal of a request without a credential. It
// may read the published versions of public projects and nothing else;
// its User is a placeholder with no id and no role, so code that reads
// p.User never meets nil.
func Anonymous() *Principal {
	return &Principal{User: &User{Name: "anonymous"}, anonymous: true}
}

// IsAnonymous reports whether p carries no credential.
func (p *Principal) IsAnonymous() bool { return p.anonymous }

// errSignIn is what an anonymous caller gets for anything beyond reading
// a public project: the same answer whether or not the target exists.
func errSignIn() error { return ErrSignIn() }

// ErrSignIn is errSignIn for app, which maps every failed resolution of
// an anonymous caller to it, so a private project and a missing one
// answer alike.
func ErrSignIn() error {
	return Errorf(EUNAUTHORIZED, "missing credential: send Authorization: Bearer <token>")
}

// Kind is "session", "api_key" or "anonymous".
func (p *Principal) Kind() string {
	switch {
	case p.anonymous:
		return "anonymous"
	case p.Key != nil:
		return "api_key"
	}
	return "session"
}

// ID is the id of the credential: the session or the key.
func (p *Principal) ID() string {
	if p.Key != nil {
		return p.Key.ID
	}
	return p.SessionID
}

// Actor is who the principal's changes are authored by.
func (p *Principal) Actor() Actor {
	if p.Key != nil {
		return Actor{Name: p.User.Name + " (key " + p.Key.Name + ")", Email: p.User.Email, UserID: p.User.ID, KeyID: p.Key.ID}
	}
	return Actor{Name: p.User.Name, Email: p.User.Email, UserID: p.User.ID}
}

// IsAdmin reports whether the principal acts with global admin rights.
// A key limited to projects is never one: it could otherwise create an
// admin user or an unlimited key and so escape its project list.
func (p *Principal) IsAdmin() bool {
	return !p.anonymous && p.User.Role == RoleAdmin && p.CheckAccount() == nil
}

// ProjectAccess is the access the principal has to project pr: the user's
// role (admins own everything), capped by a key's scope and project list.
func (p *Principal) ProjectAccess(pr *Project) Access {
	if p.anonymous {
		if pr.Public() {
			return AccessRead
		}
		return AccessNone
	}
	level := AccessNone
	if p.User.Role == RoleAdmin {
		level = AccessAdmin
	} else {
		level = pr.Role(p.User.ID).Level()
	}
	if p.Key != nil {
		level = min(level, p.Key.Scope.Level())
		if len(p.Key.ProjectIDs) > 0 && !contains(p.Key.ProjectIDs, pr.ID) {
			level = AccessNone
		}
	}
	return level
}

// CheckProject returns nil when the principal has at least want on pr, a
// not-found error when it cannot see pr at all, and forbidden otherwise.
func (p *Principal) CheckProject(pr *Project, want Access) error {
	got := p.ProjectAccess(pr)
	switch {
	case got >= want:
		return nil
	case p.anonymous:
		// Private, missing or read-only alike: sign in.
		return errSignIn()
	case got == AccessNone:
		return Errorf(ENOTFOUND, "project not found")
	default:
		return Errorf(EFORBIDDEN, "this credential may not do that in project %s", pr.Slug)
	}
}

// CheckAccount returns forbidden unless the principal may act for its
// user beyond any one project: manage API keys, sessions and the user's
// record, create projects. A session may; a key needs the admin scope and
// no project list, because a key limited to projects could otherwise
// mint an unlimited key (or a password) and escape its limits.
func (p *Principal) CheckAccount() error {
	switch {
	case p.anonymous:
		return errSignIn()
	case p.Key == nil:
		return nil
	case p.Key.Scope.Level() < AccessAdmin:
		return Errorf(EFORBIDDEN, "API key scope %q does not allow this", p.Key.Scope)
	case len(p.Key.ProjectIDs) > 0:
		return Errorf(EFORBIDDEN, "an API key limited to projects may act only within them")
	}
	return nil
}

// CheckAdmin returns forbidden unless the principal is a global admin.
func (p *Principal) CheckAdmin() error {
	if p.anonymous {
		return errSignIn()
	}
	if !p.IsAdmin() {
		return Errorf(EFORBIDDEN, "admin only")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// NewSecret returns a random 32-byte secret, hex encoded.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// HashSecret returns the stored form of a token secret. Secrets are 256
// random bits, so a fast hash is enough; passwords use bcrypt instead.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SecretMatches compares a secret with its stored hash in constant time.
// It runs on every authenticated request, so it hashes and compares in
// fixed buffers instead of allocating strings.
func SecretMatches(secret, hash string) bool {
	var in [64]byte
	if len(secret) > len(in) {
		return subtle.ConstantTimeCompare([]byte(HashSecret(secret)), []byte(hash)) == 1
	}
	sum := sha256.Sum256(in[:copy(in[:], secret)])
	var got, want [2 * sha256.Size]byte
	hex.Encode(got[:], sum[:])
	if len(hash) != len(want) {
		return false // the length of a hash is no secret
	}
	copy(want[:], hash)
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// Token formats a credential: prefix, the record id without dashes, and
// the secret. The id lets a lookup go straight to one record.
func Token(prefix, id, secret string) string {
	return prefix + strings.ReplaceAll(id, "-", "") + "_" + secret
}

// ParseToken splits a token made by Token. It returns the prefix, the
// record id (with dashes restored) and the secret, or ok=false.
func ParseToken(tok string) (prefix, id, secret string, ok bool) {
	switch {
	case strings.HasPrefix(tok, SessionPrefix):
		prefix = SessionPrefix
	case strings.HasPrefix(tok, APIKeyPrefix):
		prefix = APIKeyPrefix
	default:
		return "", "", "", false
	}
	rest := tok[len(prefix):]
	raw, secret, found := strings.Cut(rest, "_")
	if !found || len(raw) != 32 || len(secret) != 64 || !isHex(raw) || !isHex(secret) {
		return "", "", "", false
	}
	// The dashes back in place, in one buffer: a concatenation of nine
	// parts costs every authenticated request more.
	var b [36]byte
	copy(b[:8], raw[:8])
	copy(b[9:13], raw[8:12])
	copy(b[14:18], raw[12:16])
	copy(b[19:23], raw[16:20])
	copy(b[24:], raw[20:])
	b[8], b[13], b[18], b[23] = '-', '-', '-', '-'
	return prefix, string(b[:]), secret, true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

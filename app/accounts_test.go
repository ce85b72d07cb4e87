package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/cache"
	"github.com/quire/quire/gitstore"
	"golang.org/x/crypto/bcrypt"
)

// accounts is an App over the real stores: metadata in git under a
// temporary root, sessions and throttles in a miniredis that m controls.
type accounts struct {
	*app.App
	meta  *gitstore.Store
	m     *miniredis.Miniredis
	clock time.Time
}

func newAccounts(t *testing.T, login app.LoginConfig) *accounts {
	t.Helper()
	ctx := context.Background()
	ac := &accounts{m: miniredis.RunT(t), clock: time.Unix(1_800_000_000, 0)}
	now := func() time.Time { return ac.clock }
	ac.m.SetTime(ac.clock) // the throttles' clock (Redis's TIME)
	store, err := gitstore.Open(gitstore.Options{Root: t.TempDir(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	rd, err := cache.Open(ctx, cache.Options{URL: "redis://" + ac.m.Addr(), Prefix: "apptest:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	ac.meta = store
	ac.App = app.New(app.Config{
		Meta: store, Versions: store, Sessions: rd,
		RateLimiter: cache.NewRateLimits(rd, cache.RateLimitOptions{MaxLease: 1}),
		BcryptCost:  bcrypt.MinCost, Now: now, Login: login,
	})
	return ac
}

// user stores a user whose password is "password-" + email.
func (ac *accounts) user(t *testing.T, email string, role quire.UserRole) *quire.Principal {
	t.Helper()
	h, _ := bcrypt.GenerateFromPassword([]byte("password-"+email), bcrypt.MinCost)
	u := &quire.User{Email: email, Name: email, Role: role, PasswordHash: string(h)}
	if err := ac.meta.CreateUser(context.Background(), quire.Actor{Name: "test"}, u); err != nil {
		t.Fatal(err)
	}
	return &quire.Principal{User: u, SessionID: "s-" + u.ID}
}

func wantCode(t *testing.T, what string, err error, code quire.Code) {
	t.Helper()
	if quire.ErrorCode(err) != code {
		t.Fatalf("%s: %v (code %q), want %s", what, err, quire.ErrorCode(err), code)
	}
}

// TestLastAdmin: the server keeps an enabled admin. The store refuses
// the change that would leave none; app refuses an admin deleting
// themselves, and lets non-admins do neither.
func TestLastAdmin(t *testing.T) {
	ctx := context.Background()
	ac := newAccounts(t, app.LoginConfig{})
	ann := ac.user(t, "ann@example.com", quire.RoleAdmin)
	bo := ac.user(t, "bo@example.com", quire.RoleMember)
	member, yes := quire.RoleMember, true

	_, err := ac.UpdateUser(ctx, ann, "me", app.UserEdit{Role: &member})
	wantCode(t, "last admin demotes herself", err, quire.ECONFLICT)
	_, err = ac.UpdateUser(ctx, ann, "me", app.UserEdit{Disabled: &yes})
	wantCode(t, "last admin disables herself", err, quire.ECONFLICT)
	wantCode(t, "admin deletes herself", ac.DeleteUser(ctx, ann, ann.User.ID), quire.ECONFLICT)
	wantCode(t, "member deletes the admin", ac.DeleteUser(ctx, bo, ann.User.ID), quire.EFORBIDDEN)
	admin := quire.RoleAdmin
	_, err = ac.UpdateUser(ctx, bo, "me", app.UserEdit{Role: &admin})
	wantCode(t, "member makes herself admin", err, quire.EFORBIDDEN)

	// With a second admin, the first may step down.
	if _, err := ac.UpdateUser(ctx, ann, bo.User.ID, app.UserEdit{Role: &admin}); err != nil {
		t.Fatal(err)
	}
	up, err := ac.UpdateUser(ctx, ann, "me", app.UserEdit{Role: &member})
	if err != nil || up.User.Role != quire.RoleMember {
		t.Fatalf("second-to-last admin steps down: %v", err)
	}
	bo.User.Role = quire.RoleAdmin
	if err := ac.DeleteUser(ctx, bo, ann.User.ID); err != nil {
		t.Fatalf("admin deletes a former admin: %v", err)
	}
}

// TestAPIKeyExpiry: a key's expiry must lie ahead of the clock; a key
// expires by the same clock; a key cannot make keys.
func TestAPIKeyExpiry(t *testing.T) {
	ctx := context.Background()
	ac := newAccounts(t, app.LoginConfig{})
	p := ac.user(t, "kit@example.com", quire.RoleMember)
	key := func(exp time.Time) app.KeyEdit { return app.KeyEdit{Name: "ci", ExpiresAt: &exp} }
	for _, exp := range []time.Time{ac.clock, ac.clock.Add(-time.Hour)} {
		_, err := ac.CreateAPIKey(ctx, p, key(exp))
		wantCode(t, "expiry "+exp.Sub(ac.clock).String(), err, quire.EUNPROCESSABLE)
		if quire.ErrorDetails(err)["field"] != "expires_at" {
			t.Fatalf("expiry error names no field: %v", quire.ErrorDetails(err))
		}
	}
	nk, err := ac.CreateAPIKey(ctx, p, key(ac.clock.Add(time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if nk.Key.Scope != quire.ScopeRead || nk.Key.ProjectIDs == nil {
		t.Fatalf("default key: scope %q, project ids %v", nk.Key.Scope, nk.Key.ProjectIDs)
	}
	kp, err := ac.Authenticate(ctx, nk.Token)
	if err != nil {
		t.Fatalf("fresh key: %v", err)
	}
	_, err = ac.CreateAPIKey(ctx, kp, key(ac.clock.Add(time.Hour)))
	wantCode(t, "a key makes a key", err, quire.EFORBIDDEN)
	ac.clock = ac.clock.Add(2 * time.Second)
	_, err = ac.Authenticate(ctx, nk.Token)
	wantCode(t, "expired key", err, quire.EUNAUTHORIZED)
}

// TestLoginThrottleFallback: with Redis down, the in-process throttle
// counts failed logins against the same limits, and every login that it
// lets through gets the one 503 whatever the password.
func TestLoginThrottleFallback(t *testing.T) {
	ctx := context.Background()
	var limited []string
	ac := newAccounts(t, app.LoginConfig{
		Account: quire.Limit{Rate: 3, Period: time.Hour},
		Address: quire.Limit{Rate: 6, Period: time.Hour},
		Limited: func(l string) { limited = append(limited, l) },
	})
	ac.user(t, "bo@example.com", quire.RoleMember)
	ac.user(t, "cy@example.com", quire.RoleMember)
	login := func(email, password string) error {
		_, err := ac.Login(ctx, email, password, "192.0.2.7", "test")
		return err
	}
	wantCode(t, "wrong password", login("bo@example.com", "wrong"), quire.EUNAUTHORIZED)
	if _, err := ac.Login(ctx, "bo@example.com", "password-bo@example.com", "192.0.2.7", "test"); err != nil {
		t.Fatalf("right password: %v", err)
	}

	ac.m.Close()
	down := login("bo@example.com", "password-bo@example.com")
	wantCode(t, "right password, Redis down", down, quire.EUNAVAILABLE)
	for _, err := range []error{login("bo@example.com", "wrong"), login("nobody@example.com", "x")} {
		if err.Error() != down.Error() || quire.ErrorDetails(err)["retry_after"] != 5 {
			t.Fatalf("Redis down: %v, want as the right password: %v", err, down)
		}
	}
	// bo: three attempts in process, the fourth is over the account limit.
	wantCode(t, "bo, 3rd", login("bo@example.com", "wrong"), quire.EUNAVAILABLE)
	err := login("bo@example.com", "password-bo@example.com")
	wantCode(t, "bo, 4th", err, quire.ERATELIMIT)
	if quire.ErrorDetails(err)["retry_after"] != 1200 {
		t.Fatalf("account throttle: %v", quire.ErrorDetails(err))
	}
	// The address has made six attempts (a refusal counts too): cy, with
	// none of its own, is held back.
	wantCode(t, "cy", login("cy@example.com", "wrong"), quire.EUNAVAILABLE)
	err = login("cy@example.com", "password-cy@example.com")
	wantCode(t, "cy, address spent", err, quire.ERATELIMIT)
	if quire.ErrorDetails(err)["retry_after"] != 600 {
		t.Fatalf("address throttle: %v", quire.ErrorDetails(err))
	}
	if len(limited) != 2 || limited[0] != "login_account" || limited[1] != "login_address" {
		t.Fatalf("refusals heard: %v", limited)
	}
}

// TestInputAfterAuthorization: a use case checks the caller before its
// input, so a forbidden request is forbidden whatever its body (an empty
// edit would otherwise be invalid).
func TestInputAfterAuthorization(t *testing.T) {
	ctx := context.Background()
	ac := newAccounts(t, app.LoginConfig{})
	ac.user(t, "ann@example.com", quire.RoleAdmin)
	bo := ac.user(t, "bo@example.com", quire.RoleMember)
	var malformed app.UserEdit
	_, err := ac.CreateUser(ctx, bo, malformed)
	wantCode(t, "member creates a user", err, quire.EFORBIDDEN)
	_, err = ac.UpdateUser(ctx, bo, "someone-else", malformed)
	wantCode(t, "member edits another user", err, quire.ENOTFOUND)
}

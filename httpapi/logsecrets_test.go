package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/testenv"
)

// TestLogsHoldNoSecrets drives logins, sessions, API keys and password
// changes, then searches everything logged for any token, password,
// password hash or token hash.
func TestLogsHoldNoSecrets(t *testing.T) {
	e := testenv.New(t)
	ctx := context.Background()
	secrets := map[string]string{"admin password": testenv.AdminPassword, "admin session": e.Admin}

	pw := "first-Pa55word-" + quire.NewSecret()[:8]
	res := e.Must(201, "POST", "/v1/users", e.Admin, map[string]string{"email": "dev@example.com", "password": pw, "name": "Dev"})
	userID := res.JSON(t)["user"].(map[string]any)["id"].(string)
	secrets["password"] = pw
	e.Must(401, "POST", "/v1/auth/login", "", map[string]string{"email": "dev@example.com", "password": pw + "-wrong"})
	secrets["wrong password"] = pw + "-wrong"
	e.Must(401, "POST", "/v1/auth/login", "", map[string]string{"email": "nobody@example.com", "password": pw})

	sess := e.Login("dev@example.com", pw)
	secrets["session"] = sess
	e.Must(200, "GET", "/v1/auth/me", sess, nil)
	pid := e.CreateProject(e.Admin, "demo")
	e.Must(200, "POST", "/v1/projects/"+pid+"/members", e.Admin, map[string]string{"user_id": userID, "role": "editor"})

	key := e.CreateKey(sess, "write", pid)
	secrets["api key"] = key
	e.Must(200, "GET", "/v1/auth/me", key, nil)
	e.Must(200, "GET", "/v1/projects", key, nil)
	e.CreateSkill(key, pid, "pdf")
	e.Must(403, "POST", "/v1/projects", key, map[string]string{"name": "nope"})

	// Rotate the key and change the password: the old and new ones count.
	keys := e.Must(200, "GET", "/v1/api-keys", sess, nil).JSON(t)["api_keys"].([]any)
	keyID := keys[0].(map[string]any)["id"].(string)
	adminKey := e.CreateKey(e.Admin, "admin")
	secrets["admin key"] = adminKey
	rotated := e.Must(200, "POST", "/v1/api-keys/"+keyID+"/rotate", adminKey, nil).JSON(t)["token"].(string)
	secrets["rotated key"] = rotated
	e.Must(200, "GET", "/v1/auth/me", rotated, nil)
	e.Must(401, "GET", "/v1/auth/me", key, nil)
	pw2 := "second-Pa55word-" + quire.NewSecret()[:8]
	secrets["new password"] = pw2
	e.Must(200, "PATCH", "/v1/users/me", sess, map[string]string{"password": pw2})
	sess2 := e.Login("dev@example.com", pw2)
	secrets["second session"] = sess2

	// Bad and revoked credentials, and a token in a path.
	e.Must(401, "GET", "/v1/auth/me", sess+"x", nil)
	e.Must(404, "GET", "/v1/nowhere/"+sess2, sess2, nil)
	e.Must(204, "DELETE", "/v1/auth/session", sess, nil)
	e.Must(401, "GET", "/v1/auth/me", sess, nil)

	// The stored hashes must not be logged either.
	u, err := e.Store.UserByEmail(ctx, "dev@example.com")
	if err != nil {
		t.Fatal(err)
	}
	secrets["password hash"] = u.PasswordHash
	admin, _ := e.Store.UserByEmail(ctx, testenv.AdminEmail)
	secrets["admin password hash"] = admin.PasswordHash
	k, err := e.Store.APIKey(ctx, keyID)
	if err != nil {
		t.Fatal(err)
	}
	secrets["key hash"] = k.SecretHash
	for name, tok := range map[string]string{"session": sess, "second session": sess2, "api key": key, "rotated key": rotated, "admin session": e.Admin} {
		_, _, secret, ok := quire.ParseToken(tok)
		if !ok {
			t.Fatalf("%s is not a token", name)
		}
		secrets[name+" secret"] = secret
		secrets[name+" secret hash"] = quire.HashSecret(secret)
	}

	log := e.Log.String()
	lines := logLines(t, e)
	if len(lines) < 20 {
		t.Fatalf("only %d log lines captured", len(lines))
	}
	for name, s := range secrets {
		if s == "" {
			t.Fatalf("%s is empty", name)
		}
		if strings.Contains(log, s) {
			t.Errorf("the log holds the %s", name)
		}
	}
	for _, l := range lines {
		if l["msg"] == "request" && (l["request_id"] == nil || l["trace_id"] == nil) {
			t.Errorf("request line without request_id or trace_id: %v", l)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/quire/quire"
	"github.com/quire/quire/internal/cluster"
	"golang.org/x/crypto/bcrypt"
)

// TestLoginRedisKilled kills a real redis-server under quire serve: every
// login then answers the same 503 with Retry-After, whether the password
// is right or wrong, and the login limit still holds, counted in process.
func TestLoginRedisKilled(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on PATH")
	}
	rs := startRedisServer(t, freePort(t))
	out := &cluster.Log{}
	m := NewMain(out)
	m.Config.Addr, m.Config.Data, m.Config.Redis = "127.0.0.1:0", t.TempDir(), "redis://"+rs.addr()
	m.Config.BcryptCost = bcrypt.MinCost
	m.Config.AdminEmail, m.Config.AdminPassword = adminEmail, adminPassword
	m.Config.RateLimits.LoginAccount = quire.Limit{Rate: 4, Period: time.Hour}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := &runningServer{t: t, m: m, out: out, url: "http://" + m.Addr()}
	t.Cleanup(func() { s.close() })

	login := func(password string) (int, http.Header, []byte) {
		b, _ := json.Marshal(map[string]string{"email": adminEmail, "password": password})
		res, err := http.Post(s.url+"/v1/auth/login", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		json.NewDecoder(res.Body).Decode(&body)
		delete(body, "request_id")
		raw, _ := json.Marshal(body)
		return res.StatusCode, res.Header, raw
	}
	if st, _, raw := login("wrong"); st != 401 {
		t.Fatalf("wrong password with Redis up: %d %s", st, raw)
	}
	s.login(adminEmail, adminPassword)

	rs.stop()
	st, h, right := login(adminPassword)
	if st != 503 || h.Get("Retry-After") == "" {
		t.Fatalf("right password with Redis down: %d %v %s", st, h, right)
	}
	for range 3 {
		st, h, wrong := login("wrong")
		if st != 503 || h.Get("Retry-After") != "5" || !bytes.Equal(wrong, right) {
			t.Fatalf("wrong password with Redis down: %d %v %s; right password: %s", st, h, wrong, right)
		}
	}
	// Four attempts: the fifth is over --login-limit, in process.
	for _, pw := range []string{adminPassword, "wrong"} {
		if st, h, raw := login(pw); st != 429 || h.Get("Retry-After") != "900" {
			t.Fatalf("attempt over the limit with Redis down: %d %v %s", st, h, raw)
		}
	}
}

package httpapi

import (
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestClientIP: where no proxy is trusted, the address a request limit
// counts is gin's ClientIP, for every shape of RemoteAddr.
func TestClientIP(t *testing.T) {
	s := &Server{}
	e := gin.New()
	e.SetTrustedProxies(nil)
	for _, addr := range []string{"127.0.0.1:5", "192.0.2.1:1234", "[::1]:80", "[::ffff:10.0.0.1]:80", "[fe80::1%eth0]:9", "[2001:db8::1]:443", "10.0.0.1", "", "pipe", "host.example:80", "01.2.3.4:5"} {
		c := gin.CreateTestContextOnly(httptest.NewRecorder(), e)
		c.Request = httptest.NewRequest("GET", "/", nil)
		c.Request.RemoteAddr = addr
		if got, want := s.clientIP(c), c.ClientIP(); got != want {
			t.Errorf("RemoteAddr %q: %q, gin says %q", addr, got, want)
		}
	}
}

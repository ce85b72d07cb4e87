package httpapi

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
)

// Idempotency-Key (docs/api.md): a POST that creates (a project, skill,
// prompt, draft, payload or API key) sent with the header is done once;
// a retry with the same key gets the first answer again, with
// Idempotent-Replayed: true, for quire.IdempotencyTTL. Keys are scoped to
// the caller's user, the method and the path, so two users (or two
// routes) never share one. Only a success (2xx) is remembered: a failure
// created nothing, and its retry runs again. A retry while the first is
// still running is 409 with Retry-After; the same key with another body
// is 422. A kept body is sealed (AES-GCM) with a key derived from the
// user and the Idempotency-Key, which is never stored: an API key's token
// in its creation's answer is not readable from Redis.

// idempotencyHeaders are the headers of an answer kept with its body.
var idempotencyHeaders = []string{"Content-Type", "ETag", "Location"}

// maxIdempotencyKey bounds the header, as Stripe's 255.
const maxIdempotencyKey = 255

// idempotent is the middleware of creating routes.
func (s *Server) idempotent(c *gin.Context) {
	key := c.GetHeader("Idempotency-Key")
	if key == "" || s.idem == nil {
		c.Next()
		return
	}
	if len(key) > maxIdempotencyKey || !printable(key) {
		s.fail(c, quire.Errorf(quire.EINVALID, "Idempotency-Key must be 1 to %d printable ASCII characters", maxIdempotencyKey).WithDetail("header", "Idempotency-Key"))
		return
	}
	limit := s.limits.MaxVersionBytes + s.limits.MaxBody
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, limit+1))
	if err != nil {
		s.fail(c, jsonError(err, limit))
		return
	}
	if int64(len(body)) > limit {
		// Too large for any route to take: the handler refuses it.
		c.Request.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), c.Request.Body))
		c.Next()
		return
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))

	ctx := c.Request.Context()
	scoped := digest(principal(c).User.ID, c.Request.Method, c.Request.URL.Path, key)
	fp := digest(c.GetHeader("Content-Type"), string(body))
	prior, pending, claimed, err := s.idem.Begin(ctx, scoped, fp)
	switch {
	case err != nil:
		s.fail(c, err)
		return
	case !claimed && prior == nil && pending == fp:
		c.Header("Retry-After", "1")
		s.fail(c, quire.Errorf(quire.ECONFLICT, "a request with this Idempotency-Key is still in progress; retry shortly").WithDetail("header", "Idempotency-Key"))
		return
	case !claimed && (prior == nil || prior.Fingerprint != fp):
		s.fail(c, quire.Errorf(quire.EUNPROCESSABLE, "this Idempotency-Key was used with a different request; use a new key for a new request").WithDetail("header", "Idempotency-Key"))
		return
	case !claimed:
		body, err := openBody(sealKey(principal(c).User.ID, key), prior.Body)
		if err != nil {
			s.fail(c, err)
			return
		}
		for k, v := range prior.Header {
			c.Header(k, v)
		}
		c.Header("Idempotent-Replayed", "true")
		c.Data(prior.Status, prior.Header["Content-Type"], body)
		c.Abort()
		return
	}

	rec := &teeWriter{ResponseWriter: c.Writer}
	c.Writer = rec
	done := false
	defer func() {
		// A panic or a failure: forget the claim so a retry runs.
		if !done {
			if err := s.idem.Release(context.WithoutCancel(ctx), scoped); err != nil {
				s.log.Warn("idempotency key not released", "error", err.Error())
			}
		}
	}()
	c.Next()
	if st := rec.Status(); st < 200 || st > 299 {
		return
	}
	sealed, err := sealBody(sealKey(principal(c).User.ID, key), rec.buf.Bytes())
	if err != nil {
		s.log.Warn("idempotent answer not stored", "error", err.Error())
		return
	}
	resp := &quire.IdempotentResponse{Fingerprint: fp, Status: rec.Status(), Header: map[string]string{}, Body: sealed}
	for _, h := range idempotencyHeaders {
		if v := rec.Header().Get(h); v != "" {
			resp.Header[h] = v
		}
	}
	if err := s.idem.Finish(context.WithoutCancel(ctx), scoped, resp); err != nil {
		// The resource exists and the client has its answer; a retry
		// would find the claim pending until it expires.
		s.log.Warn("idempotent answer not stored", "error", err.Error())
	}
	done = true
}

// sealKey is the AES-256 key of a kept answer: not the stored key's
// digest (which hashes the method and path too, and is hex).
func sealKey(userID, key string) []byte {
	h := sha256.Sum256([]byte("quire idempotent answer\x00" + userID + "\x00" + key))
	return h[:]
}

func sealBody(key, body []byte) ([]byte, error) {
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(body)+aead.Overhead())
	rand.Read(nonce)
	return aead.Seal(nonce, nonce, body, nil), nil
}

func openBody(key, sealed []byte) ([]byte, error) {
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("idempotency: kept answer too short")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
}

func newGCM(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// digest is a hex SHA-256 of parts, each ended by a NUL.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// teeWriter keeps a copy of the body written through it.
type teeWriter struct {
	gin.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) WriteString(s string) (int, error) {
	w.buf.WriteString(s)
	return w.ResponseWriter.WriteString(s)
}

var _ http.ResponseWriter = (*teeWriter)(nil)

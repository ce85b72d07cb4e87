package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/httpstatus"
)

// APIError is the error body of every failed request: the router's 404
// and 405, a recovered panic and a slow body's timeout included, as every
// one goes through answer.
type APIError struct {
	// Error is the message, safe to show to a person.
	Error string `json:"error"`
	// Code is the machine-readable kind of failure (quire.Codes).
	Code quire.Code `json:"code"`
	// Details say more where a client can act on it: details.field names
	// an unknown or invalid field, details.missing the variables a render
	// lacks, details.ids the assets an ambiguous slug names.
	Details map[string]any `json:"details,omitempty"`
	// RequestID is the request's X-Request-ID, as logged.
	RequestID string `json:"request_id"`
}

// fail answers with err as an APIError and stops the handler chain.
// Internal errors are logged with their cause; clients see only a message.
func (s *Server) fail(c *gin.Context, err error) {
	code := quire.ErrorCode(err)
	if code == quire.EINTERNAL {
		code = classifyInternal(err)
	}
	if status := httpstatus.Of(code); status >= 500 {
		attrs := []slog.Attr{
			slog.String("request_id", requestIDOf(c)),
			slog.String("route", c.FullPath()),
			slog.String("error", err.Error()),
		}
		s.log.LogAttrs(c.Request.Context(), slog.LevelError, "request failed", appendTraceAttrs(c.Request.Context(), attrs)...)
	}
	c.Error(err) // for the request log
	answer(c, err, code)
}

// answer writes err as an APIError with the status code has in httpstatus and stops the handler chain. code is err's, or what
// classifyInternal found an internal error to be. Only fail and the
// answers that must not log (a readiness probe, a recovered panic, logged
// already) call it.
func answer(c *gin.Context, err error, code quire.Code) {
	status := httpstatus.Of(code)
	body := APIError{Error: quire.ErrorMessage(err), Code: code, Details: quire.ErrorDetails(err), RequestID: requestIDOf(c)}
	if code != quire.EINTERNAL && quire.ErrorCode(err) == quire.EINTERNAL {
		body.Error = machineFault[code]
	}
	if status == http.StatusUnauthorized && c.Writer.Header().Get("WWW-Authenticate") == "" {
		c.Header("WWW-Authenticate", `Bearer realm="quire"`) // git's routes ask for Basic
	}
	if code == quire.ERATELIMIT || code == quire.EUNAVAILABLE {
		if v := retryAfterHeader(err); v != "" {
			c.Header("Retry-After", v)
		}
	}
	c.AbortWithStatusJSON(status, body)
}

// machineFault is what a client is told when classifyInternal finds the
// cause of an internal error.
var machineFault = map[quire.Code]string{
	quire.ENOSPACE:     "the server's storage is full; retry once space has been freed",
	quire.EUNAVAILABLE: "the server's storage is not writable; retry later",
	quire.ETIMEOUT:     "the request body arrived too slowly",
}

// classifyInternal recognises failures of the machine (a full disk, an
// unwritable data root) that are not bugs, so clients get 507 or 503.
func classifyInternal(err error) quire.Code {
	switch {
	case isNoSpace(err):
		return quire.ENOSPACE
	case isReadOnly(err):
		return quire.EUNAVAILABLE
	case errors.Is(err, os.ErrDeadlineExceeded):
		// A body slower than quire serve --body-min-rate (internal/netguard).
		return quire.ETIMEOUT
	}
	return quire.EINTERNAL
}

// respond answers err when there is one, else status with {key: v}: the
// end of most handlers, whose use case returns one resource.
func (s *Server) respond(c *gin.Context, status int, key string, v any, err error) {
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(status, gin.H{key: v})
}

package httpapi

import (
	"context"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/quire/quire"
	"go.opentelemetry.io/otel/trace"
)

// The access log: one JSON line per request. Where Config.AccessLog is
// set (quire serve, quire-bench), the line is appended by hand into a
// pooled buffer and written there in one call; otherwise it goes through
// the Logger's handler. The hand-written line is slog's JSON handler's
// line, field for field (time as RFC 3339 with nanoseconds, level, msg,
// then the attributes; durations in nanoseconds): the handler costs
// about 4% of a cached render's CPU on its own (walking attributes,
// checking kinds, its lock), which the hot path's goal does not leave
// room for (issue 30). TestAccessLineIsSlogs keeps the two alike.

// accessLine is what one request's line says.
type accessLine struct {
	end                     time.Time
	requestID, method       string
	route                   string
	status, bytes           int
	took                    time.Duration
	traceID, spanID         string // "" when the request has no trace
	kind, principal, userID string // "" when no one is signed in
	err                     string // a 5xx's error, else ""
}

// accessLineOf reads the line of the request c answered.
func accessLineOf(c *gin.Context, route string, end time.Time, took time.Duration) accessLine {
	l := accessLine{
		end: end, requestID: c.GetString(ctxRequestID), method: c.Request.Method, route: route,
		status: c.Writer.Status(), bytes: max(c.Writer.Size(), 0), took: took,
	}
	if sc := trace.SpanContextFromContext(c.Request.Context()); sc.IsValid() {
		l.traceID, l.spanID = sc.TraceID().String(), sc.SpanID().String()
	}
	if p, ok := c.Get(ctxPrincipal); ok {
		pr := p.(*quire.Principal)
		l.kind, l.principal, l.userID = pr.Kind(), pr.ID(), pr.User.ID
	}
	if len(c.Errors) > 0 && l.status >= 500 {
		l.err = c.Errors.Last().Error()
	}
	return l
}

// attrs are the line's attributes, for a slog handler.
func (l *accessLine) attrs() []slog.Attr {
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("request_id", l.requestID),
		slog.String("method", l.method),
		slog.String("route", l.route),
		slog.Int("status", l.status),
		slog.Duration("duration", l.took),
		slog.Int("bytes", l.bytes),
	)
	if l.traceID != "" {
		attrs = append(attrs, slog.String("trace_id", l.traceID), slog.String("span_id", l.spanID))
	}
	if l.kind != "" {
		attrs = append(attrs, slog.String("principal_kind", l.kind), slog.String("principal_id", l.principal), slog.String("user_id", l.userID))
	}
	if l.err != "" {
		attrs = append(attrs, slog.String("error", l.err))
	}
	return attrs
}

// appendJSON appends the line as slog's JSON handler writes it, newline
// included, when l is ascii.
func (l *accessLine) appendJSON(b []byte) []byte {
	b = append(b, `{"time":"`...)
	b = l.end.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request"`...)
	str := func(k, v string) {
		b = append(b, ',', '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b, _ = jsontext.AppendQuote(b, v) // ASCII: no error
	}
	num := func(k string, v int64) {
		b = append(b, ',', '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, v, 10)
	}
	str("request_id", l.requestID)
	str("method", l.method)
	str("route", l.route)
	num("status", int64(l.status))
	num("duration", int64(l.took))
	num("bytes", int64(l.bytes))
	if l.traceID != "" {
		str("trace_id", l.traceID)
		str("span_id", l.spanID)
	}
	if l.kind != "" {
		str("principal_kind", l.kind)
		str("principal_id", l.principal)
		str("user_id", l.userID)
	}
	if l.err != "" {
		str("error", l.err)
	}
	return append(b, '}', '\n')
}

// accessLog writes one structured line per request. It never logs headers
// or bodies, so tokens and passwords cannot leak into it.
func (s *Server) accessLog(c *gin.Context, route string, end time.Time, took time.Duration) {
	ctx := c.Request.Context()
	if !s.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	l := accessLineOf(c, route, end, took)
	s.writeLine(ctx, &l)
}

// writeLine writes the access line l.
func (s *Server) writeLine(ctx context.Context, l *accessLine) {
	switch {
	case s.accessOut == nil:
		logAccessLine(ctx, s.log.Handler(), l)
	case !l.ascii():
		// slog escapes U+2028, U+2029 and invalid UTF-8 its own way;
		// only an error's text brings them, rarely.
		logAccessLine(ctx, s.accessJSON, l)
	default:
		s.writeAccessLine(l)
	}
}

// ascii reports whether every string of l is ASCII, which appendJSON
// quotes as slog does.
func (l *accessLine) ascii() bool {
	for _, v := range [...]string{l.requestID, l.method, l.route, l.traceID, l.spanID, l.kind, l.principal, l.userID, l.err} {
		for i := 0; i < len(v); i++ {
			if v[i] >= utf8.RuneSelf {
				return false
			}
		}
	}
	return true
}

// writeAccessLine writes l to the access log's writer in one call, from
// a pooled buffer.
func (s *Server) writeAccessLine(l *accessLine) {
	bp, _ := s.lineBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	*bp = l.appendJSON((*bp)[:0])
	s.accessOut.Write(*bp) // a log line that cannot be written has nowhere to go
	if cap(*bp) <= 4<<10 {
		s.lineBufs.Put(bp)
	}
}

// logAccessLine hands l to h as a record, with no caller's pc:
// Logger.LogAttrs would walk the stack for a source location the line
// does not carry.
func logAccessLine(ctx context.Context, h slog.Handler, l *accessLine) {
	r := slog.NewRecord(l.end, slog.LevelInfo, "request", 0)
	r.AddAttrs(l.attrs()...)
	h.Handle(ctx, r)
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// The answers of the hot path, a render and a live read, are mostly the
// same bytes request after request: everything but a render's text is
// fixed by the prompt, the version and the partials, and a live read is
// fixed by the cached version it answers with. Encoding them again each
// time (reflection, and json.RawMessage compacted anew) was a tenth of
// a live read's CPU; these memos keep the bytes, made once by
// encoding/json, so the answers stay byte for byte what c.JSON wrote.

// jsonMediaType is what gin's c.JSON sets.
const jsonMediaType = "application/json; charset=utf-8"

// maxEncoded bounds each memo's entries; a full memo starts over.
const maxEncoded = 4096

// encodedMemo is a bounded map of encoded answers, safe for concurrent
// use; reads take no lock.
type encodedMemo[K comparable, V any] struct {
	m sync.Map
	n atomic.Int64
}

func (em *encodedMemo[K, V]) load(k K) (V, bool) {
	v, ok := em.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (em *encodedMemo[K, V]) store(k K, v V) {
	if em.n.Add(1) > maxEncoded {
		em.m.Clear()
		em.n.Store(1)
	}
	em.m.Store(k, v)
}

// renderFrame is a render answer around its text: head ends with the
// comma after "commit", tail starts at "model"; etag is the answer's ETag
// header value, quoted.
type renderFrame struct {
	head, tail []byte
	etag       []string
}

// renderKey names what a frame holds: the entity tag stands for the
// commit (and so the model and its parameters) and the partials.
type renderKey struct {
	prompt  string
	version int
	etag    string
}

// writeRender writes r as c.JSON(200, r) would: the frame from the memo,
// only the text (or messages) encoded per request.
func (s *Server) writeRender(c *gin.Context, r *renderResponse, etag string) {
	key := renderKey{r.PromptID, r.Version, etag}
	f, ok := s.frames.load(key)
	if !ok {
		var err error
		if f, err = newRenderFrame(r, etag); err != nil {
			s.renderJSON(c, *r, etag)
			return
		}
		s.frames.store(key, f)
	}
	bp := answers.Get().(*[]byte)
	defer answers.Put(bp)
	out := append((*bp)[:0], f.head...)
	switch {
	case r.Rendered != nil:
		out = append(out, `"rendered":`...)
		if q, ok := jsonQuoting.append(out, *r.Rendered); ok {
			out = append(q, ',')
			break
		}
		body, err := json.Marshal(*r.Rendered)
		if err != nil {
			s.renderJSON(c, *r, etag)
			return
		}
		out = append(append(out, body...), ',')
	case len(r.Messages) > 0:
		body, err := json.Marshal(r.Messages)
		if err != nil {
			s.renderJSON(c, *r, etag)
			return
		}
		out = append(append(append(out, `"messages":`...), body...), ',')
	}
	out = append(out, f.tail...)
	writeEncoded(c, f.etag, out)
	if cap(out) <= maxPooledAnswer {
		*bp = out
	}
}

// renderJSON writes r the long way, should the memo's not do. It takes
// a copy, so that writeRender's r need not be on the heap.
func (s *Server) renderJSON(c *gin.Context, r renderResponse, etag string) {
	c.Header("ETag", `"`+etag+`"`)
	c.JSON(http.StatusOK, &r)
}

// answers are the buffers render answers are put together in: the
// answer is copied out by net/http before writeEncoded returns.
var answers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledAnswer bounds the buffers kept in answers.
const maxPooledAnswer = 64 << 10

// jsonTypeHeader is the Content-Type header of the answers writeEncoded
// writes: one slice shared by all, which net/http only reads, rather than
// one made per answer on the hot path.
var jsonTypeHeader = []string{jsonMediaType}

// bufferedAnswer is net/http's buffer before chunking
// (bufferBeforeChunkingSize): an answer of at most this size, written
// whole by a handler that then returns, gets its Content-Length from
// net/http itself, without an allocation. A larger one is given it here.
// TestAnswersCarryContentLength checks both sides of the line.
const bufferedAnswer = 2048

// writeEncoded writes body, encoded JSON, with status 200 and the
// headers c.Data(200, jsonMediaType, body) writes, and ETag etag when it
// is not nil. Nothing keeps body after it returns.
func writeEncoded(c *gin.Context, etag []string, body []byte) {
	h := c.Writer.Header()
	h["Content-Type"] = jsonTypeHeader
	if etag != nil {
		h["Etag"] = etag
	}
	if len(body) > bufferedAnswer {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	c.Status(http.StatusOK)
	c.Writer.Write(body)
}

// newRenderFrame encodes r without its text and cuts it before "model":
// the fields before it are an id, a number and a commit id, which never
// hold that text.
func newRenderFrame(r *renderResponse, etag string) (renderFrame, error) {
	bare := *r
	bare.Rendered, bare.Messages = nil, nil
	b, err := json.Marshal(&bare)
	if err != nil {
		return renderFrame{}, err
	}
	i := bytes.Index(b, []byte(`,"model":`))
	if i < 0 {
		return renderFrame{}, errNoFrame
	}
	return renderFrame{head: b[:i+1], tail: b[i+1:], etag: []string{`"` + etag + `"`}}, nil
}

var errNoFrame = quire.Errorf(quire.EINTERNAL, "render answer without a model field")

// liveKey and liveBody: the encoded live read of a prompt at a commit,
// valid while the prompt cache answers with the same version value.
type liveKey struct{ prompt, commit string }

type liveBody struct {
	pv   *quire.PromptVersion
	body []byte
}

// writeLive writes the live read pv of a as c.JSON would.
func (s *Server) writeLive(c *gin.Context, a *quire.Asset, pv *quire.PromptVersion, listFiles func() ([]app.LiveFile, error)) {
	key := liveKey{a.ID, pv.Version.Commit}
	if lb, ok := s.lives.load(key); ok && lb.pv == pv {
		writeEncoded(c, nil, lb.body)
		return
	}
	// A live version's files never change at its commit: listed (and
	// hashed) once per cached version, with the body.
	files, err := listFiles()
	if err != nil {
		s.fail(c, err)
		return
	}
	v := gin.H{"version": newPromptView(a, pv.Version, pv.Content), "files": files}
	body, err := json.Marshal(v)
	if err != nil {
		c.JSON(http.StatusOK, v)
		return
	}
	s.lives.store(key, liveBody{pv, body})
	writeEncoded(c, nil, body)
}

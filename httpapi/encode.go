package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
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
// comma after "commit", tail starts at "model".
type renderFrame struct{ head, tail []byte }

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
		if f, err = newRenderFrame(r); err != nil {
			c.JSON(http.StatusOK, r)
			return
		}
		s.frames.store(key, f)
	}
	var (
		field string
		body  []byte
		err   error
	)
	switch {
	case r.Rendered != nil:
		field = `"rendered":`
		body, err = json.Marshal(*r.Rendered)
	case len(r.Messages) > 0:
		field = `"messages":`
		body, err = json.Marshal(r.Messages)
	}
	if err != nil {
		c.JSON(http.StatusOK, r)
		return
	}
	out := make([]byte, 0, len(f.head)+len(field)+len(body)+1+len(f.tail))
	out = append(out, f.head...)
	if field != "" {
		out = append(append(append(out, field...), body...), ',')
	}
	out = append(out, f.tail...)
	c.Data(http.StatusOK, jsonMediaType, out)
}

// newRenderFrame encodes r without its text and cuts it before "model":
// the fields before it are an id, a number and a commit id, which never
// hold that text.
func newRenderFrame(r *renderResponse) (renderFrame, error) {
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
	return renderFrame{head: b[:i+1], tail: b[i+1:]}, nil
}

var errNoFrame = quire.Errorf(quire.EINTERNAL, "render answer without a model field")

// liveKey and liveBody: the encoded live read of a prompt at a commit,
// valid while the prompt cache answers with the same version value.
type liveKey struct{ prompt, commit string }

type liveBody struct {
	pv   *quire.PromptVersion
	body []byte
}

// writeLive writes the live read pv of a as c.JSON would; files lists the
// version's files (app.LiveFiles), asked only when the body is not kept.
func (s *Server) writeLive(c *gin.Context, a *quire.Asset, pv *quire.PromptVersion, files func() ([]app.LiveFile, error)) {
	key := liveKey{a.ID, pv.Version.Commit}
	if lb, ok := s.lives.load(key); ok && lb.pv == pv {
		c.Data(http.StatusOK, jsonMediaType, lb.body)
		return
	}
	// A live version's files never change at its commit: listed (and
	// hashed) once per cached version, with the body.
	list, err := files()
	if err != nil {
		s.fail(c, err)
		return
	}
	v := gin.H{"version": newPromptView(a, pv.Version, pv.Content), "files": list}
	body, err := json.Marshal(v)
	if err != nil {
		c.JSON(http.StatusOK, v)
		return
	}
	s.lives.store(key, liveBody{pv, body})
	c.Data(http.StatusOK, jsonMediaType, body)
}

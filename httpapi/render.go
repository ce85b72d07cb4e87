package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
	"github.com/quire/quire/render"
)

// renderRequest renders a prompt version: the live one unless version is
// given, with a payload's variables under the request's.
type renderRequest struct {
	Variables json.RawMessage `json:"variables"`
	Version   *int            `json:"version"`
	PayloadID string          `json:"payload_id"`
	Label     string          `json:"label"`
}

type renderResponse struct {
	PromptID    string          `json:"prompt_id"`
	Version     int             `json:"version"`
	Commit      string          `json:"commit"`
	Rendered    *string         `json:"rendered,omitempty"`
	Messages    []quire.Message `json:"messages,omitempty"`
	Model       string          `json:"model"`
	ModelParams json.RawMessage `json:"model_params"`
	// Partials are the prompts the render included; always a list.
	Partials []app.PartialUse `json:"partials"`
}

func (s *Server) renderPrompt(c *gin.Context) {
	req, err := s.readRender(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	r, err := handle(c).Render(c.Request.Context(), req)
	s.writeRendered(c, &r, err)
}

// fastRender reads a render request in one pass over the body's JSON
// tokens, variables and all, without reflection: when it is an object of
// no keys but variables (an object or null), version (an integer or null),
// payload_id and label (strings or null), spelled exactly so. Anything else
// (other spellings, which the struct decoder matches without regard to
// case, wrong types, and all that jsontext refuses by default: a key given
// twice in an object, invalid UTF-8, an escaped lone surrogate, data after
// the object) goes the long way, which says what is wrong.
//
// jsontext (the encoding/json/v2 prototype) rather than encoding/json: it
// checks what checkJSON checks as it reads, and reading tokens from a
// reused decoder costs a render about half what decoding into any did.
func (s *Server) fastRender(b []byte) (app.RenderRequest, bool) {
	rd := s.decoders.Get().(*renderDecoder)
	defer s.decoders.Put(rd)
	// A bytes.Buffer is read in place, not copied into the decoder's own;
	// the pooled one holds b, so no Buffer is made per request.
	rd.in = *bytes.NewBuffer(b)
	defer func() { rd.in = bytes.Buffer{} }() // keeps no body alive in the pool
	dec := rd.dec
	dec.Reset(&rd.in)
	req, err := readRenderTokens(dec)
	if err != nil {
		return app.RenderRequest{}, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return app.RenderRequest{}, false
	}
	return req, true
}

// renderDecoder is fastRender's reused decoder and the buffer it reads.
type renderDecoder struct {
	dec *jsontext.Decoder
	in  bytes.Buffer
}

// errLongWay stops fastRender on what only the long way can answer.
var errLongWay = errors.New("render request needs the struct decoder")

func readRenderTokens(dec *jsontext.Decoder) (app.RenderRequest, error) {
	var req app.RenderRequest
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '{' {
		return req, errLongWay
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return req, err
		}
		key := name.String()
		v, err := readJSONValue(dec)
		if err != nil {
			return req, err
		}
		ok := v == nil // null is as good as absent, for a known key
		switch key {
		case "variables":
			if m, isMap := v.(map[string]any); isMap {
				req.Vars, ok = render.VarsOf(m), true
			}
		case "version":
			if n, isNum := v.(json.Number); isNum {
				i, err := strconv.Atoi(string(n))
				req.Version, ok = &i, err == nil
			}
		case "payload_id":
			if id, isStr := v.(string); isStr {
				req.PayloadID, ok = id, true
			}
		case "label":
			if l, isStr := v.(string); isStr {
				req.Label, ok = l, true
			}
		default:
			ok = false
		}
		if !ok {
			return req, errLongWay
		}
	}
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '}' {
		return req, errLongWay
	}
	if req.Vars == nil {
		req.Vars = render.Vars{}
	}
	return req, nil
}

// readJSONValue reads the next value as encoding/json with UseNumber
// decodes it into any.
func readJSONValue(dec *jsontext.Decoder) (any, error) {
	t, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch t.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return t.Bool(), nil
	case '"':
		return t.String(), nil
	case '0':
		return json.Number(t.String()), nil
	case '{':
		m := map[string]any{}
		for dec.PeekKind() == '"' {
			k, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			if m[k.String()], err = readJSONValue(dec); err != nil {
				return nil, err
			}
		}
		_, err := dec.ReadToken()
		return m, err
	case '[':
		l := []any{}
		for dec.PeekKind() != ']' && dec.PeekKind() != 0 {
			v, err := readJSONValue(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.ReadToken()
		return l, err
	}
	return nil, errLongWay
}

// readRender reads a render request. A body within the variables limit is
// decoded once, variables and all; any other, or one that fails, goes the
// long way (renderRequest, then app.DecodeVariables), which says what is
// wrong.
func (s *Server) readRender(c *gin.Context) (app.RenderRequest, error) {
	if c.Request.ContentLength == 0 {
		return app.RenderRequest{Vars: render.Vars{}}, nil
	}
	b, err := s.readBody(c)
	if err != nil {
		return app.RenderRequest{}, err
	}
	if int64(len(b)) <= s.limits.MaxVariables {
		if req, ok := s.fastRender(b); ok {
			return req, nil
		}
	}
	var req renderRequest
	if err := decodeJSON(b, &req, false); err != nil {
		return app.RenderRequest{}, err
	}
	vars, err := s.app.DecodeVariables(req.Variables, false)
	return app.RenderRequest{Vars: vars, Version: req.Version, PayloadID: req.PayloadID, Label: req.Label}, err
}

// writeRendered answers a render, with its entity tag.
func (s *Server) writeRendered(c *gin.Context, r *app.Rendered, err error) {
	if err != nil {
		s.fail(c, err)
		return
	}
	s.writeRender(c, &renderResponse{
		PromptID: r.PromptID, Version: r.Version, Commit: r.Commit, Rendered: r.Text,
		Messages: r.Messages, Model: r.Model, ModelParams: r.ModelParams, Partials: r.Partials,
	}, r.ETag)
}

func (s *Server) purgePromptCache(c *gin.Context) {
	h := handle(c)
	if err := h.PurgePromptCache(c.Request.Context()); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"purged": h.Asset.ID})
}

func (s *Server) purgeAllCache(c *gin.Context) {
	if err := s.app.PurgeAllCache(c.Request.Context(), principal(c)); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"purged": "all"})
}

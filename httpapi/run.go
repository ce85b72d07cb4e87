package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// runRequest runs a prompt version: its render's variables and payload,
// as render takes them, and the model or provider to use instead of the
// version's config.json.
type runRequest struct {
	Variables json.RawMessage `json:"variables"`
	PayloadID string          `json:"payload_id"`
	Model     string          `json:"model"`
	Provider  string          `json:"provider"`
}

// maxRunName bounds model and provider names: long enough for any
// provider's model id, short enough to never be a body.
const maxRunName = 256

// runPrompt renders version {version} (a number, "live" or a label) and
// sends it to a model (app.RunPrompt).
func (s *Server) runPrompt(c *gin.Context) {
	ref, err := app.ParseVersionRef(c.Param("version"))
	if err != nil {
		s.fail(c, err)
		return
	}
	req, err := s.readRun(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	run, err := handle(c).RunPrompt(c.Request.Context(), ref, req)
	s.respond(c, http.StatusOK, "run", run, err)
}

// readRun reads a run request; no body is a run with no variables.
func (s *Server) readRun(c *gin.Context) (app.RunRequest, error) {
	var req runRequest
	if c.Request.ContentLength != 0 {
		b, err := s.readBody(c)
		if err != nil {
			return app.RunRequest{}, err
		}
		if len(b) > 0 {
			if err := decodeJSON(b, &req, false); err != nil {
				return app.RunRequest{}, err
			}
		}
	}
	for field, v := range map[string]string{"model": req.Model, "provider": req.Provider} {
		if len(v) > maxRunName {
			return app.RunRequest{}, quire.Errorf(quire.EINVALID, "%s is %d bytes; the limit is %d", field, len(v), maxRunName).WithDetail("field", field)
		}
	}
	vars, err := s.app.DecodeVariables(req.Variables, false)
	if err != nil {
		return app.RunRequest{}, err
	}
	return app.RunRequest{Vars: vars, PayloadID: req.PayloadID, Model: req.Model, Provider: req.Provider}, nil
}

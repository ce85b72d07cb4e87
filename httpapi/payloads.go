package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// payloadRequest creates (SPEC endpoint 4) or replaces a payload.
type payloadRequest struct {
	Variables json.RawMessage `json:"variables" openapi:"required"`
	Name      *string         `json:"name"`
	// Assertions check a model's output in evaluations (docs/evaluations.md).
	Assertions []quire.Assertion `json:"assertions"`
}

// readPayload decodes a payload request; app checks it.
func (s *Server) readPayload(c *gin.Context) (app.PayloadInput, error) {
	var req payloadRequest
	if err := s.decode(c, &req); err != nil {
		return app.PayloadInput{}, err
	}
	in := app.PayloadInput{Variables: req.Variables, Name: req.Name}
	if req.Assertions != nil {
		b, err := json.Marshal(req.Assertions)
		if err != nil {
			return app.PayloadInput{}, err
		}
		in.Assertions = b
	}
	return in, nil
}

func (s *Server) createPayload(c *gin.Context) {
	in, err := s.readPayload(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	p, err := handle(c).CreatePayload(c.Request.Context(), in)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Location", "/v1/prompts/"+p.PromptID+"/payloads/"+p.ID)
	c.JSON(http.StatusCreated, gin.H{"payload": p})
}

func (s *Server) listPayloads(c *gin.Context) {
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	pg, next, err := handle(c).Payloads(c.Request.Context(), opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"payloads": pg, "next_cursor": next})
}

func (s *Server) getPayload(c *gin.Context) {
	p, err := handle(c).Payload(c.Request.Context(), c.Param("payloadID"))
	s.respond(c, http.StatusOK, "payload", p, err)
}

// updatePayload replaces a payload's variables, and its name when given.
func (s *Server) updatePayload(c *gin.Context) {
	in, err := s.readPayload(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	p, err := handle(c).UpdatePayload(c.Request.Context(), c.Param("payloadID"), in)
	s.respond(c, http.StatusOK, "payload", p, err)
}

func (s *Server) deletePayload(c *gin.Context) {
	if err := handle(c).DeletePayload(c.Request.Context(), c.Param("payloadID")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

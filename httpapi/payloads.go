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
	Variables json.RawMessage `json:"variables"`
	Name      *string         `json:"name"`
}

// readPayload decodes a payload request; app checks it.
func (s *Server) readPayload(c *gin.Context) (*app.PayloadInput, error) {
	var req payloadRequest
	if err := s.decode(c, &req); err != nil {
		return nil, err
	}
	return &app.PayloadInput{Variables: req.Variables, Name: req.Name}, nil
}

func (s *Server) createPayload(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessWrite)
	if err != nil {
		s.fail(c, err)
		return
	}
	in, err := s.readPayload(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.app.CreatePayload(c.Request.Context(), principal(c), a, in)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Location", "/v1/prompts/"+a.ID+"/payloads/"+p.ID)
	c.JSON(http.StatusCreated, gin.H{"payload": p})
}

func (s *Server) listPayloads(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	all, err := s.app.Payloads(c.Request.Context(), a)
	if err != nil {
		s.fail(c, err)
		return
	}
	pg, next, err := paginate(all, opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"payloads": pg, "next_cursor": next})
}

func (s *Server) getPayload(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.app.Payload(c.Request.Context(), a, c.Param("payloadID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"payload": p})
}

// updatePayload replaces a payload's variables, and its name when given.
// The payload is read before the body, so a missing one is 404 whatever
// the body says.
func (s *Server) updatePayload(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessWrite)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	p, err := s.app.Payload(ctx, a, c.Param("payloadID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	in, err := s.readPayload(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.app.UpdatePayload(ctx, principal(c), a, p, in); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"payload": p})
}

func (s *Server) deletePayload(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessWrite)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.app.DeletePayload(c.Request.Context(), principal(c), a, c.Param("payloadID")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

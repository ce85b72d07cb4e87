package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// payloadRequest creates (SPEC endpoint 4) or replaces a payload.
type payloadRequest struct {
	Variables json.RawMessage `json:"variables"`
	Name      *string         `json:"name"`
}

// parse checks the request into p: variables required, a JSON object of
// at most MaxVariables bytes; name optional.
func (s *Server) parsePayload(c *gin.Context, p *quire.Payload) error {
	var req payloadRequest
	if err := s.decode(c, &req); err != nil {
		return err
	}
	if _, err := s.decodeVariables(req.Variables, true); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, req.Variables); err != nil {
		return quire.Errorf(quire.EINVALID, "variables must be a JSON object")
	}
	p.Variables = buf.Bytes()
	if req.Name != nil {
		if err := valid.Text("name", *req.Name, s.limits.MaxName); err != nil {
			return err
		}
		p.Name = *req.Name
	}
	return nil
}

func (s *Server) createPayload(c *gin.Context) {
	a, err := s.asset(c, quire.KindPrompt, quire.AccessWrite)
	if err != nil {
		s.fail(c, err)
		return
	}
	p := &quire.Payload{CreatedBy: principal(c).User.ID}
	if err := s.parsePayload(c, p); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.payloads.CreatePayload(c.Request.Context(), principal(c).Actor(), a, p); err != nil {
		s.fail(c, err)
		return
	}
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
	all, err := s.payloads.Payloads(c.Request.Context(), a)
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

// payloadParam resolves {id} and {payloadID}; a payload id that is not a
// UUID is simply not found.
func (s *Server) payloadParam(c *gin.Context, want quire.Access) (*quire.Asset, string, error) {
	a, err := s.asset(c, quire.KindPrompt, want)
	if err != nil {
		return nil, "", err
	}
	id := c.Param("payloadID")
	if uuid.Validate(id) != nil {
		return nil, "", quire.Errorf(quire.ENOTFOUND, "payload not found")
	}
	return a, id, nil
}

func (s *Server) getPayload(c *gin.Context) {
	a, id, err := s.payloadParam(c, quire.AccessRead)
	if err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.payloads.Payload(c.Request.Context(), a, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"payload": p})
}

// updatePayload replaces a payload's variables, and its name when given.
func (s *Server) updatePayload(c *gin.Context) {
	a, id, err := s.payloadParam(c, quire.AccessWrite)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	p, err := s.payloads.Payload(ctx, a, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.parsePayload(c, p); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.payloads.UpdatePayload(ctx, principal(c).Actor(), a, p); err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"payload": p})
}

func (s *Server) deletePayload(c *gin.Context) {
	a, id, err := s.payloadParam(c, quire.AccessWrite)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := s.payloads.DeletePayload(c.Request.Context(), principal(c).Actor(), a, id); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

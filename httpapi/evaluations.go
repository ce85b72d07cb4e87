package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/quire/quire"
	"github.com/quire/quire/app"
)

// evaluationRequest starts an evaluation of a prompt version.
type evaluationRequest struct {
	// Against is a version number, "live" or "base"; none compares with
	// nothing.
	Against  json.RawMessage `json:"against"`
	Payloads []string        `json:"payloads"`
	Repeat   int             `json:"repeat"`
	Fresh    bool            `json:"fresh"`
}

// startEvaluation evaluates version {version} (a number, "live" or a
// label) and answers 202 with the evaluation, queued
// (app.StartEvaluation).
func (s *Server) startEvaluation(c *gin.Context) {
	ref, err := app.ParseVersionRef(c.Param("version"))
	if err != nil {
		s.fail(c, err)
		return
	}
	req, err := s.readEvaluation(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	e, err := handle(c).StartEvaluation(c.Request.Context(), ref, req)
	if err == nil {
		c.Header("Location", "/v1/prompts/"+e.PromptID+"/versions/"+strconv.Itoa(e.Version)+"/evaluations/"+e.ID)
	}
	s.respond(c, http.StatusAccepted, "evaluation", e, err)
}

// readEvaluation reads an evaluation request; no body evaluates every
// payload once, against nothing.
func (s *Server) readEvaluation(c *gin.Context) (app.EvaluationRequest, error) {
	var req evaluationRequest
	if c.Request.ContentLength != 0 {
		b, err := s.readBody(c)
		if err != nil {
			return app.EvaluationRequest{}, err
		}
		if len(b) > 0 {
			if err := decodeJSON(b, &req, false); err != nil {
				return app.EvaluationRequest{}, err
			}
		}
	}
	out := app.EvaluationRequest{Payloads: req.Payloads, Repeat: req.Repeat, Fresh: req.Fresh}
	if a := bytes.TrimSpace(req.Against); len(a) > 0 && string(a) != "null" {
		var n int
		if err := json.Unmarshal(a, &out.Against); err != nil {
			if err := json.Unmarshal(a, &n); err != nil {
				return out, quire.Errorf(quire.EINVALID, `against must be a version number, "live" or "base"`).WithDetail("field", "against")
			}
			out.Against = strconv.Itoa(n)
		}
		if out.Against != "live" && out.Against != "base" {
			if n, err := strconv.Atoi(out.Against); err != nil || n <= 0 {
				return out, quire.Errorf(quire.EINVALID, `against must be a version number, "live" or "base"`).WithDetail("field", "against")
			}
		}
	}
	if req.Repeat < 0 || req.Repeat > app.MaxEvalRepeat {
		return out, quire.Errorf(quire.EINVALID, "repeat must be from 1 to %d", app.MaxEvalRepeat).WithDetail("field", "repeat")
	}
	if len(req.Payloads) > app.MaxEvalCases {
		return out, quire.Errorf(quire.EINVALID, "payloads lists at most %d ids", app.MaxEvalCases).WithDetail("field", "payloads")
	}
	return out, nil
}

// getEvaluation answers an evaluation with its cases done.
func (s *Server) getEvaluation(c *gin.Context) {
	ref, err := app.ParseVersionRef(c.Param("version"))
	if err != nil {
		s.fail(c, err)
		return
	}
	v, err := handle(c).Evaluation(c.Request.Context(), ref, c.Param("evaluationID"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// listEvaluations answers a page of a prompt's evaluations, newest first.
func (s *Server) listEvaluations(c *gin.Context) {
	ref, err := app.ParseVersionRef(c.Param("version"))
	if err != nil {
		s.fail(c, err)
		return
	}
	opts, err := listOptions(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	pg, next, err := handle(c).Evaluations(c.Request.Context(), ref, opts)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"evaluations": pg, "next_cursor": next})
}

// cancelEvaluation stops an evaluation; the cases done stay.
func (s *Server) cancelEvaluation(c *gin.Context) {
	ref, err := app.ParseVersionRef(c.Param("version"))
	if err != nil {
		s.fail(c, err)
		return
	}
	e, err := handle(c).CancelEvaluation(c.Request.Context(), ref, c.Param("evaluationID"))
	s.respond(c, http.StatusOK, "evaluation", e, err)
}

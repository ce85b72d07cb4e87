package httpapi

import (
	"bytes"

	"github.com/gin-gonic/gin"
)

// decodeEmpty checks the body of an action that takes no fields (publish,
// promote, archive): none at all (or only white space) is fine, as is any
// JSON object, but a body that is not JSON is refused like on every other
// endpoint, not ignored.
func (s *Server) decodeEmpty(c *gin.Context) error {
	b, err := s.readBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var req struct{}
	return decodeJSON(b, &req, false)
}

// bodylessAt is the number param reads from the path of such an action
// (a version, a review), once its body is checked by decodeEmpty.
func (s *Server) bodylessAt(c *gin.Context, param func(*gin.Context) (int, error)) (int, error) {
	n, err := param(c)
	if err != nil {
		return 0, err
	}
	return n, s.decodeEmpty(c)
}

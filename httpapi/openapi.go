package httpapi

import "github.com/gin-gonic/gin"

func (s *Server) serveOpenAPI(c *gin.Context) {}

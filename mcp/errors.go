package mcp

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/quire/quire"
)

// Error codes of quire's own conditions, in JSON-RPC's range for server
// errors (-32000 to -32099): what httpapi answers with 401, 403, 409, 429
// and 503.
const (
	CodeUnauthorized = -32001
	CodeForbidden    = -32003
	CodeConflict     = -32009
	CodeRateLimited  = -32029
	CodeUnavailable  = -32050
)

// rpcError turns a quire error into a JSON-RPC error: the one table MCP
// answers by, as httpapi/errors.go is HTTP's. Bad input, an unknown name
// (JSON-RPC's "invalid params", which MCP uses for an unknown prompt,
// resource or skill) and a render missing variables are -32602; data
// carries quire's code and details (e.g. "missing").
func rpcError(err error) error {
	code := quire.ErrorCode(err)
	var c int64
	switch code {
	case quire.EINVALID, quire.ENOTFOUND, quire.EUNPROCESSABLE, quire.ETOOLARGE, quire.EPRECONDITION:
		c = jsonrpc.CodeInvalidParams
	case quire.EUNAUTHORIZED:
		c = CodeUnauthorized
	case quire.EFORBIDDEN:
		c = CodeForbidden
	case quire.ECONFLICT:
		c = CodeConflict
	case quire.ERATELIMIT:
		c = CodeRateLimited
	case quire.EUNAVAILABLE, quire.ENOSPACE:
		c = CodeUnavailable
	default:
		c = jsonrpc.CodeInternalError
	}
	data := map[string]any{"code": code}
	for k, v := range quire.ErrorDetails(err) {
		data[k] = v
	}
	b, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: c, Message: quire.ErrorMessage(err), Data: b}
}

// fail is rpcError that logs what the client is not told: an internal
// error's cause.
func (s *Server) fail(err error) error {
	if quire.ErrorCode(err) == quire.EINTERNAL {
		s.log.Error("mcp: request failed", "error", err.Error())
	}
	return rpcError(err)
}

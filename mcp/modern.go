package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The adapter for protocol 2026-07-28 where the Go SDK (v1.8.0) falls
// short of it. It is thin and drops out method by method as the SDK
// catches up (docs/mcp.md, "Protocol 2026-07-28"):
//
//   - the revision requires resultType on every result; the SDK sets it
//     on the results that embed its completeResultWithType but not on
//     prompts/get's and resources/read's (their resultType field is
//     unexported and left empty, and omitted on the wire), so modernResults
//     wraps those two results, for 2026-07-28 requests only, in a type
//     that writes resultType "complete".

// modernVersion reports whether req is a 2026-07-28 (or later) request:
// it names its version in _meta, as only those do.
func modernVersion(req sdk.Request) bool {
	p := req.GetParams()
	// A request with no params has a nil pointer of its params type.
	if v := reflect.ValueOf(p); p == nil || v.Kind() == reflect.Pointer && v.IsNil() {
		return false
	}
	m := p.GetMeta()
	v, _ := m[sdk.MetaKeyProtocolVersion].(string)
	return v >= sessionlessSince
}

// modernResults is a receiving middleware (the outermost, on /mcp's
// server and on the stdio bridge's) that completes the results of a
// 2026-07-28 request the SDK leaves without resultType.
func modernResults(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || !modernVersion(req) {
			return res, err
		}
		switch r := res.(type) {
		case *sdk.GetPromptResult:
			if !r.NeedsInput() {
				return completePrompt{r}, nil
			}
		case *sdk.ReadResourceResult:
			if !r.NeedsInput() {
				return completeRead{r}, nil
			}
		}
		return res, nil
	}
}

// completePrompt is a prompts/get result written with resultType
// "complete".
type completePrompt struct{ *sdk.GetPromptResult }

func (c completePrompt) MarshalJSON() ([]byte, error) { return withComplete(c.GetPromptResult) }

// completeRead is a resources/read result written with resultType
// "complete".
type completeRead struct{ *sdk.ReadResourceResult }

func (c completeRead) MarshalJSON() ([]byte, error) { return withComplete(c.ReadResourceResult) }

// withComplete encodes v, a JSON object without resultType, with
// resultType "complete" as its first member.
func withComplete(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("encode result: not an object: %.40s", b)
	}
	var out bytes.Buffer
	out.Grow(len(b) + 26)
	out.WriteString(`{"resultType":"complete"`)
	if rest := bytes.TrimSpace(b[1:]); len(rest) > 0 && rest[0] != '}' {
		out.WriteByte(',')
	}
	out.Write(b[1:])
	return out.Bytes(), nil
}

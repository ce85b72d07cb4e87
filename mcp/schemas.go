package mcp

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// portableSchema is the JSON Schema of T as the SDK would infer it, with
// every nullable type (`type: ["null", X]`, the SDK's schema for a Go
// slice, map or pointer) written as the single type X: a client that maps
// tool schemas onto a single-type dialect (the OpenAPI subset of some
// model providers) would reject or loosen the union (the Inspector's
// --strict portability check). The tools' answers never hold a null
// where the schema says X: their slices are made, their pointers omitted
// when nil (omitempty).
func portableSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: the schema of %T: %v", *new(T), err)) // a programming error, found by any test
	}
	dropNull(s)
	return s
}

// dropNull rewrites s and the schemas below it.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if i := slices.Index(s.Types, "null"); i >= 0 {
		rest := slices.Delete(slices.Clone(s.Types), i, i+1)
		if len(rest) == 1 {
			s.Type, s.Types = rest[0], nil
		} else {
			s.Types = rest
		}
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	for _, d := range s.Defs {
		dropNull(d)
	}
	dropNull(s.Items)
	dropNull(s.AdditionalProperties)
}

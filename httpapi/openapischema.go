package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/quire/quire"
)

// What openapi3gen cannot read from a Go type alone, said once here (and
// in struct tags) rather than in schema text: which fields are required,
// formats, enumerations, and that request bodies take no other fields.
//
//   - A response field is required unless its json tag says omitempty:
//     the server always sends it (maybe as null, for a pointer).
//   - A request field is required when tagged openapi:"required"; every
//     request body is additionalProperties: false, as decode refuses
//     unknown fields.
//   - Strings named id or *_id are uuids (but a commit's or an activity
//     entry's id, a git hash,
//     and request_id); email fields are emails (but a commit's, which
//     git does not check); quire's enumerated string types list their
//     values.
//   - json.RawMessage and any are any JSON value.

// enums are the values of quire's enumerated string types.
var enums = map[reflect.Type][]any{
	reflect.TypeFor[quire.Code]():         anys(quire.Codes),
	reflect.TypeFor[quire.Scope]():        {quire.ScopeRead, quire.ScopeWrite, quire.ScopeAdmin},
	reflect.TypeFor[quire.ProjectRole]():  {quire.ProjectViewer, quire.ProjectEditor, quire.ProjectOwner},
	reflect.TypeFor[quire.UserRole]():     {quire.RoleAdmin, quire.RoleMember},
	reflect.TypeFor[quire.VersionState](): {quire.StateDraft, quire.StatePublished, quire.StateArchived},
	reflect.TypeFor[quire.Kind]():         {quire.KindSkill, quire.KindPrompt},
	reflect.TypeFor[fileMode]():           {"100644", "100755"},
	reflect.TypeFor[artifactType]():       {artifactSkillMD, artifactArchive},
	reflect.TypeFor[quire.NotCounted]():   {quire.NotCountedSelfApproval, quire.NotCountedStale, quire.NotCountedNoWriteAccess},
}

func anys[T any](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// notUUID and notEmail are the types whose id or email is free text (an
// event's actor is "quire" when the server acted).
var (
	notUUID  = map[reflect.Type]bool{reflect.TypeFor[quire.Commit](): true, reflect.TypeFor[quire.Activity](): true, reflect.TypeFor[quire.EventActor](): true}
	notEmail = map[reflect.Type]bool{reflect.TypeFor[quire.Commit](): true, reflect.TypeFor[quire.Activity](): true}
)

var (
	rawJSON   = reflect.TypeFor[json.RawMessage]()
	marshaler = reflect.TypeFor[json.Marshaler]()
)

// customizeSchema is openapi3gen's SchemaCustomizer; requests are the
// request body types.
func customizeSchema(requests map[reflect.Type]bool) func(string, reflect.Type, reflect.StructTag, *openapi3.Schema) error {
	return func(_ string, t reflect.Type, _ reflect.StructTag, s *openapi3.Schema) error {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == rawJSON || t.Kind() == reflect.Interface {
			nullable := s.Nullable
			*s = openapi3.Schema{Nullable: nullable}
			return nil
		}
		if vs, ok := enums[t]; ok {
			s.Enum = vs
			if s.Nullable {
				s.Enum = append(s.Enum, nil)
			}
			return nil
		}
		if t.Kind() != reflect.Struct || s.Properties == nil {
			return nil
		}
		if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
			// Its own encoding (quire.Message): the fields say nothing
			// of which are sent.
			s.Required = nil
			return nil
		}
		s.Required = nil
		for _, f := range jsonFields(t) {
			p := s.Properties[f.name]
			if p == nil {
				continue
			}
			if requests[t] {
				if f.required {
					s.Required = append(s.Required, f.name)
					if p.Value != nil {
						p.Value.Nullable = false // a pointer only to tell absent from empty
					}
				}
			} else if !f.omitempty {
				s.Required = append(s.Required, f.name)
			}
			if p.Value == nil || p.Value.Type == nil || !p.Value.Type.Includes("string") {
				continue
			}
			switch {
			case (f.name == "id" || strings.HasSuffix(f.name, "_id")) && f.name != "request_id" && !notUUID[t]:
				p.Value.Format = "uuid"
			case f.name == "email" && !notEmail[t] && !requests[t]:
				p.Value.Format = "email"
			}
		}
		if requests[t] {
			s.AdditionalProperties = openapi3.AdditionalProperties{Has: ptr(false)}
		}
		return nil
	}
}

type jsonField struct {
	name                string
	omitempty, required bool
}

// jsonFields are the fields t encodes as JSON, those of embedded structs
// included, as encoding/json reads the tags.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{
			name:      name,
			omitempty: strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,"),
			required:  f.Tag.Get("openapi") == "required",
		})
	}
	return out
}

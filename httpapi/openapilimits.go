package httpapi

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/quire/quire"
	"github.com/quire/quire/valid"
)

// sizeRule is what the server enforces on one request field, in the
// unit its rule counts, taken from the constants the rules use (valid,
// quire.Limits) and never written twice.
type sizeRule struct {
	minChars, maxChars int   // characters (valid.Name, valid.Text): minLength, maxLength
	minBytes, maxBytes int64 // bytes of UTF-8: x-min-bytes, x-max-bytes (and maxLength, which they imply)
	minItems, maxItems int
	maximum            int // an integer's, with minimum 0
	pattern            string
	status             int // the answer to a value past the rule
}

// requestLimits are the size rules of request fields, by schema and
// field ("review_policy.protected_labels"; "[]" for an array's items),
// for a server with limits l. The document states them for
// quire.DefaultLimits; a server run with other limits enforces those.
// TestRequestLimits sends each field at and past what the document says.
func requestLimits(l quire.Limits) map[string]map[string]sizeRule {
	var (
		name        = sizeRule{minChars: 1, maxChars: l.MaxName, status: 400}
		description = sizeRule{maxChars: valid.MaxDescription(l), status: 400}
		// "" (on create): derive the slug from the name.
		slug   = sizeRule{maxChars: valid.MaxSlug, pattern: "^(" + strings.Trim(valid.SlugPattern, "^$") + ")?$", status: 400}
		review = sizeRule{maxBytes: valid.MaxCommentBody, status: 413}
		path   = sizeRule{maxBytes: valid.MaxPathBytes, status: 400}
		vars   = sizeRule{maxBytes: l.MaxVariables, status: 413} // compact JSON
		meta   = map[string]sizeRule{"name": name, "slug": slug, "description": description}
		user   = map[string]sizeRule{
			"email":    {maxBytes: valid.MaxEmail, status: 400},
			"name":     name,
			"password": {minBytes: valid.MinPassword, maxBytes: valid.MaxPassword, status: 400},
		}
		webhook = map[string]sizeRule{
			"url":         {maxBytes: valid.MaxURL, status: 422},
			"events":      {minItems: 1, status: 422},
			"assets":      {maxItems: valid.MaxWebhookAssets, status: 422},
			"description": {maxBytes: valid.MaxWebhookDescription, status: 422},
		}
	)
	project := map[string]sizeRule{
		"review_policy.required_approvals": {maximum: valid.MaxRequiredApprovals, status: 422},
		"review_policy.protected_labels":   {maxItems: valid.MaxProtectedLabels, status: 422},
		"review_policy.protected_labels[]": {maxChars: valid.MaxLabel, pattern: valid.LabelPattern, status: 422},
	}
	for f, r := range meta {
		project[f] = r
	}
	return map[string]map[string]sizeRule{
		"MetaRequest":       meta,
		"MetaCreateRequest": meta,
		"ProjectRequest":    project,
		"UserRequest":       user,
		"UserCreateRequest": user,
		"LoginRequest":      {"email": {minBytes: 1, status: 400}, "password": {minBytes: 1, status: 400}},
		"KeyRequest":        {"name": name},
		"FileRequest":       {"file_path": path, "content": {maxBytes: l.MaxFile, status: 413}, "message": description},
		"PromptVersionRequest": {"template": {maxBytes: l.MaxFile, status: 413}, "messages": {minItems: 1, maxItems: quire.MaxPromptMessages, status: 413}, "model": {maxBytes: int64(l.MaxName), status: 400},
			// "": no provider of its own, the server's default.
			"provider": {maxChars: valid.MaxProvider, pattern: "^(" + strings.Trim(valid.ProviderPattern, "^$") + ")?$", status: 400}},
		"RenderRequest":        {"variables": vars},
		"RunRequest":           {"variables": vars, "model": {maxBytes: maxRunName, status: 400}, "provider": {maxBytes: maxRunName, status: 400}},
		"PayloadRequest":       {"variables": vars, "name": sizeRule{maxChars: l.MaxName, status: 400}},
		"ReviewRequest":        {"title": {minBytes: 1, maxBytes: int64(valid.MaxReviewTitle(l)), status: 413}, "description": review},
		"CommentRequest":       {"body": review, "path": path},
		"CommentPatchRequest":  {"body": review},
		"VerdictRequest":       {"body": review},
		"WebhookRequest":       webhook,
		"WebhookCreateRequest": webhook,
	}
}

// applyRequestLimits writes requestLimits(quire.DefaultLimits()) into
// the generated request schemas, their nested objects closed.
func applyRequestLimits(schemas openapi3.Schemas) error {
	for name, sr := range schemas {
		if strings.HasSuffix(name, "Request") && sr.Value != nil {
			closeNested(sr.Value, true)
		}
	}
	for name, fields := range requestLimits(quire.DefaultLimits()) {
		sr := schemas[name]
		if sr == nil || sr.Value == nil {
			continue // a schema no route names
		}
		for f, r := range fields {
			s := schemaAt(sr.Value, f)
			if s == nil {
				return fmt.Errorf("openapi: request limit on %s.%s, which the schema has not", name, f)
			}
			r.apply(s)
		}
	}
	return nil
}

// schemaAt is the schema of the field at path in s.
func schemaAt(s *openapi3.Schema, path string) *openapi3.Schema {
	for _, part := range strings.Split(path, ".") {
		items := strings.HasSuffix(part, "[]")
		p := s.Properties[strings.TrimSuffix(part, "[]")]
		if p == nil || p.Value == nil {
			return nil
		}
		s = p.Value
		if items {
			if s.Items == nil || s.Items.Value == nil {
				return nil
			}
			s = s.Items.Value
		}
	}
	return s
}

func (r sizeRule) apply(s *openapi3.Schema) {
	if r.minChars > 0 {
		s.MinLength = uint64(r.minChars)
	}
	if r.maxChars > 0 {
		s.MaxLength = ptr(uint64(r.maxChars))
	}
	if r.minBytes > 0 || r.maxBytes > 0 {
		if s.Extensions == nil {
			s.Extensions = map[string]any{}
		}
		var unit string
		if s.Type != nil && s.Type.Includes("string") {
			unit = "bytes of UTF-8"
			// A string of n characters is at least n bytes.
			if r.maxBytes > 0 {
				s.MaxLength = ptr(uint64(r.maxBytes))
			}
			if r.minBytes > 0 {
				s.MinLength = uint64(r.minBytes)
			}
		} else {
			unit = "bytes of compact JSON"
		}
		if r.maxBytes > 0 {
			s.Extensions["x-max-bytes"] = r.maxBytes
			s.Description = strings.TrimSpace(s.Description + fmt.Sprintf(" At most %d %s.", r.maxBytes, unit))
		}
		if r.minBytes > 1 {
			s.Extensions["x-min-bytes"] = r.minBytes
			s.Description = strings.TrimSpace(s.Description + fmt.Sprintf(" At least %d %s.", r.minBytes, unit))
		}
	}
	if r.minItems > 0 {
		s.MinItems = uint64(r.minItems)
	}
	if r.maxItems > 0 {
		s.MaxItems = ptr(uint64(r.maxItems))
	}
	if r.maximum > 0 {
		s.Min, s.Max = ptr(0.0), ptr(float64(r.maximum))
	}
	if r.pattern != "" {
		s.Pattern = r.pattern
	}
}

// closeNested makes the objects inside a request body's schema what the
// decoder reads: no other fields (it refuses unknown ones at any depth),
// and none required (an absent field is its zero value). openapi3gen
// generated them as response types, which list every field they send.
func closeNested(s *openapi3.Schema, top bool) {
	if s == nil {
		return
	}
	if !top && s.Type != nil && s.Type.Includes("object") && len(s.Properties) > 0 {
		s.Required = nil
		s.AdditionalProperties = openapi3.AdditionalProperties{Has: ptr(false)}
	}
	for _, p := range s.Properties {
		if p.Ref == "" {
			closeNested(p.Value, false)
		}
	}
	if s.Items != nil && s.Items.Ref == "" {
		closeNested(s.Items.Value, false)
	}
}

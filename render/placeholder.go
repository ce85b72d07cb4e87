package render

import "github.com/quire/quire"

// PlaceholderMessages checks that v, the value a chat prompt's
// placeholder name is given, is a list of {role, content} messages, and
// returns them: the one rule the server and the SDK's local render share.
func PlaceholderMessages(name string, v any) ([]quire.Message, error) {
	bad := func(format string, args ...any) error {
		return quire.Errorf(quire.EUNPROCESSABLE, "variables.%s must be a list of {role, content} messages: "+format, append([]any{name}, args...)...).
			WithDetail("placeholder", name)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, bad("it is not a list")
	}
	out := make([]quire.Message, 0, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, bad("item %d is not an object", i)
		}
		role, ok1 := m["role"].(string)
		content, ok2 := m["content"].(string)
		if !ok1 || !ok2 || role == "" || len(m) != 2 {
			return nil, bad("item %d must hold exactly a string role and a string content", i)
		}
		out = append(out, quire.Message{Role: role, Content: content})
	}
	return out, nil
}

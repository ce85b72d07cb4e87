package gitstore

import "context"

// observe reports one operation to Options.Observe (for metrics and
// traces). Use it with a named error result:
//
//	defer s.observe(ctx, quire.GitOpRead, "Files")(&err)
func (s *Store) observe(ctx context.Context, op, name string) func(*error) {
	_, done := s.opts.Observe.Observe(ctx, op, name)
	return func(err *error) { done(*err) }
}

package app

import (
	"strconv"

	"github.com/quire/quire"
)

// Page cuts the page o asks for out of all, a list held in memory; the
// cursor is the offset of the next page ("" after the last).
func Page[T any](all []T, o quire.ListOptions) ([]T, string, error) {
	off := 0
	if o.Cursor != "" {
		n, err := strconv.Atoi(o.Cursor)
		if err != nil || n < 0 {
			return nil, "", quire.Errorf(quire.EINVALID, "invalid cursor")
		}
		off = n
	}
	if off >= len(all) {
		return []T{}, "", nil
	}
	end := min(off+o.Limit, len(all))
	next := ""
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return all[off:end], next, nil
}

package app

// Input reads a use case's input from the request. A use case that
// authorizes the caller calls it only once the caller is authorized, so a
// caller who may not act learns nothing from how its request is formed
// (a malformed body of a forbidden request is still forbidden). A door
// decodes its request in it.
type Input[T any] func() (T, error)

package mcp

// SDKOnly returns o with the sessionless prompts/get fast path off: the
// SDK answers every request, for tests to compare the fast path with.
func SDKOnly(o Options) Options {
	o.sdkOnly = true
	return o
}

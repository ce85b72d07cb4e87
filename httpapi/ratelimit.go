package httpapi

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/quire/quire"
)

// CheckTrustedProxies splits a comma-separated list of addresses and CIDRs
// (quire serve --trusted-proxies) into Config.TrustedProxies, refusing
// anything else. "" is none.
func CheckTrustedProxies(list string) ([]string, error) {
	var out []string
	for p := range strings.SplitSeq(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return nil, fmt.Errorf("trusted proxy %q is not an address or a CIDR", p)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// retryAfterHeader is the Retry-After value of a rate-limited error, or "".
func retryAfterHeader(err error) string {
	if secs, ok := quire.ErrorDetails(err)["retry_after"].(int); ok {
		return strconv.Itoa(secs)
	}
	return ""
}

package httpapi

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
)

// blobID is the git blob id of content, so a client can match a file
// against what git shows without another request.
func blobID(content []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

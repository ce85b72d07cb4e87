package valid

import "github.com/quire/quire"

// Sizes of what clients send, named once: the rules here and in app
// check input against them, and the API document (httpapi's
// openapilimits.go) states the same numbers as maxLength and maxItems,
// so the two cannot drift. Sizes that follow a server's configured
// limits (quire.Limits) are functions of them.
const (
	// MaxEmail bounds an email address, in bytes (RFC 5321's path).
	MaxEmail = 254
	// MinPassword and MaxPassword bound a password, in bytes: bcrypt
	// reads no more than 72.
	MinPassword, MaxPassword = 8, 72
	// MaxSlug bounds a slug, in characters (SlugPattern says so too).
	MaxSlug = 63
	// MaxLabel bounds a label name, in characters (LabelPattern).
	MaxLabel = 32
	// MaxURL bounds a webhook's url, in bytes.
	MaxURL = 2048
	// MaxWebhookAssets bounds the assets a webhook is confined to.
	MaxWebhookAssets = 100
	// MaxWebhookDescription bounds a webhook's description, in bytes.
	MaxWebhookDescription = 1000
	// MaxProtectedLabels bounds a review policy's protected labels;
	// MaxRequiredApprovals its required approvals.
	MaxProtectedLabels   = 32
	MaxRequiredApprovals = 10
)

// MaxDescription bounds a description or a commit message, in
// characters.
func MaxDescription(l quire.Limits) int { return 10 * l.MaxName }

// MaxReviewTitle bounds a review's title, in bytes.
func MaxReviewTitle(l quire.Limits) int { return 4 * l.MaxName }

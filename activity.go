package quire

import "context"

// Activity is one entry of a project's activity feed: a change to one of
// its skills or prompts, or to its metadata in the system repository.
type Activity struct {
	Commit
	// Source is "skill" or "prompt" for a change in an asset's repository,
	// "metadata" for a change to the project or its assets' metadata.
	Source string `json:"source" enum:"skill,prompt,metadata"`
}

// ActivitySource is where an Activity entry comes from.
const SourceMetadata = "metadata"

// ActivityLog is the change feed of projects.
type ActivityLog interface {
	// Activity lists changes to project p and its assets, newest first.
	Activity(ctx context.Context, p *Project, assets []*Asset, opts ListOptions) ([]Activity, string, error)
}

package client

import (
	"context"

	"github.com/quire/quire"
)

// Evaluations (docs/evaluations.md): the server's shapes as they are.
type (
	Evaluation = quire.Evaluation
	EvalCase   = quire.EvalCase
	EvalSide   = quire.EvalSide
	Assertion  = quire.Assertion
)

// EvaluationInput starts an evaluation: Against is "" (nothing), a
// version number, "live" or "base"; no Payloads evaluates them all.
type EvaluationInput struct {
	Against  string   `json:"against,omitempty"`
	Payloads []string `json:"payloads,omitempty"`
	Repeat   int      `json:"repeat,omitempty"`
	Fresh    bool     `json:"fresh,omitempty"`
}

// EvaluationView is an evaluation with its cases done.
type EvaluationView struct {
	Evaluation *Evaluation `json:"evaluation"`
	Cases      []*EvalCase `json:"cases"`
}

func evalPath(ref, version string) string {
	return assetPath("prompts", ref) + p("/versions/", version, "/evaluations")
}

func projectEvalPath(project, slug, version string) string {
	return p("/v1/projects/", project, "/prompts/", slug, "/versions/", version, "/evaluations")
}

// StartEvaluation evaluates version (a number, "live" or a label name)
// of prompt ref in the background; the answer is the evaluation, queued.
func (c *Client) StartEvaluation(ctx context.Context, ref, version string, in EvaluationInput) (*Evaluation, error) {
	return unwrap[Evaluation](ctx, c, request{method: "POST", path: evalPath(ref, version), body: in}, "evaluation")
}

// StartProjectEvaluation is StartEvaluation with the prompt slug of project.
func (c *Client) StartProjectEvaluation(ctx context.Context, project, slug, version string, in EvaluationInput) (*Evaluation, error) {
	return unwrap[Evaluation](ctx, c, request{method: "POST", path: projectEvalPath(project, slug, version), body: in}, "evaluation")
}

// Evaluation reads an evaluation and its cases done.
func (c *Client) Evaluation(ctx context.Context, ref, version, id string) (*EvaluationView, error) {
	var v EvaluationView
	if err := c.do(ctx, request{method: "GET", path: evalPath(ref, version) + p("/", id)}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// ProjectEvaluation is Evaluation with the prompt slug of project.
func (c *Client) ProjectEvaluation(ctx context.Context, project, slug, version, id string) (*EvaluationView, error) {
	var v EvaluationView
	if err := c.do(ctx, request{method: "GET", path: projectEvalPath(project, slug, version) + p("/", id)}, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Evaluations lists a page of a version's evaluations, newest first.
func (c *Client) Evaluations(ctx context.Context, ref, version string, o ListOptions) (Page[Evaluation], error) {
	return list[Evaluation](ctx, c, evalPath(ref, version), "evaluations", listQuery(o))
}

// ProjectEvaluations is Evaluations with the prompt slug of project.
func (c *Client) ProjectEvaluations(ctx context.Context, project, slug, version string, o ListOptions) (Page[Evaluation], error) {
	return list[Evaluation](ctx, c, projectEvalPath(project, slug, version), "evaluations", listQuery(o))
}

// CancelEvaluation stops an evaluation; its cases done stay.
func (c *Client) CancelEvaluation(ctx context.Context, ref, version, id string) (*Evaluation, error) {
	return unwrap[Evaluation](ctx, c, request{method: "POST", path: evalPath(ref, version) + p("/", id, "/cancel")}, "evaluation")
}

// CancelProjectEvaluation is CancelEvaluation with the prompt slug of project.
func (c *Client) CancelProjectEvaluation(ctx context.Context, project, slug, version, id string) (*Evaluation, error) {
	return unwrap[Evaluation](ctx, c, request{method: "POST", path: projectEvalPath(project, slug, version) + p("/", id, "/cancel")}, "evaluation")
}

package quire

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// Assertion kinds a payload may carry (docs/evaluations.md).
const (
	AssertContains    = "contains"
	AssertNotContains = "not_contains"
	AssertEquals      = "equals"
	AssertRegex       = "regex"
	AssertMaxLength   = "max_length"
	AssertJSONValid   = "json_valid"
	AssertJSONSchema  = "json_schema"
	AssertLLMJudge    = "llm_judge"
)

// Assertion is one check of a model's output for a payload. Value is a
// string for contains, not_contains, equals and regex, a number of
// characters for max_length; Schema is json_schema's JSON Schema; Rubric
// (with an optional Provider and Model) is llm_judge's. package valid
// checks them.
type Assertion struct {
	Type     string          `json:"type" enum:"contains,not_contains,equals,regex,max_length,json_valid,json_schema,llm_judge"`
	Value    json.RawMessage `json:"value,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	Rubric   string          `json:"rubric,omitempty"`
	Provider string          `json:"provider,omitempty"`
	Model    string          `json:"model,omitempty"`
}

// Evaluation states.
const (
	EvalQueued    = "queued"
	EvalRunning   = "running"
	EvalCompleted = "completed"
	EvalFailed    = "failed"
	EvalCanceled  = "canceled"
)

// Evaluation is a prompt version's payloads sent to its model, and
// optionally another version's, with their assertions checked. It lives
// as evaluation.json on refs/evaluations/<id> of the prompt's
// repository, beside one JSON file per case done.
type Evaluation struct {
	ID       string `json:"id"`
	PromptID string `json:"prompt_id"`
	State    string `json:"state" enum:"queued,running,completed,failed,canceled"`
	// Version and Commit are the head evaluated; Against what it was
	// asked to compare with (a number, "live" or "base"; "" for
	// nothing), resolved to AgainstVersion and AgainstCommit.
	Version        int    `json:"version"`
	Commit         string `json:"commit"`
	Against        string `json:"against,omitempty"`
	AgainstVersion int    `json:"against_version,omitempty"`
	AgainstCommit  string `json:"against_commit,omitempty"`
	// Review is the review whose policy started it (0: none).
	Review    int        `json:"review,omitempty"`
	Repeat    int        `json:"repeat"`
	Fresh     bool       `json:"fresh,omitempty"`
	CreatedBy ReviewUser `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Counts    EvalCounts `json:"counts"`
	Usage     EvalUsage  `json:"usage"`
	// Error says why a failed evaluation failed.
	Error string `json:"error,omitempty"`
	// Plan is the cases to run, fixed when the evaluation is created so
	// a restart resumes the same work; the store keeps it, the API does
	// not show it.
	Plan []EvalPlanCase `json:"-"`
	// Tip is the commit of the evaluation's ref it was read at, set by
	// the store and never stored: two reads at one tip read the same
	// evaluation and cases, so what is made of them may be kept by it.
	Tip string `json:"-"`
}

// Finished reports whether the evaluation will run no more cases.
func (e *Evaluation) Finished() bool {
	return e.State == EvalCompleted || e.State == EvalFailed || e.State == EvalCanceled
}

// EvalPlanCase is one payload (as it was when the evaluation was asked
// for) and one repetition of it.
type EvalPlanCase struct {
	PayloadID   string          `json:"payload_id"`
	PayloadName string          `json:"payload_name"`
	Repeat      int             `json:"repeat"`
	Variables   json.RawMessage `json:"variables"`
	Assertions  []Assertion     `json:"assertions,omitempty"`
}

// Key is the case's name in the evaluation's tree and its results.
func (c EvalPlanCase) Key() string { return c.PayloadID + "-" + strconv.Itoa(c.Repeat) }

// EvalCounts sums an evaluation's cases: passed, failed (an assertion of
// the head failed) or errored (the head could not be run or judged);
// changed counts the cases whose head output differs from the other's.
type EvalCounts struct {
	Cases   int `json:"cases"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
	Changed int `json:"changed"`
}

// EvalUsage is the tokens an evaluation's calls cost, judges included;
// cached outputs cost nothing.
type EvalUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	Calls        int   `json:"calls"`
	CachedCalls  int   `json:"cached_calls"`
}

// EvalCase is one case's result: the head's output and the other
// version's, each with its assertions checked.
type EvalCase struct {
	PayloadID   string    `json:"payload_id"`
	PayloadName string    `json:"payload_name"`
	Repeat      int       `json:"repeat"`
	Head        *EvalSide `json:"head"`
	Against     *EvalSide `json:"against,omitempty"`
	Changed     bool      `json:"changed"`
}

// Key is the case's name, as EvalPlanCase.Key.
func (c *EvalCase) Key() string { return c.PayloadID + "-" + strconv.Itoa(c.Repeat) }

// EvalSide is one version's output for a case.
type EvalSide struct {
	Output     string            `json:"output"`
	Assertions []AssertionResult `json:"assertions"`
	Usage      EvalSideUsage     `json:"usage"`
	LatencyMS  int64             `json:"latency_ms"`
	Cached     bool              `json:"cached"`
	Error      string            `json:"error,omitempty"`
	// Judges are the judge calls made for llm_judge assertions, recorded
	// like any other call.
	Judges []JudgeCall `json:"judges,omitempty"`
}

// EvalSideUsage is the tokens of one output.
type EvalSideUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// AssertionResult is one assertion checked against an output.
type AssertionResult struct {
	Type   string `json:"type" enum:"contains,not_contains,equals,regex,max_length,json_valid,json_schema,llm_judge"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
}

// JudgeCall is one llm_judge call: the model that judged and its answer.
type JudgeCall struct {
	Provider string        `json:"provider"`
	Model    string        `json:"model"`
	Output   string        `json:"output"`
	Usage    EvalSideUsage `json:"usage"`
	Cached   bool          `json:"cached"`
}

// Failed reports whether an assertion of the side failed.
func (s *EvalSide) Failed() bool {
	for _, r := range s.Assertions {
		if !r.Passed {
			return true
		}
	}
	return false
}

// EvalRef names an evaluation that was not finished when quire stopped.
type EvalRef struct {
	PromptID string
	ID       string
}

// EvaluationStore keeps evaluations in the prompts' repositories.
type EvaluationStore interface {
	// CreateEvaluation stores new evaluation e (its ID set by the
	// caller) and remembers it as unfinished.
	CreateEvaluation(ctx context.Context, by Actor, a *Asset, e *Evaluation) error
	// SaveEvaluation commits e's state and the cases done since the last
	// save, in one commit.
	SaveEvaluation(ctx context.Context, by Actor, a *Asset, e *Evaluation, cases []*EvalCase, msg string) error
	// Evaluation reads evaluation id with its cases done, in plan order.
	Evaluation(ctx context.Context, a *Asset, id string) (*Evaluation, []*EvalCase, error)
	// Evaluations lists the prompt's evaluations, newest first, without
	// their plans.
	Evaluations(ctx context.Context, a *Asset) ([]*Evaluation, error)
	// UnfinishedEvaluations lists the evaluations a stop interrupted.
	UnfinishedEvaluations(ctx context.Context) ([]EvalRef, error)
	// DropPendingEvaluation forgets an evaluation listed by
	// UnfinishedEvaluations: it is finished and its event recorded, or it
	// cannot be resumed (its prompt or its ref is gone).
	DropPendingEvaluation(ctx context.Context, ref EvalRef) error
}

// EvaluationLeases, beside an EvaluationStore, says which process runs
// an evaluation when several share the data root (the nodes of a
// cluster): the one holding its lease. A lease dies with its process,
// however it dies.
type EvaluationLeases interface {
	// LeaseEvaluation takes the lease of evaluation ref if no process
	// holds it (ok false when one does). With pending, it is also not
	// taken (ok false) once the evaluation is no longer listed by
	// UnfinishedEvaluations. release gives it back; it is called after
	// the evaluation's pending mark is dropped, when there is one to
	// drop.
	LeaseEvaluation(ctx context.Context, ref EvalRef, pending bool) (release func(), ok bool, err error)
	// RequestEvaluationCancel asks the holder of ref's lease, on any
	// node, to cancel it.
	RequestEvaluationCancel(ctx context.Context, ref EvalRef) error
	// EvaluationCancelRequested reports whether a cancel of ref was asked.
	EvaluationCancelRequested(ctx context.Context, ref EvalRef) (bool, error)
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/quire/quire"
	"github.com/quire/quire/valid"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// judgeSystem is what a judge model is told: it answers PASS or FAIL and
// why, which checkAssertion reads.
const judgeSystem = "You judge the output of another model against a rubric. " +
	"Answer with PASS or FAIL as the first word, then one sentence saying why."

// checkAssertion checks output, the answer out, against assertion as. An
// llm_judge assertion asks a judge model (the assertion's provider and
// model, else the ones that answered) and returns its call; its error is
// a judge that could not be asked, and the result then fails.
func (a *App) checkAssertion(ctx context.Context, as quire.Assertion, output string, out *quire.CompletionResult, fresh bool) (quire.AssertionResult, *quire.JudgeCall, error) {
	r := quire.AssertionResult{Type: as.Type}
	var str string
	var num int
	switch as.Type {
	case quire.AssertContains, quire.AssertNotContains, quire.AssertEquals, quire.AssertRegex:
		json.Unmarshal(as.Value, &str)
	case quire.AssertMaxLength:
		json.Unmarshal(as.Value, &num)
	}
	switch as.Type {
	case quire.AssertContains:
		r.Passed = strings.Contains(output, str)
		r.Detail = verdict(r.Passed, fmt.Sprintf("contains %q", str), fmt.Sprintf("does not contain %q", str))
	case quire.AssertNotContains:
		r.Passed = !strings.Contains(output, str)
		r.Detail = verdict(r.Passed, fmt.Sprintf("does not contain %q", str), fmt.Sprintf("contains %q", str))
	case quire.AssertEquals:
		r.Passed = output == str
		r.Detail = verdict(r.Passed, "equals the expected text", fmt.Sprintf("differs from %q", clip(str)))
	case quire.AssertRegex:
		re, err := regexp.Compile(str)
		if err != nil { // checked when the payload was written
			r.Detail = "not a regular expression: " + err.Error()
			break
		}
		r.Passed = re.MatchString(output)
		r.Detail = verdict(r.Passed, fmt.Sprintf("matches /%s/", str), fmt.Sprintf("does not match /%s/", str))
	case quire.AssertMaxLength:
		n := utf8.RuneCountInString(output)
		r.Passed = n <= num
		r.Detail = fmt.Sprintf("%d characters, at most %d", n, num)
	case quire.AssertJSONValid:
		r.Passed = json.Valid([]byte(output))
		r.Detail = verdict(r.Passed, "is JSON", "is not JSON")
	case quire.AssertJSONSchema:
		r.Passed, r.Detail = schemaCheck(as.Schema, output)
	case quire.AssertLLMJudge:
		return a.judge(ctx, as, output, out, fresh)
	default:
		r.Detail = "unknown assertion type " + as.Type
	}
	return r, nil, nil
}

func verdict(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// schemaCheck validates output, parsed as JSON, against schema.
func schemaCheck(schema json.RawMessage, output string) (bool, string) {
	s, err := valid.OutputSchema(schema)
	if err != nil {
		return false, "schema: " + quire.ErrorMessage(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(output)))
	if err != nil {
		return false, "is not JSON"
	}
	err = s.Validate(doc)
	var ve *jsonschema.ValidationError
	switch {
	case err == nil:
		return true, "satisfies the schema"
	case errors.As(err, &ve):
		u := ve.BasicOutput()
		for _, e := range u.Errors {
			if e.Error != nil {
				return false, fmt.Sprintf("%s: %s", cmpOr(e.InstanceLocation, "/"), e.Error.String())
			}
		}
		return false, ve.Error()
	default:
		return false, err.Error()
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// judge asks a judge model whether output meets the rubric.
func (a *App) judge(ctx context.Context, as quire.Assertion, output string, out *quire.CompletionResult, fresh bool) (quire.AssertionResult, *quire.JudgeCall, error) {
	r := quire.AssertionResult{Type: as.Type}
	provider, model := cmpOr(as.Provider, out.Provider), cmpOr(as.Model, out.Model)
	comp := quire.Completion{Model: model, Params: json.RawMessage(`{"temperature":0}`), Messages: []quire.Message{
		{Role: "system", Content: judgeSystem},
		{Role: "user", Content: "Rubric:\n" + as.Rubric + "\n\nOutput:\n" + output},
	}}
	res, cached, _, err := a.complete(ctx, provider, comp, 1, fresh)
	if err != nil {
		r.Detail = "the judge could not be asked: " + quire.ErrorMessage(err)
		return r, nil, err
	}
	call := &quire.JudgeCall{Provider: res.Provider, Model: res.Model, Output: res.Output, Cached: cached,
		Usage: quire.EvalSideUsage{InputTokens: res.InputTokens, OutputTokens: res.OutputTokens}}
	answer := strings.TrimSpace(res.Output)
	word := strings.ToUpper(strings.TrimLeft(answer, "*#\"' "))
	switch {
	case strings.HasPrefix(word, "PASS"):
		r.Passed = true
	case strings.HasPrefix(word, "FAIL"):
	default:
		r.Detail = "the judge answered neither PASS nor FAIL: " + clip(answer)
		return r, call, nil
	}
	r.Detail = clip(answer)
	if len(answer) > 500 {
		r.Detail = answer[:500] + "…"
	} else {
		r.Detail = answer
	}
	return r, call, nil
}

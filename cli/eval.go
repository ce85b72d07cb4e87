package cli

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quire/quire/client"
	"github.com/spf13/cobra"
)

// quire eval: a prompt version's evaluation for CI pipelines. It starts
// one and, with --wait (or --junit), waits for it, prints a table of its
// cases, writes JUnit XML, and exits 1 when an assertion failed or a case
// could not run.

// evalFlags are quire eval's options.
type evalFlags struct {
	against  string
	payloads []string
	repeat   int
	fresh    bool
	wait     bool
	junit    string
	timeout  time.Duration
}

// evalFailed is an evaluation with failing or errored cases: exit 1.
type evalFailed struct {
	state           string
	failed, errored int
}

func (e evalFailed) Error() string {
	if e.state != "completed" {
		return "the evaluation " + e.state
	}
	return fmt.Sprintf("%s failed, %s in error", plural(e.failed, "case"), plural(e.errored, "case"))
}

func (evalFailed) ExitCode() int { return 1 }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func (e *env) evalCmd() *cobra.Command {
	var f evalFlags
	c := &cobra.Command{
		Use:   "eval PROJECT/PROMPT VERSION",
		Short: "Evaluate a prompt version with its payloads' assertions",
		Long: `Evaluate VERSION (a number, "live" or a label) of a prompt on the server:
every payload (or those --payload names) is sent to the version's model,
and against another version's with --against (a number, live or base),
each output checked by the payload's assertions (docs/evaluations.md).
Without --wait it prints the evaluation's id and returns; with --wait it
waits, prints a table of the cases, and exits 1 when an assertion failed
or a case could not run. --junit FILE (which waits) writes the cases as
JUnit XML for CI systems.`,
		Example: "  quire eval demo/greeting 3 --against live --wait\n  quire eval demo/greeting 3 --against base --junit eval.xml",
		Args:    args(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, a []string) error {
			project, slug, err := splitRef(a[0])
			if err != nil {
				return err
			}
			if f.repeat < 0 || f.repeat > 5 {
				return usagef("--repeat must be from 1 to 5")
			}
			return e.eval(c.Context(), project, slug, a[1], f)
		},
	}
	c.Flags().StringVar(&f.against, "against", "", "also run this version for each case: a number, live or base")
	c.Flags().StringArrayVar(&f.payloads, "payload", nil, "evaluate only this payload (id; repeatable)")
	c.Flags().IntVar(&f.repeat, "repeat", 0, "send each payload this many times (1 to 5)")
	c.Flags().BoolVar(&f.fresh, "fresh", false, "send every case to the model, even when its output is cached")
	c.Flags().BoolVar(&f.wait, "wait", false, "wait for the evaluation, print its cases, exit 1 when one fails")
	c.Flags().StringVar(&f.junit, "junit", "", "write the cases as JUnit XML to this file (waits)")
	c.Flags().DurationVar(&f.timeout, "timeout", 30*time.Minute, "how long --wait waits")
	return c
}

func (e *env) eval(ctx context.Context, project, slug, version string, f evalFlags) error {
	sdk, err := e.client()
	if err != nil {
		return err
	}
	ref := project + "/" + slug
	ev, err := sdk.StartProjectEvaluation(ctx, project, slug, version, client.EvaluationInput{Against: f.against, Payloads: f.payloads, Repeat: f.repeat, Fresh: f.fresh})
	if err != nil {
		return fail(err, "evaluate %s version %s", ref, version)
	}
	if !f.wait && f.junit == "" {
		return e.print(map[string]any{"evaluation": ev}, func(w io.Writer) {
			fmt.Fprintf(w, "evaluation %s of %s version %d: %s\n", ev.ID, ref, ev.Version, ev.State)
		})
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	v := strconv.Itoa(ev.Version)
	wait := 100 * time.Millisecond
	var view *client.EvaluationView
	for {
		if view, err = sdk.ProjectEvaluation(ctx, project, slug, v, ev.ID); err != nil {
			return fail(err, "read evaluation %s", ev.ID)
		}
		if view.Evaluation.Finished() {
			break
		}
		select {
		case <-ctx.Done():
			return fail(ctx.Err(), "wait for evaluation %s (still %s)", ev.ID, view.Evaluation.State)
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
	if f.junit != "" {
		b, err := junitXML(ref, view)
		if err != nil {
			return err
		}
		if err := os.WriteFile(e.path(f.junit), b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.junit, err)
		}
	}
	if err := e.print(view, func(w io.Writer) { printEvaluation(w, ref, view) }); err != nil {
		return err
	}
	n := view.Evaluation.Counts
	if view.Evaluation.State != "completed" || n.Failed > 0 || n.Errored > 0 {
		return evalFailed{state: view.Evaluation.State, failed: n.Failed, errored: n.Errored}
	}
	return nil
}

// caseResult is a case's result word and what to say of it.
func caseResult(c *client.EvalCase) (string, string) {
	switch {
	case c.Head.Error != "":
		return "ERROR", c.Head.Error
	case c.Head.Failed():
		var why []string
		for _, a := range c.Head.Assertions {
			if !a.Passed {
				why = append(why, a.Type+": "+a.Detail)
			}
		}
		return "FAIL", strings.Join(why, "; ")
	}
	return "pass", ""
}

// printEvaluation prints a table of the cases and a summary line.
func printEvaluation(w io.Writer, ref string, v *client.EvaluationView) {
	ev := v.Evaluation
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PAYLOAD\tREPEAT\tRESULT\tCHANGED\tDETAIL")
	for _, c := range v.Cases {
		res, detail := caseResult(c)
		changed := ""
		if c.Against != nil {
			changed = "no"
			if c.Changed {
				changed = "yes"
			}
		}
		name := c.PayloadName
		if name == "" {
			name = c.PayloadID
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", name, c.Repeat, res, changed, oneLine(detail))
	}
	tw.Flush()
	n := ev.Counts
	fmt.Fprintf(w, "%s version %d: %s; %d passed, %d failed, %d errored", ref, ev.Version, ev.State, n.Passed, n.Failed, n.Errored)
	if ev.AgainstCommit != "" {
		fmt.Fprintf(w, ", %d of %d outputs changed against %s", n.Changed, n.Cases, ev.Against)
	}
	fmt.Fprintf(w, " (%d calls, %d cached)\n", ev.Usage.Calls, ev.Usage.CachedCalls)
	if ev.Error != "" {
		fmt.Fprintln(w, "error: "+ev.Error)
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// The JUnit XML that CI systems read: one suite, a test case per case.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Time    string        `xml:"time,attr"`
	Failure *junitProblem `xml:"failure,omitempty"`
	Error   *junitProblem `xml:"error,omitempty"`
	Output  string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func junitXML(ref string, v *client.EvaluationView) ([]byte, error) {
	ev := v.Evaluation
	s := junitSuite{Name: fmt.Sprintf("%s version %d", ref, ev.Version), Tests: len(v.Cases)}
	var total int64
	for _, c := range v.Cases {
		name := c.PayloadName
		if name == "" {
			name = c.PayloadID
		}
		if c.Repeat > 1 {
			name += " #" + strconv.Itoa(c.Repeat)
		}
		total += c.Head.LatencyMS
		jc := junitCase{Class: ref, Name: name, Time: seconds(c.Head.LatencyMS), Output: c.Head.Output}
		switch res, detail := caseResult(c); res {
		case "ERROR":
			s.Errors++
			jc.Error = &junitProblem{Message: oneLine(detail), Text: detail}
		case "FAIL":
			s.Failures++
			var lines []string
			typ := ""
			for _, a := range c.Head.Assertions {
				if !a.Passed {
					lines = append(lines, a.Type+": "+a.Detail)
					if typ == "" {
						typ = a.Type
					}
				}
			}
			jc.Failure = &junitProblem{Message: oneLine(detail), Type: typ, Text: strings.Join(lines, "\n")}
		}
		s.Cases = append(s.Cases, jc)
	}
	s.Time = seconds(total)
	b, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

func seconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) }

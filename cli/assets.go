package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/quire/quire/client"
	"github.com/spf13/cobra"
)

// Commands on assets named PROJECT/SLUG: publish, review, render, and
// the lists.

// kindOf finds whether ref (PROJECT/SLUG) is a skill or a prompt.
func kindOf(ctx context.Context, sdk *client.Client, ref string) (client.Kind, error) {
	if _, _, err := splitRef(ref); err != nil {
		return "", err
	}
	_, err := sdk.Skill(ctx, ref)
	if err == nil {
		return client.KindSkill, nil
	}
	if !client.IsNotFound(err) {
		return "", fail(err, "%s", ref)
	}
	if _, err = sdk.Prompt(ctx, ref); err != nil {
		if client.IsNotFound(err) {
			return "", fmt.Errorf("%s: no skill or prompt of that name", ref)
		}
		return "", fail(err, "%s", ref)
	}
	return client.KindPrompt, nil
}

// number reads a positive version or review number.
func number(what, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, usagef("%s %q is not a positive number", what, s)
	}
	return n, nil
}

// onAsset is the RunE of a command on PROJECT/SLUG and a number (what
// it numbers): it reads both and finds the asset's kind before run.
func (e *env) onAsset(what string, run func(ctx context.Context, sdk *client.Client, kind client.Kind, ref string, n int) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, a []string) error {
		n, err := number(what, a[1])
		if err != nil {
			return err
		}
		sdk, err := e.client()
		if err != nil {
			return err
		}
		kind, err := kindOf(c.Context(), sdk, a[0])
		if err != nil {
			return err
		}
		return run(c.Context(), sdk, kind, a[0], n)
	}
}

func (e *env) publishCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "publish PROJECT/SLUG DRAFT",
		Short:   "Publish a draft of a skill or prompt: it goes live",
		Example: "  quire publish demo/pdf-tools 4",
		Args:    args(cobra.ExactArgs(2)),
		RunE: e.onAsset("draft", func(ctx context.Context, sdk *client.Client, kind client.Kind, ref string, n int) error {
			var v any
			var commit string
			if kind == client.KindSkill {
				sv, err := sdk.PublishSkillVersion(ctx, ref, n)
				if err != nil {
					return fail(err, "publish %s version %d", ref, n)
				}
				v, commit = sv, sv.Commit
			} else {
				pv, err := sdk.PublishPromptVersion(ctx, ref, n)
				if err != nil {
					return fail(err, "publish %s version %d", ref, n)
				}
				v, commit = pv, pv.Commit
			}
			return e.print(map[string]any{"kind": kind, "asset": ref, "version": v}, func(w io.Writer) {
				fmt.Fprintf(w, "published %s version %d (live, commit %.12s)\n", ref, n, commit)
			})
		}),
	}
}

func (e *env) reviewCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "review",
		Short:   "Open, read and approve reviews of drafts",
		Example: "  quire review open demo/pdf-tools 4 --title \"Faster forms\"\n  quire review show demo/pdf-tools 1\n  quire review approve demo/pdf-tools 1",
		Args:    args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			c.Help()
			return usagef("review needs a subcommand: open, show or approve")
		},
	}
	var title, description string
	open := &cobra.Command{
		Use:     "open PROJECT/SLUG DRAFT",
		Short:   "Open a review of a draft",
		Example: "  quire review open demo/pdf-tools 4 --title \"Faster forms\"",
		Args:    args(cobra.ExactArgs(2)),
		RunE: e.onAsset("draft", func(ctx context.Context, sdk *client.Client, kind client.Kind, ref string, n int) error {
			in := client.ReviewInput{}
			if title != "" {
				in.Title = &title
			}
			if description != "" {
				in.Description = &description
			}
			rv, err := sdk.OpenReview(ctx, kind, ref, n, in)
			if err != nil {
				return fail(err, "open a review of %s draft %d", ref, n)
			}
			return e.print(rv, func(w io.Writer) {
				fmt.Fprintf(w, "review %d of %s draft %d opened: %s (%d files)\n", rv.Review.Number, ref, n, rv.Review.Title, len(rv.Files))
			})
		}),
	}
	open.Flags().StringVar(&title, "title", "", "the review's title")
	open.Flags().StringVarP(&description, "message", "m", "", "the review's description")
	show := &cobra.Command{
		Use:     "show PROJECT/SLUG REVIEW",
		Short:   "Show a review: its head, files, verdicts and whether it can be published",
		Example: "  quire review show demo/pdf-tools 1",
		Args:    args(cobra.ExactArgs(2)),
		RunE: e.onAsset("review", func(ctx context.Context, sdk *client.Client, kind client.Kind, ref string, n int) error {
			rv, err := sdk.Review(ctx, kind, ref, n)
			if err != nil {
				return fail(err, "read review %d of %s", n, ref)
			}
			return e.print(rv, func(w io.Writer) { printReview(w, rv) })
		}),
	}
	var body, commit string
	approve := &cobra.Command{
		Use:   "approve PROJECT/SLUG REVIEW",
		Short: "Approve a review, at the head you read",
		Long: "Approve a review. The approval is for one head: --commit names the head you read " +
			"(quire review show prints it); without it, the head the review has when this command reads it, " +
			"which it prints. If the draft changed since, the approval is refused (head_moved): read it again.",
		Example: "  quire review show demo/pdf-tools 1\n  quire review approve demo/pdf-tools 1 --commit 3f2a9c1e… -m \"Looks good\"",
		Args:    args(cobra.ExactArgs(2)),
		RunE: e.onAsset("review", func(ctx context.Context, sdk *client.Client, kind client.Kind, ref string, n int) error {
			head := commit
			if head == "" {
				rv, err := sdk.Review(ctx, kind, ref, n)
				if err != nil {
					return fail(err, "read review %d of %s", n, ref)
				}
				head = rv.Review.Head.Commit
			}
			v, err := sdk.ApproveReviewAt(ctx, kind, ref, n, head, body)
			if err != nil {
				return fail(err, "approve review %d of %s at commit %.12s", n, ref, head)
			}
			return e.print(v, func(w io.Writer) {
				fmt.Fprintf(w, "review %d of %s approved by %s at commit %.12s\n", n, ref, v.User.Email, v.Commit)
			})
		}),
	}
	approve.Flags().StringVarP(&body, "message", "m", "", "a comment with the approval")
	approve.Flags().StringVar(&commit, "commit", "", "the head commit you read (quire review show); refused if the draft moved since")
	c.AddCommand(open, show, approve)
	return c
}

// printReview writes a review as quire review show prints it.
func printReview(w io.Writer, rv *client.ReviewView) {
	r := rv.Review
	fmt.Fprintf(w, "review %d: %s (%s)\ndraft %d, head %s\n", r.Number, r.Title, r.State, r.Version, r.Head.Commit)
	for _, f := range rv.Files {
		fmt.Fprintf(w, "  %-8s %s +%d -%d\n", f.Status, f.Path, f.Additions, f.Deletions)
	}
	for _, v := range rv.Verdicts {
		line := fmt.Sprintf("%s: %s", v.User.Email, v.Kind)
		if !v.Counts {
			line += fmt.Sprintf(" (does not count: %s)", v.Reason.Why())
		}
		fmt.Fprintln(w, "  "+line)
	}
	if rv.Mergeable.OK {
		fmt.Fprintln(w, "ready to publish")
		return
	}
	fmt.Fprintln(w, "not ready to publish:")
	for _, reason := range rv.Mergeable.Reasons {
		fmt.Fprintln(w, "  "+reason)
	}
}

func (e *env) renderCmd() *cobra.Command {
	var vars []string
	var varsJSON, payload, label string
	var version int
	c := &cobra.Command{
		Use:   "render PROJECT/PROMPT",
		Short: "Render a prompt on the server",
		Long: `Render the live version of a prompt (or --version N, or the one --label
names) with variables: --var name=value (a string; repeatable), or
--vars '{"json": "object"}' for other types, over a payload's with
--payload ID. Prints the text, or each chat message as "role: content".`,
		Example: "  quire render demo/greeting --var name=Ann\n  quire render demo/greeting --vars '{\"items\": [1, 2]}' --label stable --json",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, a []string) error {
			project, slug, err := splitRef(a[0])
			if err != nil {
				return err
			}
			in := client.RenderInput{Variables: map[string]any{}, Version: version, PayloadID: payload, Label: label}
			if varsJSON != "" {
				if err := json.Unmarshal([]byte(varsJSON), &in.Variables); err != nil {
					return usagef("--vars must be a JSON object: %v", err)
				}
			}
			for _, kv := range vars {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("--var %q: write it name=value", kv)
				}
				in.Variables[k] = v
			}
			sdk, err := e.client()
			if err != nil {
				return err
			}
			out, err := sdk.RenderProjectPrompt(c.Context(), project, slug, in)
			if err != nil {
				return fail(err, "render %s", a[0])
			}
			return e.print(out, func(w io.Writer) {
				if out.Text != nil {
					fmt.Fprintln(w, strings.TrimSuffix(*out.Text, "\n"))
					return
				}
				for _, m := range out.Messages {
					fmt.Fprintf(w, "%s: %s\n", m.Role, m.Content)
				}
			})
		},
	}
	c.Flags().StringArrayVar(&vars, "var", nil, "a variable, name=value (repeatable)")
	c.Flags().StringVar(&varsJSON, "vars", "", "variables as a JSON object")
	c.Flags().StringVar(&payload, "payload", "", "render over this payload's variables")
	c.Flags().StringVar(&label, "label", "", "render the version this label names")
	c.Flags().IntVar(&version, "version", 0, "render this published version")
	return c
}

// Listed is one asset of quire skills ls / prompts ls.
type Listed struct {
	Ref         string `json:"ref"`
	Project     string `json:"project"`
	Slug        string `json:"slug"`
	Name        string `json:"name"`
	Description string `json:"description"`
	ID          string `json:"id"`
}

// listCmd is `quire skills ls` or `quire prompts ls`.
func (e *env) listCmd(kind client.Kind) *cobra.Command {
	plural := kind.Plural()
	return &cobra.Command{
		Use:     "ls [PROJECT]",
		Short:   "List the " + plural + " of a project, or of every project you can read",
		Example: "  quire " + plural + " ls demo\n  quire " + plural + " ls --json",
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, a []string) error {
			ctx := c.Context()
			sdk, err := e.client()
			if err != nil {
				return err
			}
			var projects []string
			if len(a) == 1 {
				projects = a
			} else {
				opts := client.ListOptions{Limit: 500}
				for {
					pg, err := sdk.Projects(ctx, opts)
					if err != nil {
						return fail(err, "list projects")
					}
					for _, p := range pg.Items {
						projects = append(projects, p.Slug)
					}
					if opts.Cursor = pg.NextCursor; opts.Cursor == "" {
						break
					}
				}
			}
			out := []Listed{}
			for _, project := range projects {
				opts := client.ListOptions{Limit: 500}
				for {
					var pg client.Page[client.Skill]
					if kind == client.KindSkill {
						pg, err = sdk.ProjectSkills(ctx, project, opts)
					} else {
						pg, err = sdk.ProjectPrompts(ctx, project, opts)
					}
					if err != nil {
						return fail(err, "list the %s of %s", plural, project)
					}
					for _, s := range pg.Items {
						out = append(out, Listed{Ref: project + "/" + s.Slug, Project: project, Slug: s.Slug, Name: s.Name, Description: s.Description, ID: s.ID})
					}
					if opts.Cursor = pg.NextCursor; opts.Cursor == "" {
						break
					}
				}
			}
			return e.print(map[string]any{plural: out}, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				for _, l := range out {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Ref, l.Name, l.Description)
				}
				tw.Flush()
				if len(out) == 0 {
					fmt.Fprintf(w, "no %s\n", plural)
				}
			})
		},
	}
}

func (e *env) promptsCmd() *cobra.Command {
	c := &cobra.Command{Use: "prompts", Short: "Prompts: ls", Example: "  quire prompts ls demo", Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { c.Help(); return usagef("prompts needs a subcommand: ls") }}
	c.AddCommand(e.listCmd(client.KindPrompt))
	return c
}

func (e *env) skillsCmd() *cobra.Command {
	c := &cobra.Command{Use: "skills", Short: "Skills: ls, install", Example: "  quire skills ls demo\n  quire skills install demo/pdf-tools", Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			c.Help()
			return usagef("skills needs a subcommand: ls or install")
		}}
	c.AddCommand(e.listCmd(client.KindSkill), e.installCmd())
	return c
}

// Command quire-scale fills a data root with many skills and prompts and
// measures a quire server on it: start-up time, memory, list pages and
// render throughput against an empty data root.
//
//	quire-scale generate -data /tmp/quire-scale -skills 10000 -versions 5 -files 20 -prompts 2000 -prompt-versions 10
//	quire-scale measure -data /tmp/quire-scale -out scale.md
//
// generate writes through the gitstore package in this process, on the
// same code paths as the server; measure builds and starts `quire serve`
// on the data root (embedded Redis) and talks to it over HTTP.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "quire-scale:", err)
		}
		os.Exit(2)
	}
}

const usage = "usage: quire-scale generate|measure [flags] (-h for the flags of each)"

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(out, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "generate":
		var g generator
		if err := g.parse(args[1:], out); err != nil {
			return err
		}
		return g.run(ctx, out)
	case "measure":
		var m measurer
		if err := m.parse(args[1:], out); err != nil {
			return err
		}
		return m.run(ctx, out)
	}
	fmt.Fprintln(out, usage)
	return flag.ErrHelp
}

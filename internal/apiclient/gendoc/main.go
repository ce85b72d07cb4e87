// Command gendoc writes the OpenAPI document the server serves
// (httpapi.OpenAPI) to the file named by its argument, for go generate.
package main

import (
	"fmt"
	"os"

	"github.com/quire/quire/httpapi"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendoc <file>")
		os.Exit(2)
	}
	b, err := httpapi.OpenAPI()
	if err == nil {
		err = os.WriteFile(os.Args[1], append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}

// Usage: go run . EXAMPLE[,EXAMPLE...] [OUTDIR]
// Synthesizes each example into OUTDIR/<example>/ (OUTDIR itself for one example; default dist).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/jsii-runtime-go"
	"github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run . EXAMPLE[,EXAMPLE...] [OUTDIR]")
		os.Exit(2)
	}
	names := strings.Split(os.Args[1], ",")
	outdir := "dist"
	if len(os.Args) > 2 {
		outdir = os.Args[2]
	}
	for _, name := range names {
		ex, ok := Examples[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "no example %q\n", name)
			os.Exit(2)
		}
		dir := outdir
		if len(names) > 1 {
			dir = filepath.Join(outdir, name)
		}
		app := cdk8s.NewApp(&cdk8s.AppProps{Outdir: jsii.String(dir)})
		ex.chart(app, ex.chartID)
		app.Synth()
	}
}

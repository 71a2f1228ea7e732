// Command build writes the static edition of chapter 12: a website of the executed notebooks as committed, the
// book-vs-run report, an introduction and a page on running the chapter (package site). It executes nothing.
//
//	go run ./site/cmd/build                 # into site/_build/html
//	go run ./site/cmd/build -o /tmp/site    # elsewhere
//	go run ./site/cmd/build -repo https://github.com/me/agentrl -ref v1   # source links into a fork, at a tag
//
// It needs Node.js and npm: the first build installs the pinned MyST with `npm ci` in site/. Open
// site/_build/html/index.html in a browser, or serve the folder (any static file server).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/agentrl-go/agentrl/site"
)

func main() {
	dir := flag.String("site", "", "the site folder, holding myst.yml (default: site/ of the repository around the working directory)")
	out := flag.String("o", "", "the output folder, replaced whole (default: <site>/_build/html)")
	quiet := flag.Bool("q", false, "print only the output folder, or the error")
	repo := flag.String("repo", "", "the repository's web address, which pages link their sources into and clone (default: from go.mod's module path)")
	ref := flag.String("ref", "", "the branch or commit that the source links name (default: main)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./site/cmd/build [-o dir] [-site dir] [-repo url] [-ref ref] [-q]\n\n"+
			"Builds the static edition of chapter 12 from the committed notebooks and notebooks/REPORT.md, executing nothing.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *dir == "" {
		d, err := siteDir()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		*dir = d
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := site.Options{Dir: *dir, Out: *out, Log: os.Stderr, Repo: *repo, Ref: *ref}
	if *quiet {
		opts.Log = nil
	}
	s, err := site.Build(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(s.Out)
}

// siteDir is the folder site/ of the repository (the first folder with a go.mod) at or above the working
// directory.
func siteDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "site"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod at or above %s: run this in the repository, or name the site folder with -site", wd)
		}
	}
}

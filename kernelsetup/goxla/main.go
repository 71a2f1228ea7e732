// Command goxla installs go-xla's default PJRT CPU plugin for this platform into a folder, with go-xla's installer,
// and links pjrt.PluginName in that folder to it; nothing is done when that version is there. kernelsetup runs it
// where the pinned wheel cannot be had, as a program of its own so that kernelsetup links no GoMLX package:
//
//	go run github.com/agentrl-go/agentrl/kernelsetup/goxla DIR
//
// Progress goes to stdout. A failure exits non-zero with one line on stderr.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/gomlx/go-xla/pkg/installer"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goxla DIR")
		os.Exit(2)
	}
	if err := installer.CPUAutoInstall(os.Args[1], true, installer.Normal); err != nil {
		fmt.Fprintln(os.Stderr, "goxla:", strings.Join(strings.Fields(err.Error()), " "))
		os.Exit(1)
	}
}

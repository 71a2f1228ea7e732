//go:build !linux

package harness

import "os"

func termWidth(*os.File) int { return 0 }

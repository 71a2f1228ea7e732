//go:build !linux

package notebooks

import "os"

func termWidth(*os.File) int { return 0 }

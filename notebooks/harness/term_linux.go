package harness

import (
	"os"

	"golang.org/x/sys/unix"
)

// termWidth returns the columns of the terminal f, or 0.
func termWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

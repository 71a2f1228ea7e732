// Package tail keeps the end of a command's output, for an error message that shows what the command said last.
package tail

import "bytes"

// Size is how many bytes a Buffer keeps.
const Size = 4096

// Buffer is an io.Writer that keeps the last Size bytes written to it.
type Buffer struct{ b []byte }

func (t *Buffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > Size {
		t.b = t.b[len(t.b)-Size:]
	}
	return len(p), nil
}

// String is what the buffer holds, without leading and trailing white space.
func (t *Buffer) String() string { return string(bytes.TrimSpace(t.b)) }

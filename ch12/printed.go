package ch12

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/store"
)

// Printed writes to standard output what report writes, stored like a training run: the first program to call it
// runs report and stores the text under name; a later program (the next cell, the notebook executed again) prints
// the stored text instead of sampling again. The key holds report's code and all the code it reaches, and parts
// (codekey.KeyOf): a report that captures a value its code does not determine (a parameter of the function around
// it) is refused, with a message that says how to make it keyable. Editing the cell's code runs report again. A
// report's code reads what the cell's program made of its variables, so its text is stored under the program's
// code as well (the cell's body, its init code and its package variables: codekey.Keyed.InProgram), and asked for
// again in the same program it runs again. A report that reads what no key can hold (an environment variable, a
// file, a package variable the cell writes through another name) has no stored text to trust: it runs at every
// call, and its text is not stored.
func (c *Chapter) Printed(name string, report func(w io.Writer) error, parts ...any) error {
	return c.printed(os.Stdout, name, report, parts...)
}

// printed is Printed writing to out.
func (c *Chapter) printed(out io.Writer, name string, report func(w io.Writer) error, parts ...any) error {
	if report == nil {
		return errors.New("ch12: Printed: report is nil")
	}
	key, err := codekey.KeyOf(name, append([]any{report, c.Engine}, parts...)...)
	if err != nil {
		return fmt.Errorf("ch12: Printed: %w", err)
	}
	text, err := store.Cached(c.Store, key, textCodec, func() (string, error) {
		var b strings.Builder
		err := report(&b)
		return b.String(), err
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, text)
	return err
}

// textCodec stores a report's text as it was written.
var textCodec = store.Codec[string]{
	Encode: func(w io.Writer, s string) error { _, err := io.WriteString(w, s); return err },
	Decode: func(r io.Reader) (string, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	},
}

package ch12

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// Printed writes to standard output what report writes, stored like a training run: the first program to call it
// runs report and stores the text under name; a later program (the next cell, the notebook executed again) prints
// the stored text instead of sampling again. The key holds report's code and all the code it reaches
// (agentrl.FuncCode), the library's code and the backend (agentrl.Key), and parts: what report reads that its code
// does not compute (seeds, configurations); a *gomlxmodel.Model part is keyed by its fingerprint. Editing the
// cell's code therefore runs report again.
func (c *Chapter) Printed(name string, report func(w io.Writer) error, parts ...any) error {
	return c.printed(os.Stdout, name, report, parts...)
}

// printed is Printed writing to out.
func (c *Chapter) printed(out io.Writer, name string, report func(w io.Writer) error, parts ...any) error {
	if report == nil {
		return errors.New("ch12: Printed: report is nil")
	}
	code, err := agentrl.FuncCode(report)
	if err != nil {
		return fmt.Errorf("ch12: Printed(%s): %w", name, err)
	}
	keyed := []any{"report code", code}
	for i, p := range parts {
		if m, ok := p.(*gomlxmodel.Model); ok {
			id, err := agentrl.Fingerprint(m)
			if err != nil {
				return fmt.Errorf("ch12: Printed(%s): part %d: %w", name, i, err)
			}
			p = "model " + id
		}
		keyed = append(keyed, p)
	}
	text, err := agentrl.Cached(c.Store, agentrl.Key(name, keyed...), textCodec, func() (string, error) {
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
var textCodec = agentrl.Codec[string]{
	Encode: func(w io.Writer, s string) error { _, err := io.WriteString(w, s); return err },
	Decode: func(r io.Reader) (string, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	},
}

// Package nbdisplay shows a [chart.Figure] in a GoNB notebook.
//
// It is a package of its own so that chart stays free of GoNB for programs
// that only want SVG or PNG.
package nbdisplay

import (
	"time"

	"github.com/agentrl-go/agentrl/chart"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"
)

// Bundle returns the display_data that [Display] sends for fig: image/png
// (raw bytes, which GoNB's JSON encoding sends as base64, as Jupyter wants),
// shown at the figure's SVG size (the PNG has chart.PNGScale times its pixels
// each way, for high-density screens), and text/plain, the figure's one-line
// description.
//
// It carries no SVG and no HTML on purpose: an untrusted notebook (every
// freshly cloned one) drops image/svg+xml and strips inline <svg> from
// text/html, Jupyter front ends prefer text/html and SVG over PNG when
// present, and code hosts' static previews sanitize HTML; image/png is shown
// everywhere.
func Bundle(fig chart.Figure) (*protocol.DisplayData, error) {
	png, err := fig.PNG()
	if err != nil {
		return nil, err
	}
	w, h := fig.Size()
	return &protocol.DisplayData{
		Data: map[protocol.MIMEType]any{
			protocol.MIMEImagePNG:  png,
			protocol.MIMETextPlain: fig.Alt(),
		},
		Metadata: map[string]any{
			string(protocol.MIMEImagePNG): map[string]int{"width": w, "height": h}, // a type GoNB registers with gob
		},
	}, nil
}

// Display shows fig as the output of the running notebook cell, in one
// display_data message (see [Bundle]), and waits, at most SyncTimeout, until
// GoNB has passed it on: a cell program that ends right after would otherwise
// lose a figure GoNB had not read yet. Outside a notebook it does nothing.
func Display(fig chart.Figure) error {
	if !gonbui.IsNotebook {
		return nil
	}
	data, err := Bundle(fig)
	if err != nil {
		return err
	}
	gonbui.SendData(data)
	SyncWithin(SyncTimeout)
	return nil
}

// SyncTimeout is the longest Display waits for GoNB to pass a figure on.
const SyncTimeout = 5 * time.Second

// SyncWithin waits until GoNB has passed on what the cell's program sent it (displays go through a pipe of their
// own, apart from stdout), or until d has passed.
func SyncWithin(d time.Duration) {
	done := make(chan struct{})
	go func() {
		gonbui.Sync()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

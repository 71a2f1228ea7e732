package nbdisplay

import (
	"bytes"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"testing"

	"github.com/agentrl-go/agentrl/chart"
	"github.com/janpfeifer/gonb/gonbui/protocol"
)

// TestBundle checks the bundle as the kernel sees it: it crosses GoNB's pipe
// (gob) and goes to Jupyter as JSON, where image/png must be base64 and
// text/plain the figure's description.
func TestBundle(t *testing.T) {
	fig := chart.Bars("t", []string{"a"}, []chart.Series{{Name: "s", Values: []float64{20}}})
	data, err := Bundle(fig)
	if err != nil {
		t.Fatal(err)
	}
	var pipe bytes.Buffer
	if err := gob.NewEncoder(&pipe).Encode(data); err != nil {
		t.Fatalf("gob (GoNB's pipe): %v", err)
	}
	var got protocol.DisplayData
	if err := gob.NewDecoder(&pipe).Decode(&got); err != nil {
		t.Fatal(err)
	}
	msg, err := json.Marshal(struct {
		Data     map[protocol.MIMEType]any `json:"data"`
		Metadata map[string]any            `json:"metadata"`
	}{got.Data, got.Metadata})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Data     map[string]string         `json:"data"`
		Metadata map[string]map[string]int `json:"metadata"`
	}
	if err := json.Unmarshal(msg, &out); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(out.Data["image/png"])
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("image/png is not a base64 PNG (err %v)", err)
	}
	if want, _ := fig.PNG(); !bytes.Equal(png, want) {
		t.Error("image/png is not fig.PNG()")
	}
	if out.Data["text/plain"] != fig.Alt() {
		t.Errorf("text/plain = %q, want %q", out.Data["text/plain"], fig.Alt())
	}
	if len(out.Data) != 2 {
		t.Errorf("bundle carries %d types, want image/png and text/plain", len(out.Data))
	}
	w, h := fig.Size()
	if m := out.Metadata["image/png"]; m["width"] != w || m["height"] != h {
		t.Errorf("image/png metadata = %v, want width %d height %d", m, w, h)
	}
}

func TestDisplayOutsideNotebook(t *testing.T) {
	if err := Display(chart.Bars("t", nil, nil)); err != nil {
		t.Fatal(err)
	}
}

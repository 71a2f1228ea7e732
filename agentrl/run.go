package agentrl

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// Run is a training run's state between two steps and its result: the policy being trained, the optional critic,
// the per-step history and the terminal infos logged by the environments. Base, the model the run started from, is
// the run's input, not its state: WriteRun does not write it.
type Run struct {
	Base    *gomlxmodel.Model
	Policy  *gomlxmodel.Model
	Critic  *gomlxmodel.Critic
	History []StepStats
	Log     []Info
	// LogTask[i] is the index, among its step's episodes (StepBatch.Trajs and Tasks; LogTask[i] / GroupSize is
	// its prompt), of the episode whose terminal info is Log[i]: LogByStep splits both alike. GRPO fills it with LogEpisodes;
	// nil when the run's loop does not.
	LogTask []int
	// Metrics holds the run's own per-step metrics (WithMetric): Metrics[name][k] is step k's value. Nil without
	// any.
	Metrics map[string][]float64
}

// WriteRun writes r without its Base: a gob record of the history and log, then the policy and the optional
// critic, each as a length-prefixed section (their readers may read ahead). ReadRun reads it back exactly.
func WriteRun(w io.Writer, r *Run) error {
	rec, policy, critic := sectionBuffers.Get().(*bytes.Buffer), sectionBuffers.Get().(*bytes.Buffer),
		sectionBuffers.Get().(*bytes.Buffer)
	defer func() {
		for _, b := range []*bytes.Buffer{rec, policy, critic} {
			b.Reset()
			sectionBuffers.Put(b)
		}
	}()
	if err := gob.NewEncoder(rec).Encode(runRecord{r.History, r.Log, r.LogTask, r.Critic != nil, metricSeries(r.Metrics)}); err != nil {
		return err
	}
	if _, err := r.Policy.WriteTo(policy); err != nil {
		return err
	}
	if r.Critic != nil {
		if _, err := r.Critic.WriteTo(critic); err != nil {
			return err
		}
	}
	for _, section := range [][]byte{rec.Bytes(), policy.Bytes(), critic.Bytes()} {
		if err := binary.Write(w, binary.LittleEndian, uint64(len(section))); err != nil {
			return err
		}
		if _, err := w.Write(section); err != nil {
			return err
		}
	}
	return nil
}

// ReadRun reads a run that WriteRun wrote, its policy and critic computing on eng.
func ReadRun(eng *gomlxmodel.Engine, rd io.Reader) (*Run, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	sections := make([][]byte, 3)
	for i := range sections {
		if len(data) < 8 {
			return nil, fmt.Errorf("run section %d: truncated", i)
		}
		n := binary.LittleEndian.Uint64(data)
		if n > uint64(len(data)-8) {
			return nil, fmt.Errorf("run section %d: %d bytes, %d left", i, n, len(data)-8)
		}
		sections[i], data = data[8:8+n], data[8+n:]
	}
	var rec runRecord
	if err := gob.NewDecoder(bytes.NewReader(sections[0])).Decode(&rec); err != nil {
		return nil, err
	}
	policy, err := gomlxmodel.ReadModel(eng, bytes.NewReader(sections[1]))
	if err != nil {
		return nil, err
	}
	run := &Run{Policy: policy, History: rec.History, Log: rec.Log, LogTask: rec.LogTask}
	for _, m := range rec.Metrics {
		if run.Metrics == nil {
			run.Metrics = make(map[string][]float64, len(rec.Metrics))
		}
		run.Metrics[m.Name] = m.Values
	}
	if rec.HasCritic {
		if run.Critic, err = gomlxmodel.ReadCritic(eng, bytes.NewReader(sections[2])); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// sectionBuffers keeps the buffers of WriteRun's sections between encodings: a resumable run encodes its state
// after every step, and a model's section is megabytes.
var sectionBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

type runRecord struct {
	History   []StepStats
	Log       []Info
	LogTask   []int
	HasCritic bool
	Metrics   []series // by name; none for a run without metrics
}

// series is one of a Run's metrics, as WriteRun writes it.
type series struct {
	Name   string
	Values []float64
}

// metricSeries is m sorted by name, so that equal runs encode to equal bytes (gob writes a map in its random
// iteration order).
func metricSeries(m map[string][]float64) []series {
	out := make([]series, 0, len(m))
	for name, v := range m {
		out = append(out, series{name, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
